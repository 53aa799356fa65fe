// `waitpath analyze --timeline` end to end on generated traces: the file keeps to the
// trace-event format, and its state slices reproduce each watched task's breakdown (the
// generator's truth on one host, the analysis' own records on several).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/e2e/cli_test_util.h"
#include "tests/e2e/record_checks.h"
#include "tests/e2e/trace_event_checks.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using TaskKey = std::pair<std::string, int64_t>;  // host, tid
using States = std::map<std::string, int64_t>;

int64_t Ns(const json& us) {
  return std::llround(us.get<double>() * 1000);
}

struct Timeline {
  json trace;
  std::map<TaskKey, States> states;  // per watched task: ns per state, from its state slices
  int waits = 0, wake_flows = 0, packet_flows = 0, interrupt_flows = 0, cpu_slices = 0,
      interrupt_slices = 0;
  double end_us = 0;  // of the last slice
};

Timeline Read(const fs::path& file) {
  Timeline t;
  t.trace = json::parse(std::ifstream(file));
  std::map<int64_t, std::string> hosts;  // pid -> host
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") hosts[e["pid"]] = e["args"]["name"];
  }
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "s") {
      ++(e["name"] == "packet" ? t.packet_flows : t.wake_flows);
      // From a CPU's interrupts track (odd ids above 2^23): a timer or disk wake-up.
      const int64_t tid = e["tid"];
      if (tid >= (int64_t{1} << 23) && tid % 2 == 1) ++t.interrupt_flows;
    }
    if (e["ph"] != "X") continue;
    t.end_us = std::max(t.end_us, e["ts"].get<double>() + e["dur"].get<double>());
    if (e["cat"] == "state") {
      t.states[{hosts[e["pid"]], e["tid"]}][e["args"]["state"]] += Ns(e["dur"]);
    } else if (e["cat"] == "wait") {
      ++t.waits;
    } else if (e["cat"] == "cpu") {
      ++t.cpu_slices;
    } else if (e["cat"] == "interrupt") {
      ++t.interrupt_slices;
    }
  }
  return t;
}

class TimelineCliTest : public ::testing::Test {
 protected:
  fs::path Generate(const std::string& scenario, const std::string& extra = "") {
    dirs_.push_back(GenerateScenario(scenario, extra, "waitpath-timeline-"));
    return dirs_.back();
  }
  void TearDown() override {
    for (const auto& d : dirs_) fs::remove_all(d);
  }
  std::vector<fs::path> dirs_;
};

