// `waitpath sync` and multi-host `analyze` end to end: against the generator's true clocks
// and breakdowns, on the real two-VM scp traces, and with one host's input arriving late.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/e2e/cli_test_util.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path Generate(const std::string& scenario) {
  const fs::path out =
      fs::temp_directory_path() / ("waitpath-sync-" + scenario + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string cmd = std::string(WAITPATH_GEN) + " --scenario " + WAITPATH_SCENARIOS + "/" +
                          scenario + ".toml --out " + out.string() + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return out;
}

std::map<std::string, json> ByHost(const std::vector<json>& records, const std::string& type) {
  std::map<std::string, json> out;
  for (const auto& r : records) {
    if (r["type"] == type) out[r["host"]] = r;
  }
  return out;
}

class GeneratedSyncTest : public ::testing::TestWithParam<std::string> {};

// The largest accuracy a host's `clock` records state (one pass prints the transforms at the
// end of its bootstrap, then the final ones; every event was mapped with one of a sequence
// that ends there).
std::map<std::string, double> WorstAccuracy(const std::vector<json>& records) {
  std::map<std::string, double> out;
  for (const auto& r : records) {
    if (r["type"] != "clock") continue;
    double& a = out[r["host"]];
    a = std::max(a, r["accuracy"].get<double>());
  }
  return out;
}

// One pass against two passes on the same traces. Each run maps a host's events with
// transforms that are within their stated accuracy of the true clock, so a time moves by at
// most the sum of the two runs' accuracies for its host: lifetimes within that; a task's
// states (whose boundaries may come from the clocks of the hosts on its path) within 0.1 %
// of its life plus twice the worst sum over hosts; the same tasks and the same remote hosts
// on each path.
void ExpectOnePassWithinAccuracyOfTwo(const std::string& one_out, const std::string& two_out) {
  const auto one = JsonLines(one_out), two = JsonLines(two_out);
  const auto acc_one = WorstAccuracy(one), acc_two = WorstAccuracy(two);
  ASSERT_EQ(acc_one.size(), acc_two.size());
  double worst = 0;
  for (const auto& [host, a] : acc_one) worst = std::max(worst, a + acc_two.at(host));
  std::map<std::pair<std::string, int>, json> tasks_one;
  for (const auto& r : one) {
    if (r["type"] == "task") tasks_one[{r["host"], r["tid"]}] = r;
  }
  size_t compared = 0;
  for (const auto& t : two) {
    if (t["type"] != "task") continue;
    SCOPED_TRACE(t.dump());
    const auto it = tasks_one.find({t["host"], t["tid"]});
    ASSERT_NE(it, tasks_one.end());
    const json& got = it->second;
    const double tolerance = acc_one.at(t["host"]) + acc_two.at(t["host"]) + 1;
    EXPECT_LE(std::abs(got["start_ns"].get<double>() - t["start_ns"].get<double>()), tolerance);
    EXPECT_LE(std::abs(got["end_ns"].get<double>() - t["end_ns"].get<double>()), tolerance);
    const double life = t["end_ns"].get<double>() - t["start_ns"].get<double>();
    double l1 = 0;
    for (const auto& [state, ns] : t["breakdown_ns"].items())
      l1 += std::abs(got["breakdown_ns"][state].get<double>() - ns.get<double>());
    EXPECT_LE(l1, 0.001 * life + 2 * worst) << got.dump();
    std::set<std::string> hosts_one, hosts_two;
    for (const auto& b : got["by_task"]) hosts_one.insert(b["host"]);
    for (const auto& b : t["by_task"]) hosts_two.insert(b["host"]);
    EXPECT_EQ(hosts_one, hosts_two);
    ++compared;
  }
  EXPECT_EQ(compared, tasks_one.size());
  EXPECT_GT(compared, 0u);
}

