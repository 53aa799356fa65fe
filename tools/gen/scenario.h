// The scenario model: hosts, their clocks and tasks, the network, loss; loaded from TOML.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/gen/common.h"

namespace waitpath::gen {

struct TaskSpec {
  std::string name;     // unique in the scenario; scripts refer to tasks by it
  std::string comm;     // kernel comm (<= 15 chars), defaults to name
  std::string process;  // name of the task whose pid this thread shares ("" = own process)
  bool forked = false;  // created by another task's "fork" step, absent from the state dump
  bool thread = false;  // a forked task that shares its parent's pid (clone of a thread)
  int tid = 0;          // 0 = assigned by the generator
  int port = 0;         // TCP port when this task is the server side of a connection
  Ns start = 0;         // when a pre-existing task leaves its initial sleep
  std::vector<std::string> script;
};

struct HostSpec {
  std::string name;
  int cpus = 2;
  Ns clock_offset = 0;   // host clock minus reference clock at true time 0
  double drift_ppm = 0;  // host clock rate error
  std::string ip;        // IPv4 dotted quad; defaults to 10.0.0.<index+1>
  // prev_state written for a preempted task: 0 (kernel < 4.14) or 0x100 (4.14+ TASK_REPORT_MAX).
  int64_t preempt_state = 0;
  // Received packets are handled by a per-CPU threaded NAPI poller (`napi/eth0-N`, a task)
  // after a short hard irq, instead of in NET_RX softirq context.
  bool threaded_rx = false;
  std::vector<TaskSpec> tasks;
};

struct NetworkSpec {
  DurationRange latency{80 * kUs, 120 * kUs};  // one-way wire + stack latency
  double gbps = 1.0;                           // serialization delay per byte
  int mss = 1448;
  bool acks = true;  // receivers answer each message with a pure ACK (more sync points)
};

struct LossSpec {
  std::string host;  // "" = no loss
  int cpu = 0;
  double share = 0;  // share of that CPU's events to drop, in whole chunks
  int chunk = 64;    // consecutive events lost together (one ring-buffer sub-buffer)
};

struct Scenario {
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Ns duration = 1 * kSec;
  int64_t epoch_ns = 1700000000000000000;  // reference clock at true time 0
  Ns slice = 3 * kMs;
  Ns truth_retention = 0;  // > 0: truth.json is what an analysis keeping that much history says
  std::vector<std::string> watch;  // task names; empty = every non-idle task
  std::vector<HostSpec> hosts;
  NetworkSpec network;
  LossSpec loss;
  // "scale" scenarios: parameters for the generated workload (events per second, all hosts).
  bool is_scale = false;
  int scale_hosts = 4;
  int scale_tasks_per_host = 8;
  int scale_cpus = 4;
  double scale_event_rate = 1e6;
};

// Loads a scenario file, applying "--set key=value" overrides (dotted TOML paths, array
// indices as numbers: "hosts.1.drift_ppm=40") and an optional seed override.
class ScenarioLoader {
 public:
  static Scenario Load(const std::string& path, const std::vector<std::string>& overrides,
                       const uint64_t* seed_override);
  static Scenario LoadFromString(const std::string& toml_text,
                                 const std::vector<std::string>& overrides,
                                 const uint64_t* seed_override);
};

// Builds the hosts and tasks of a "scale" scenario; `cycle` is each task's loop period,
// which ScaleCalibrator tunes to reach the target event rate.
class ScaleWorkloadBuilder {
 public:
  static void Build(Scenario& scenario, Ns cycle);
};

}  // namespace waitpath::gen