// One host: the slices of each watched task sum, state by state, to the truth's breakdown.
TEST_F(TimelineCliTest, StateSlicesReproduceTheTruthOnOneHost) {
  for (const char* scenario : {"mutex-convoy", "cpu-contention", "fork-chain"}) {
    SCOPED_TRACE(scenario);
    const fs::path dir = Generate(scenario);
    const fs::path file = dir / "timeline.json";
    CommandResult r =
        RunWaitpath("analyze --json --timeline " + file.string() + " " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Timeline t = Read(file);
    EXPECT_EQ(CheckTraceEventFormat(t.trace), 0);
    EXPECT_GT(t.cpu_slices, 0);
    EXPECT_GT(t.waits, 0);  // those of at least 1 ms, without --min-wait
    if (std::string(scenario) == "mutex-convoy") {
      EXPECT_GT(t.wake_flows, 0);
      EXPECT_GT(t.interrupt_flows, 0);  // its sleeps end in an hrtimer
    }
    const json truth = json::parse(std::ifstream(dir / "truth.json"));
    ASSERT_FALSE(truth["tasks"].empty());
    for (const auto& task : truth["tasks"]) {
      SCOPED_TRACE(task["comm"].get<std::string>());
      auto it = t.states.find({task["host"], task["tid"]});
      ASSERT_NE(it, t.states.end());
      for (const char* leaf : kLeaves) {
        const int64_t want = task["breakdown_ns"][leaf];
        EXPECT_EQ(it->second.count(leaf) ? it->second.at(leaf) : 0, want) << leaf;
      }
    }
  }
}

// Several hosts on the reference clock: the slices equal the analysis' task records, waits are
// drawn, and packets are arrows from the sender's host.
TEST_F(TimelineCliTest, SeveralHostsDrawPacketsAndReproduceTheRecords) {
  const fs::path dir = Generate("three-tier");
  const fs::path file = dir / "timeline.json";
  CommandResult r =
      RunWaitpath("analyze --json --min-wait 1ms --timeline " + file.string() + " " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Timeline t = Read(file);
  EXPECT_EQ(CheckTraceEventFormat(t.trace), 0);
  int tasks = 0, wait_records = 0;
  for (const json& rec : JsonLines(r.out)) {
    if (rec["type"] == "wait") ++wait_records;
    if (rec["type"] != "task") continue;
    ++tasks;
    SCOPED_TRACE(rec["comm"].get<std::string>());
    auto it = t.states.find({rec["host"], rec["tid"]});
    ASSERT_NE(it, t.states.end());
    for (const char* leaf : kLeaves) {
      const int64_t want = rec["breakdown_ns"][leaf];
      EXPECT_EQ(it->second.count(leaf) ? it->second.at(leaf) : 0, want) << leaf;
    }
  }
  EXPECT_GT(tasks, 2);
  EXPECT_EQ(t.waits, wait_records);  // the reported waits, each a slice
  EXPECT_GT(t.packet_flows, 0);      // (every hand-over of this scenario is a packet)
  EXPECT_GT(t.interrupt_slices, 0);
  std::set<std::string> processes;
  for (const auto& e : t.trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"]);
  }
  EXPECT_EQ(processes.size(), 3u);  // one per host
}

TEST_F(TimelineCliTest, AWindowBoundsTheFile) {
  const fs::path dir = Generate("mutex-convoy");
  const fs::path whole = dir / "whole.json", part = dir / "part.json";
  ASSERT_EQ(RunWaitpath("analyze --timeline " + whole.string() + " " + dir.string()).exit_code, 0);
  CommandResult r =
      RunWaitpath("analyze --timeline " + part.string() + " --from 20ms --to 40ms " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Timeline t = Read(part);
  EXPECT_EQ(CheckTraceEventFormat(t.trace), 0);
  EXPECT_LE(t.end_us, 20000.0);
  for (const auto& [task, states] : t.states) {
    int64_t sum = 0;
    for (const auto& [state, ns] : states) sum += ns;
    EXPECT_LE(sum, 20'000'000) << task.first << "/" << task.second;
  }
  EXPECT_LT(fs::file_size(part), fs::file_size(whole));
  // Absolute bounds (ns since the epoch) give the same window.
  const int64_t origin = std::stoll(t.trace["otherData"]["origin_ns"].get<std::string>());
  const fs::path same = dir / "same.json";
  ASSERT_EQ(
      RunWaitpath("analyze --timeline " + same.string() + " --from " + std::to_string(origin) +
                  " --to " + std::to_string(origin + 20'000'000) + " " + dir.string())
          .exit_code,
      0);
  EXPECT_EQ(Read(same).states, t.states);
}

TEST_F(TimelineCliTest, OverTheCapIsOneLineAndNoFile) {
  // About 7 MB of timeline: 100,000 events a second for half a second.
  const fs::path dir = Generate("scale",
                                "--set duration=500ms --set scale.event_rate=100000 "
                                "--set scale.hosts=1");
  const fs::path file = dir / "timeline.json";
  CommandResult r =
      RunWaitpath("analyze --timeline " + file.string() + " --timeline-max-mb 1 " + dir.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--timeline-max-mb 1"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".part"));
}

TEST_F(TimelineCliTest, BadBoundsAreUsageErrors) {
  const fs::path dir = Generate("fork-chain");
  EXPECT_EQ(RunWaitpath("analyze --from 1s " + dir.string()).exit_code, 2);
  CommandResult r = RunWaitpath("analyze --timeline /tmp/x.json --from soon " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--from: 'soon'"), std::string::npos) << r.err;
  EXPECT_EQ(
      RunWaitpath("analyze --timeline /tmp/x.json --from 2s --to 1s " + dir.string()).exit_code, 2);
}

}  // namespace
}  // namespace waitpath::testing