// The recovered transform is within its accuracy bound of the truth over the whole trace,
// and no matched message is received before it was sent.
TEST_P(GeneratedSyncTest, TransformWithinAccuracyOfTruthAndNoInversion) {
  const fs::path dir = Generate(GetParam());
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  CommandResult sync = RunWaitpath("sync --json " + dir.string());
  ASSERT_EQ(sync.exit_code, 0) << sync.err;
  const auto records = JsonLines(sync.out);
  const auto clocks = ByHost(records, "clock");
  const auto stats = ByHost(JsonLines(RunWaitpath("stats --json " + dir.string()).out), "stats");
  const int64_t epoch = truth["epoch_ns"];
  for (const auto& c : truth["clocks"]) {
    const std::string host = c["host"];
    SCOPED_TRACE(host);
    const json& got = clocks.at(host);
    EXPECT_EQ(got["reference"], truth["reference_host"]);
    EXPECT_EQ(got["quality"], "accurate");
    const double accuracy = got["accuracy"];
    const int64_t first = stats.at(host)["first_ns"], last = stats.at(host)["last_ns"];
    for (int i = 0; i <= 10; ++i) {
      const int64_t t = first + (last - first) / 10 * i;
      // Relative to t: a double cannot hold 1.7e18 to the nanosecond.
      const double truth_minus_t =
          static_cast<double>(t - epoch - c["host_offset_ns"].get<int64_t>()) /
              (1.0 + c["drift_ppm"].get<double>() * 1e-6) -
          static_cast<double>(t - epoch);
      const double got_minus_t = (got["slope"].get<double>() - 1.0) * static_cast<double>(t) +
                                 got["offset_ns"].get<double>();
      // 300 ns: what the slope's 17 printed digits can carry at 1.7e18.
      EXPECT_LE(std::abs(got_minus_t - truth_minus_t), accuracy + 300) << "at " << t;
    }
  }
  for (const auto& r : records) {
    if (r["type"] != "sync") continue;
    EXPECT_EQ(r["inversions"], 0);
    EXPECT_EQ(r["matched"], r["sent"]);  // every generated packet is received
  }
  fs::remove_all(dir);
}

