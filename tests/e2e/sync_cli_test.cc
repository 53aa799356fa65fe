// `waitpath sync` and multi-host `analyze` end to end: against the generator's true clocks
// and breakdowns, on the real two-VM scp traces, and with one host's input arriving late.
#include <gtest/gtest.h>

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
    GTEST_SKIP() << "../shared/traces not present";
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

// --reference picks the host whose clock the others map to; an unknown one is one line.
TEST(ScpSyncTest, ReferenceChoosesTheClockAndAnUnknownOneIsAnError) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest"))
    GTEST_SKIP() << "../shared/traces not present";
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
