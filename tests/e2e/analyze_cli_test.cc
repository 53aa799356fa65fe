// `waitpath analyze` end to end: against the generator's truth, the recorded workloads'
// expected findings, and the real traces' invariants.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/e2e/cli_test_util.h"
#include "tests/e2e/record_checks.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> Records(const std::vector<json>& all, const std::string& type) {
  std::vector<json> out;
  for (const auto& r : all) {
    if (r["type"] == type) out.push_back(r);
  }
  return out;
}

class GeneratedScenarioTest : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path Generate(const std::string& scenario, const std::string& extra = "") {
    dirs_.push_back(GenerateScenario(scenario, extra, "waitpath-e2e-"));
    return dirs_.back();
  }
  void TearDown() override {
    for (const auto& d : dirs_) fs::remove_all(d);
  }
  std::vector<fs::path> dirs_;
};

// Loss-free single-host scenarios: breakdowns, lifetimes and by_task equal the truth exactly.
TEST_P(GeneratedScenarioTest, AnalysisEqualsTruthExactly) {
  const fs::path dir = Generate(GetParam());
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  CommandResult r = RunWaitpath("analyze --json --top 100000 " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::pair<std::string, int>, json> tasks;
  for (const auto& rec : Records(JsonLines(r.out), "task")) {
    ExpectTaskInvariants(rec, true);
    tasks[{rec["host"], rec["tid"]}] = rec;
  }
  ASSERT_FALSE(truth["tasks"].empty());
  for (const auto& t : truth["tasks"]) {
    SCOPED_TRACE(t["comm"].get<std::string>());
    auto it = tasks.find({t["host"], t["tid"]});
    ASSERT_NE(it, tasks.end());
    const json& got = it->second;
    EXPECT_EQ(got["start_ns"], t["start_ns"]);
    EXPECT_EQ(got["end_ns"], t["end_ns"]);
    for (const char* leaf : kLeaves)
      EXPECT_EQ(got["breakdown_ns"][leaf], t["breakdown_ns"][leaf]) << leaf;
    std::map<int, int64_t> want, have;
    for (const auto& b : t["by_task"]) want[b["tid"]] = b["ns"];
    for (const auto& b : got["by_task"]) have[b["tid"]] = b["ns"];
    EXPECT_EQ(have, want);
  }
}

INSTANTIATE_TEST_SUITE_P(SingleHost, GeneratedScenarioTest,
                         ::testing::Values("fork-chain", "cpu-contention", "mutex-convoy"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST_F(GeneratedScenarioTest, MultiHostScenariosKeepTheInvariants) {
  // Several hosts, synchronized from their packets: the sums and paths are exact.
  for (const char* scenario : {"rpc", "three-tier"}) {
    const fs::path dir = Generate(scenario);
    CommandResult r = RunWaitpath("analyze --json --top 100000 --min-wait 0ns " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto all = JsonLines(r.out);
    const auto tasks = Records(all, "task");
    EXPECT_FALSE(tasks.empty());
    for (const auto& t : tasks) ExpectTaskInvariants(t, true);
    for (const auto& w : Records(all, "wait")) ExpectWaitInvariants(w);
  }
}

// Several hosts in two passes: the analysis reads the batches the sync pass kept, or decodes
// the traces a second time when they do not fit --keep-decoded-mb; the answer is the same
// either way.
TEST_F(GeneratedScenarioTest, KeptOrDecodedAgainTheAnswerIsTheSame) {
  const fs::path dir = Generate("scale",
                                "--set duration=300ms --set scale.hosts=4 --set "
                                "scale.event_rate=200000 --set scale.tasks_per_host=4");
  const std::string args =
      "analyze --sync-passes 2 --json --top 100000 --min-wait 0ns " + dir.string();
  CommandResult kept = RunWaitpath(args);  // ~60k events: kept
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  ASSERT_FALSE(Records(JsonLines(kept.out), "wait").empty());
  for (const char* budget : {"0", "1"}) {  // never kept; kept until the budget ran out
    SCOPED_TRACE(budget);
    CommandResult again = RunWaitpath(args + " --keep-decoded-mb " + budget);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, kept.out);
  }
}

TEST_F(GeneratedScenarioTest, LossBecomesUnknownAndSumsStillHold) {
  const fs::path dir =
      Generate("cpu-contention",
               "--set loss.host=busy --set loss.cpu=0 --set loss.share=0.5 --set loss.chunk=4");
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  ASSERT_GT(truth["hosts"][0]["discarded"].get<int64_t>(), 0);
  CommandResult r = RunWaitpath("analyze --json --top 100000 " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t unknown = 0;
  for (const auto& t : Records(JsonLines(r.out), "task")) {
    ExpectTaskInvariants(t, true);
    unknown += t["breakdown_ns"]["unknown"].get<int64_t>();
  }
  // What the loss hid is reported as unknown, not guessed (docs/reading.md, "Loss and damage").
  EXPECT_GT(unknown, 0);
}

// The recorded real workloads: the findings their expect files state.
TEST(RecordedWorkloadTest, ExpectedFindingsHold) {
  const fs::path dir = fs::path(kFixtures) / "perf";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.path().string().ends_with(".expect.json")) continue;
    const json expect = json::parse(std::ifstream(entry.path()));
    const std::string comm = expect["watch_comm"];
    SCOPED_TRACE(expect["workload"].get<std::string>());
    CommandResult r =
        RunWaitpath("analyze --json --top 100000 --min-wait 1ms --watch comm=" + comm + " " +
                    (dir / expect["trace"].get<std::string>()).string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto all = JsonLines(r.out);
    const auto tasks = Records(all, "task");
    ASSERT_EQ(tasks.size(), 1u) << r.out;
    const json& t = tasks[0];
    ExpectTaskInvariants(t, true);
    for (const auto& w : Records(all, "wait")) ExpectWaitInvariants(w);
    const double life = t["end_ns"].get<double>() - t["start_ns"].get<double>();
    std::map<std::pair<std::string, std::string>, int64_t> groups;  // (comm, state) -> ns
    std::map<std::string, int64_t> states;
    for (const auto& b : t["by_task"]) {
      for (const auto& [state, ns] : b["states"].items()) {
        groups[{b["comm"], state}] += ns.get<int64_t>();
        states[state] += ns.get<int64_t>();
      }
    }
    for (const auto& e : expect["expect"]) {
      const std::string kind = e["kind"], state = e["state"];
      double share = 0;
      if (kind == "state_share") {
        share = states[state] / life;
      } else {
        share = groups[{e["comm"], state}] / life;
        if (kind == "top_blamed_comm") {
          auto top =
              std::max_element(groups.begin(), groups.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
          EXPECT_EQ(top->first, std::make_pair(e["comm"].get<std::string>(), state));
        }
      }
      if (e.contains("min_share")) {
        EXPECT_GE(share, e["min_share"].get<double>()) << e.dump();
      }
      if (e.contains("max_share")) {
        EXPECT_LE(share, e["max_share"].get<double>()) << e.dump();
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

// The real LTTng traces analyse without error and every task's sums hold.
TEST(SharedTraceAnalysisTest, EveryTaskSumsExactly) {
  for (const char* name : {"many-threads", "bug446190", "scp_src", "scp_dest"}) {
    if (!HaveShared(name)) continue;
    SCOPED_TRACE(name);
    CommandResult r =
        RunWaitpath("analyze --json --top 100000 --min-wait 1ms " + kShared + "/" + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto all = JsonLines(r.out);
    const auto tasks = Records(all, "task");
    EXPECT_GT(tasks.size(), 0u);
    for (const auto& t : tasks) ExpectTaskInvariants(t, true);
    for (const auto& w : Records(all, "wait")) ExpectWaitInvariants(w);
  }
}

// No scheduler events (user-space traces): the recorded LTTng 2.16 fixture ust-ctf18 (always)
// and hello-lost (when ../shared/traces is present).
TEST(AnalyzeCliTest, NothingToAnalyseIsAClearError) {
  std::vector<std::string> traces = {kFixtures + "/lttng216/ust-ctf18"};
  if (HaveShared("hello-lost")) traces.push_back(kShared + "/hello-lost");
  for (const std::string& trace : traces) {
    CommandResult r = RunWaitpath("analyze " + trace);
    EXPECT_EQ(r.exit_code, 1) << trace;
    EXPECT_NE(r.err.find("nothing to analyse"), std::string::npos) << r.err;
  }
}

// A selection that matches nothing says so, once, with the names it did see: `comm=wl-rpc`
// matches no name of the RPC recording (its processes are wl-rpc-client and wl-rpc-server).
// Before, nothing was printed and the exit status was 0.
TEST(AnalyzeCliTest, ASelectionThatMatchesNothingSaysSo) {
  const std::string trace = kFixtures + "/perf/rpc";
  CommandResult r = RunWaitpath("analyze --watch comm=wl-rpc " + trace);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("waitpath: --watch 'comm=wl-rpc' matched none of the ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("wl-rpc-client"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("comm=NAME.*"), std::string::npos) << r.err;
  // A selection that matches: not a word of it.
  r = RunWaitpath("analyze --watch comm=wl-rpc.* " + trace);
  EXPECT_EQ(r.err.find("matched none"), std::string::npos) << r.err;
  EXPECT_NE(r.out, "");
}

TEST(AnalyzeCliTest, BadFlagsAreOneLine) {
  for (const char* args : {"analyze --watch nokey /tmp", "analyze --watch 'comm=(' /tmp",
                           "analyze --min-wait 5parsecs /tmp"}) {
    CommandResult r = RunWaitpath(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// Flame-graph stacks and CSV carry every credited task: per watched task their rows sum to its
// breakdown (the JSON record's), state by state; folded and CSV rows are the same rows.
TEST(AnalyzeCliTest, FoldedAndCsvRowsSumToEachTasksBreakdown) {
  const std::string args = " --watch comm=wl-.* " + kFixtures + "/perf/rpc";
  const CommandResult json = RunWaitpath("analyze --json --top 100000" + args);
  const CommandResult csv = RunWaitpath("analyze --format csv" + args);
  const CommandResult folded = RunWaitpath("analyze --format folded" + args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  std::map<std::pair<int64_t, std::string>, int64_t> expected, got;  // (tid, state) -> ns
  for (const auto& t : JsonLines(json.out)) {
    if (t["type"] != "task") continue;
    for (const auto& [state, ns] : t["breakdown_ns"].items()) {
      if (ns.get<int64_t>() != 0) expected[{t["tid"].get<int64_t>(), state}] += ns.get<int64_t>();
    }
  }
  std::istringstream rows(csv.out);
  std::string line;
  ASSERT_TRUE(std::getline(rows, line));
  EXPECT_EQ(line, "host,tid,pid,comm,credited_host,credited_tid,credited_comm,state,ns");
  size_t n = 0;
  while (std::getline(rows, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 9u) << line;
    got[{std::stoll(f[1]), f[7]}] += std::stoll(f[8]);
    ++n;
  }
  EXPECT_EQ(got, expected);
  EXPECT_GT(n, 0u);
  size_t folded_lines = 0;
  std::istringstream stacks(folded.out);
  while (std::getline(stacks, line)) {
    ++folded_lines;
    EXPECT_EQ(std::count(line.begin(), line.end(), ';'), 2) << line;
    EXPECT_EQ(std::count(line.begin(), line.end(), ' '), 1) << line;
  }
  EXPECT_EQ(folded_lines, n);
  EXPECT_EQ(RunWaitpath("analyze --format folded --min-wait 1ms" + args).exit_code, 2);
}

// What can be read is reported beside a path that cannot (the README's exit status 1): it
// exited 1 with no report at all.
TEST(AnalyzeCliTest, WhatCanBeReadIsReportedBesideAMissingPath) {
  const std::string rpc = kFixtures + "/perf/rpc";
  const CommandResult alone = RunWaitpath("analyze --json " + rpc);
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const CommandResult r = RunWaitpath("analyze --json " + rpc + " /nonexistent");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "waitpath: /nonexistent: no such file or directory\n");
  EXPECT_EQ(r.out, alone.out);
  const CommandResult stats = RunWaitpath("stats --json /nonexistent " + rpc);
  EXPECT_EQ(stats.exit_code, 1);
  EXPECT_EQ(JsonLines(stats.out).size(), 1u);
  // Nothing readable: one line naming each path, nothing reported.
  const CommandResult none = RunWaitpath("analyze /nonexistent /nope");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err,
            "waitpath: /nonexistent: no such file or directory; /nope: no such file or "
            "directory\n");
}

}  // namespace
}  // namespace waitpath::testing