// Breakdowns across hosts equal the truth up to the clock error: lifetimes move by at most
// the host's accuracy, and the states of a task differ by at most 0.1 % of its life.
TEST_P(GeneratedSyncTest, CrossHostBreakdownsMatchTruth) {
  const fs::path dir = Generate(GetParam());
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  CommandResult r = RunWaitpath("analyze --json --top 100000 " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = JsonLines(r.out);
  const auto clocks = ByHost(records, "clock");
  std::map<std::pair<std::string, int>, json> tasks;
  for (const auto& rec : records) {
    if (rec["type"] == "task") tasks[{rec["host"], rec["tid"]}] = rec;
  }
  for (const auto& t : truth["tasks"]) {
    SCOPED_TRACE(t["comm"].get<std::string>());
    const json& got = tasks.at({t["host"], t["tid"]});
    const double accuracy = clocks.at(t["host"])["accuracy"];
    EXPECT_LE(std::abs(got["start_ns"].get<double>() - t["start_ns"].get<double>()), accuracy + 1);
    EXPECT_LE(std::abs(got["end_ns"].get<double>() - t["end_ns"].get<double>()), accuracy + 1);
    const double life = t["end_ns"].get<double>() - t["start_ns"].get<double>();
    double l1 = 0;
    for (const auto& [state, ns] : t["breakdown_ns"].items()) {
      l1 += std::abs(got["breakdown_ns"][state].get<double>() - ns.get<double>());
    }
    EXPECT_LE(l1, 0.001 * life) << got.dump();
    // The remote work shows on the path: the tasks of the other hosts are in by_task.
    std::set<std::string> hosts_on_path;
    for (const auto& b : got["by_task"]) hosts_on_path.insert(b["host"]);
    std::set<std::string> truth_hosts;
    for (const auto& b : t["by_task"]) truth_hosts.insert(b["host"]);
    EXPECT_EQ(hosts_on_path, truth_hosts);
  }
  fs::remove_all(dir);
}

// One host's batches arrive late: the merged order, and so the output, do not change.
TEST_P(GeneratedSyncTest, SkewedArrivalGivesIdenticalResults) {
  const fs::path dir = Generate(GetParam());
  CommandResult normal = RunWaitpath("analyze --json --top 100000 --min-wait 0ns " + dir.string());
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  const std::string slow_host = truth["hosts"][1]["host"];
  CommandResult skewed = RunWaitpath("analyze --json --top 100000 --min-wait 0ns " + dir.string(),
                                     "WAITPATH_TEST_SLOW_HOST=" + slow_host + ":30");
  ASSERT_EQ(normal.exit_code, 0);
  ASSERT_EQ(skewed.exit_code, 0);
  EXPECT_EQ(skewed.out, normal.out);
  fs::remove_all(dir);
}

// Packets received by threaded NAPI pollers (task context): the waits they end are network,
// never the poller's own work (docs/analyze.md).
TEST_P(GeneratedSyncTest, InterruptThreadsAreNeverOnThePath) {
  const fs::path dir = Generate(GetParam());
  CommandResult r = RunWaitpath("analyze --json --top 100000 --min-wait 0ns " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& rec : JsonLines(r.out)) {
    if (rec["type"] != "task" && rec["type"] != "wait") continue;
    if (rec["comm"].get<std::string>().starts_with("napi/")) continue;  // the pollers' own waits
    if (rec["type"] == "task") {
      for (const auto& b : rec["by_task"])
        EXPECT_FALSE(b["comm"].get<std::string>().starts_with("napi/")) << rec.dump();
    } else if (rec["type"] == "wait") {
      for (const auto& p : rec["path"])
        EXPECT_FALSE(p["comm"].get<std::string>().starts_with("napi/")) << rec.dump();
    }
  }
  fs::remove_all(dir);
}

// The default single read against the two-pass analysis (--sync-passes 2), also with a held
// budget small enough that events go before the end of the input.
TEST_P(GeneratedSyncTest, OnePassAnswersWithinAccuracyOfTwoPasses) {
  const fs::path dir = Generate(GetParam());
  const std::string args = "analyze --json --top 100000 " + dir.string();
  CommandResult two = RunWaitpath(args + " --sync-passes 2");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  for (const char* extra : {"", " --keep-decoded-mb 1"}) {
    SCOPED_TRACE(extra);
    CommandResult one = RunWaitpath(args + extra);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ExpectOnePassWithinAccuracyOfTwo(one.out, two.out);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GeneratedSyncTest,
                         ::testing::Values("rpc", "three-tier", "rpc-threaded-rx"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The seed paper's scp between two VMs (seed-era inet_sock_local_in/out events).
TEST(ScpSyncTest, PacketsMatchAndTheTransformIsAccurate) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest"))
    GTEST_SKIP()
        << "needs ../shared/traces/scp_src and scp_dest (the research traces; see docs/testing.md)";
  CommandResult r = RunWaitpath("sync --json " + kShared + "/scp_src " + kShared + "/scp_dest");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = JsonLines(r.out);
  const auto clocks = ByHost(records, "clock");
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks.at("VM3")["reference"], "VM1");
  EXPECT_EQ(clocks.at("VM3")["quality"], "accurate");
  EXPECT_GE(clocks.at("VM3")["matches"].get<int>(), 40);
  EXPECT_LT(clocks.at("VM3")["accuracy"].get<double>(), 1e6);  // under a millisecond
  for (const auto& rec : records) {
    if (rec["type"] == "sync") {
      EXPECT_EQ(rec["inversions"], 0);
    }
  }
  CommandResult a =
      RunWaitpath("analyze --json --top 100000 " + kShared + "/scp_src " + kShared + "/scp_dest");
  ASSERT_EQ(a.exit_code, 0) << a.err;
}

TEST(ScpSyncTest, OnePassAnswersWithinAccuracyOfTwoPasses) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest"))
    GTEST_SKIP()
        << "needs ../shared/traces/scp_src and scp_dest (the research traces; see docs/testing.md)";
  const std::string args =
      "analyze --json --top 100000 " + kShared + "/scp_src " + kShared + "/scp_dest";
  CommandResult two = RunWaitpath(args + " --sync-passes 2");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  CommandResult one = RunWaitpath(args);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ExpectOnePassWithinAccuracyOfTwo(one.out, two.out);
}

// --reference picks the host whose clock the others map to; an unknown one is one line.
TEST(ScpSyncTest, ReferenceChoosesTheClockAndAnUnknownOneIsAnError) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest"))
    GTEST_SKIP()
        << "needs ../shared/traces/scp_src and scp_dest (the research traces; see docs/testing.md)";
  const std::string traces = " " + kShared + "/scp_src " + kShared + "/scp_dest";
  CommandResult r = RunWaitpath("sync --json --reference VM3" + traces);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto clocks = ByHost(JsonLines(r.out), "clock");
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks.at("VM1")["reference"], "VM3");
  EXPECT_EQ(clocks.at("VM3")["reference"], "VM3");
  for (const char* command : {"sync", "analyze"}) {
    CommandResult bad = RunWaitpath(std::string(command) + " --reference nosuchhost" + traces);
    EXPECT_EQ(bad.exit_code, 2) << command;
    EXPECT_EQ(bad.err, "waitpath: --reference nosuchhost: no such host in the traces\n") << command;
  }
}

}  // namespace
}  // namespace waitpath::testing

