// Eviction never corrupts an answer: on every real trace and recorded workload, at every
// retention and history cap, each task's and wait's breakdown sums to its interval with no
// negative state, by_task sums to the life, the metrics never count a negative amount and
// equal analyze's totals; and on generated long sleepers the answer equals the truth for that
// retention exactly (docs/architecture.md, "Eviction").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/e2e/cli_test_util.h"
#include "tests/e2e/record_checks.h"
#include "tests/metrics/metrics_test_util.h"

namespace waitpath::testing {
namespace {

using nlohmann::json;

struct Totals {
  int tasks = 0, waits = 0;
  std::map<std::pair<std::string, std::string>, int64_t> by_comm_state;  // (comm, state)
};

// Checks every record of analyze --json --top 100000 --min-wait 0ns; returns per-state sums.
Totals CheckRecords(const std::string& out) {
  Totals t;
  for (const json& r : JsonLines(out)) {
    if (r["type"] == "task") {
      ++t.tasks;
      ExpectTaskInvariants(r, true);
      for (const auto& [state, ns] : r["breakdown_ns"].items())
        t.by_comm_state[{r["comm"], state}] += ns.get<int64_t>();
    } else if (r["type"] == "wait") {  // not clock records
      ++t.waits;
      ExpectWaitInvariants(r);
    }
    if (::testing::Test::HasFailure()) break;  // one broken record says enough
  }
  return t;
}

// The metrics of the same run: no negative sample of a counter; the active-path counters per
// (process, state) equal analyze's task totals (to float rounding), and the blame family
// splits the same time.
void CheckMetrics(const fs::path& prom, const Totals& totals) {
  std::map<std::pair<std::string, std::string>, double> seconds, blame;
  for (Sample& s : ParseExposition(ReadFile(prom))) {
    if (s.name.ends_with("_total")) {
      EXPECT_GE(s.value, 0) << s.name;
    }
    const std::pair<std::string, std::string> key{s.labels["process"], s.labels["state"]};
    if (s.name == "waitpath_active_path_seconds_total") seconds[key] += s.value;
    if (s.name == "waitpath_active_path_blame_seconds_total") blame[key] += s.value;
  }
  double want_total = 0, got_total = 0, blame_total = 0;
  for (const auto& [key, ns] : totals.by_comm_state) want_total += ns * 1e-9;
  for (const auto& [key, v] : seconds) got_total += v;
  for (const auto& [key, v] : blame) blame_total += v;
  EXPECT_NEAR(got_total, want_total, 1e-6 + 1e-9 * want_total);
  EXPECT_NEAR(blame_total, want_total, 1e-6 + 1e-9 * want_total);
}

struct Input {
  std::string name;
  std::vector<std::string> traces;  // relative to the shared traces or the fixtures
  bool shared;
  friend void PrintTo(const Input& in, std::ostream* os) { *os << in.name; }
};

class EvictionPropertyTest : public ::testing::TestWithParam<Input> {};

TEST_P(EvictionPropertyTest, InvariantsHoldAtEveryRetentionAndCap) {
  const Input& in = GetParam();
  std::string paths;
  for (const std::string& t : in.traces) {
    const std::string p = in.shared ? kShared + "/" + t : kFixtures + "/perf/" + t;
    if (!fs::exists(p + "/metadata"))
      GTEST_SKIP() << "needs ../shared/traces/" << t
                   << " (the research traces; see docs/testing.md)";
    paths += " " + p;
  }
  const fs::path prom =
      fs::temp_directory_path() / ("waitpath-evict-" + std::to_string(::getpid()) + ".prom");
  for (const char* retention : {"10ms", "100ms", "1s", ""}) {
    for (const char* cap : {"", "1"}) {
      const std::string args = std::string("analyze --json --top 100000 --min-wait 0ns") +
                               (*retention ? std::string(" --retention ") + retention : "") +
                               (*cap ? std::string(" --max-history-mb ") + cap : "") +
                               " --metrics-file " + prom.string() + paths;
      SCOPED_TRACE(args);
      const CommandResult r = RunWaitpath(args);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const Totals totals = CheckRecords(r.out);
      EXPECT_GT(totals.tasks, 0);
      CheckMetrics(prom, totals);
      if (HasFailure()) break;
    }
    if (HasFailure()) break;
  }
  fs::remove(prom);
}

INSTANTIATE_TEST_SUITE_P(Traces, EvictionPropertyTest,
                         ::testing::Values(Input{"many_threads", {"many-threads"}, true},
                                           Input{"bug446190", {"bug446190"}, true},
                                           Input{"scp", {"scp_src", "scp_dest"}, true},
                                           Input{"perf_rpc", {"rpc"}, false},
                                           Input{"perf_forkchain", {"forkchain"}, false},
                                           Input{"perf_mutex", {"mutex"}, false},
                                           Input{"perf_pipe", {"pipe"}, false},
                                           Input{"perf_diskwrite", {"diskwrite"}, false},
                                           Input{"perf_contention", {"contention"}, false},
                                           Input{"perf_sleeper", {"sleeper"}, false}),
                         [](const auto& info) { return info.param.name; });

class GeneratedEvictionTest : public ::testing::Test {
 protected:
  fs::path Generate(const std::string& scenario, const std::string& extra = "") {
    dirs_.push_back(GenerateScenario(scenario, extra, "waitpath-evict-"));
    return dirs_.back();
  }
  void TearDown() override {
    for (const auto& d : dirs_) fs::remove_all(d);
  }
  std::vector<fs::path> dirs_;
};

// Two hours of long sleeps holding a lock and a chain waiting on them, at several retentions:
// exact wherever a wait lies inside the retention, unknown (owned by the waker) exactly for
// the evicted part; the generator computes that truth independently of the engine.
TEST_F(GeneratedEvictionTest, LongSleepersEqualTheTruthAtEveryRetention) {
  for (const char* retention : {"10ms", "100ms", "1s", "30s", "65s", "200s"}) {
    SCOPED_TRACE(retention);
    const fs::path dir =
        Generate("long-sleepers", std::string("--set truth_retention=") + retention);
    const json truth = json::parse(std::ifstream(dir / "truth.json"));
    const CommandResult r = RunWaitpath(std::string("analyze --json --top 100000 --retention ") +
                                        retention + " " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<int, json> got;
    for (const json& rec : JsonLines(r.out)) got[rec["tid"]] = rec;
    int64_t unknown = 0;
    for (const json& t : truth["tasks"]) {
      SCOPED_TRACE(t["comm"].get<std::string>());
      ASSERT_TRUE(got.count(t["tid"]));
      const json& g = got[t["tid"]];
      EXPECT_EQ(g["start_ns"], t["start_ns"]);
      EXPECT_EQ(g["end_ns"], t["end_ns"]);
      for (const char* leaf : kLeaves)
        EXPECT_EQ(g["breakdown_ns"][leaf], t["breakdown_ns"][leaf]) << leaf;
      std::map<int, int64_t> want, have;
      for (const auto& b : t["by_task"]) want[b["tid"]] = b["ns"];
      for (const auto& b : g["by_task"]) have[b["tid"]] = b["ns"];
      EXPECT_EQ(have, want);
      unknown += t["breakdown_ns"]["unknown"].get<int64_t>();
    }
    // The chain's waits are 60-100 s long: below that retention some of them is evicted.
    if (std::string(retention) != "200s") {
      EXPECT_GT(unknown, 0);
    } else {
      EXPECT_EQ(unknown, 0);
    }
  }
}

// Several hosts and a retention shorter than most waits: the invariants hold across hosts.
TEST_F(GeneratedEvictionTest, MultiHostInvariantsAtShortRetention) {
  const fs::path dir = Generate("three-tier", "");
  for (const char* retention : {"1ms", "10ms", "100ms"}) {
    SCOPED_TRACE(retention);
    const fs::path prom = dir / "out.prom";
    const CommandResult r =
        RunWaitpath(std::string("analyze --json --top 100000 --min-wait 0ns --retention ") +
                    retention + " --metrics-file " + prom.string() + " " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Totals totals = CheckRecords(r.out);
    EXPECT_GT(totals.waits, 0);
    CheckMetrics(prom, totals);
  }
}

}  // namespace
}  // namespace waitpath::testing
