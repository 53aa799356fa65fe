// Discrete-event simulation of several hosts (CPUs, scheduler, timers, disks, NICs, TCP)
// running scenario scripts; produces kernel event records and per-task timelines.
#pragma once

#include <memory>
#include <vector>

#include "tools/gen/scenario.h"
#include "tools/gen/task_timeline.h"
#include "tools/gen/trace_record.h"

namespace waitpath::gen {

struct SimulationResult {
  std::vector<TaskInfo> tasks;          // includes the idle tasks (swapper/N)
  std::vector<TaskTimeline> timelines;  // indexed like tasks
  std::vector<HostTrace> hosts;         // indexed like Scenario::hosts
  std::vector<PacketInfo> packets;
  std::vector<BlockRequest> block_requests;
  std::vector<SpanInfo> spans;
  Ns end = 0;  // true time at which the simulation stopped (scenario duration)
};

class Simulator {
 public:
  explicit Simulator(const Scenario& scenario);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Runs the whole scenario once. Throws std::runtime_error on inconsistent scripts
  // (unknown peer, fork of a task that is not declared forked, ...).
  SimulationResult Run();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace waitpath::gen