namespace waitpath::testing {
namespace {

// Events lost on the server: its other CPUs' events keep their times (a discarded-events
// report is merged at its own time), packets still pair correctly, the sync stays accurate.
TEST(LossySyncTest, LossDoesNotDisturbTimesOrMatching) {
  const fs::path dir = fs::temp_directory_path() / ("waitpath-lossy-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string cmd =
      std::string(WAITPATH_GEN) + " --scenario " + WAITPATH_SCENARIOS + "/rpc.toml --out " +
      dir.string() +
      " --set loss.host=server-host --set loss.cpu=0 --set loss.share=0.2 --set loss.chunk=50 "
      ">/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto stats = ByHost(JsonLines(RunWaitpath("stats --json " + dir.string()).out), "stats");
  EXPECT_GT(stats.at("server-host")["discarded"].get<int>(), 0);
  for (const auto& [host, s] : stats) EXPECT_EQ(s["regressions"], 0) << host;
  const auto records = JsonLines(RunWaitpath("sync --json " + dir.string()).out);
  EXPECT_EQ(ByHost(records, "clock").at("server-host")["quality"], "accurate");
  for (const auto& r : records) {
    if (r["type"] == "sync") {
      EXPECT_EQ(r["inversions"], 0);
      EXPECT_GT(r["matched"].get<int>(), 0);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace waitpath::testing

namespace waitpath::testing {
namespace {

// Four hosts for 6 s: longer than the 2 s hold, so that one pass releases events while it
// reads, with transforms that still improve afterwards.
fs::path LongerThanTheHold() {
  return GenerateScenario("scale",
                          "--set duration=6s --set scale.hosts=4 --set "
                          "scale.event_rate=20000 --set scale.tasks_per_host=4",
                          "waitpath-onepass-");
}

TEST(OnePassTest, LongerThanTheHoldWithinAccuracyOfTwoPasses) {
  const fs::path dir = LongerThanTheHold();
  const std::string args = "analyze --json --top 100000 " + dir.string();
  CommandResult two = RunWaitpath(args + " --sync-passes 2");
  ASSERT_EQ(two.exit_code, 0) << two.err;
  for (const char* extra : {"", " --keep-decoded-mb 1"}) {
    SCOPED_TRACE(extra);
    CommandResult one = RunWaitpath(args + extra);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    // The transforms improved after the first events went: two sets of clock records.
    const auto records = JsonLines(one.out);
    EXPECT_EQ(std::count_if(records.begin(), records.end(),
                            [](const json& r) { return r["type"] == "clock"; }),
              8);
    ExpectOnePassWithinAccuracyOfTwo(one.out, two.out);
  }
  fs::remove_all(dir);
}

// One pass decides when to release from the traces alone (stream time, decoded sizes): the
// output is byte-identical from run to run, whichever reader runs babeltrace2, whichever host
// is slow, and with a held budget small enough that events go before the end of the input.
TEST(OnePassTest, SameOutputRunToRun) {
  const fs::path dir = LongerThanTheHold();
  for (const char* budget : {"", " --keep-decoded-mb 1"}) {
    SCOPED_TRACE(budget);
    const std::string args = "analyze --json --top 100000 --min-wait 0ns " + dir.string() + budget;
    CommandResult first = RunWaitpath(args);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_FALSE(first.out.empty());
    for (const char* env : {"", "WAITPATH_READER=thread", "WAITPATH_TEST_SLOW_HOST=node01:5"}) {
      SCOPED_TRACE(env);
      CommandResult again = RunWaitpath(args, env);
      ASSERT_EQ(again.exit_code, 0) << again.err;
      EXPECT_EQ(again.out, first.out);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace waitpath::testing
