// Application spans end to end (docs/requests.md): `waitpath analyze` on the generator's span
// scenarios against their truth, and the span flags of `tail`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/e2e/cli_test_util.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::map<std::string, json> SpansById(const std::vector<json>& records) {
  std::map<std::string, json> out;
  for (const auto& r : records) {
    if (r["type"] == "span") out[r["span_id"]] = r;
  }
  return out;
}

const json* Find(const std::vector<json>& records, const std::string& type) {
  for (const auto& r : records) {
    if (r["type"] == type) return &r;
  }
  return nullptr;
}

int64_t Sum(const json& states) {
  int64_t n = 0;
  for (const auto& [k, v] : states.items()) n += v.get<int64_t>();
  return n;
}

class SpanScenarioTest : public ::testing::Test {
 protected:
  fs::path Generate(const std::string& scenario) {
    dir_ = GenerateScenario(scenario, "", "waitpath-spans-");
    return dir_;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// One host: every span's breakdown, by_task and blocked_by equal the truth to the nanosecond,
// across the handoff from acceptor to worker and the nested db span.
TEST_F(SpanScenarioTest, SingleHostSpansEqualTruthExactly) {
  const fs::path dir = Generate("requests");
  ASSERT_TRUE(fs::exists(dir / "shop-ust" / "metadata"));
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  CommandResult r = RunWaitpath("analyze --json --top 100000 " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = JsonLines(r.out);
  const auto spans = SpansById(records);
  ASSERT_GE(truth["spans"].size(), 40u);
  EXPECT_EQ(spans.size(), truth["spans"].size());
  int handoffs = 0, blocked = 0;
  for (const auto& t : truth["spans"]) {
    SCOPED_TRACE(t.dump());
    const auto it = spans.find(t["span_id"]);
    ASSERT_NE(it, spans.end());
    const json& got = it->second;
    EXPECT_EQ(got["name"], t["name"]);
    EXPECT_EQ(got["trace_id"], t["trace_id"]);
    EXPECT_EQ(got["parent"], t["parent"]);
    EXPECT_EQ(got["tid"], t["tid"]);
    EXPECT_EQ(got["handoffs"], t["handoffs"]);
    EXPECT_EQ(got["start_ns"], t["start_ns"]);
    EXPECT_EQ(got["end_ns"], t["end_ns"]);
    EXPECT_EQ(got["breakdown_ns"], t["breakdown_ns"]);
    EXPECT_EQ(Sum(got["breakdown_ns"]), got["duration_ns"].get<int64_t>());
    std::map<int, int64_t> want, have;
    for (const auto& b : t["by_task"]) want[b["tid"]] += b["ns"].get<int64_t>();
    for (const auto& b : got["by_task"]) have[b["tid"]] += b["ns"].get<int64_t>();
    EXPECT_EQ(have, want);
    std::map<std::string, int64_t> want_b, have_b;
    for (const auto& b : t["blocked_by"]) want_b[b["span_id"]] = b["ns"];
    for (const auto& b : got["blocked_by"]) have_b[b["span_id"]] = b["ns"];
    EXPECT_EQ(have_b, want_b);
    handoffs += t["handoffs"].get<int>();
    blocked += !want_b.empty();
  }
  EXPECT_GT(handoffs, 10);  // the scenario exercises what it says
  EXPECT_GT(blocked, 10);
  const json* input = Find(records, "span_input");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ((*input)["unmatched_ends"], 0);
  EXPECT_EQ((*input)["unmatched_handoffs"], 0);
  EXPECT_EQ((*input)["ended"], truth["spans"].size());
  // Idle time of the threads that carry spans, exact too.
  std::map<int, json> idle;
  for (const auto& rec : records) {
    if (rec["type"] == "span_idle") idle[rec["tid"]] = rec["breakdown_ns"];
  }
  ASSERT_FALSE(truth["span_idle"].empty());
  EXPECT_EQ(idle.size(), truth["span_idle"].size());
  for (const auto& t : truth["span_idle"]) {
    EXPECT_EQ(idle[t["tid"].get<int>()], t["breakdown_ns"]) << t["task"];
  }
  EXPECT_NE(Find(records, "operation"), nullptr);
}

// Two hosts synchronized from their packets: times move by at most the clock accuracy, so
// each state of a span by a few times it (each wire crossing moves one boundary).
TEST_F(SpanScenarioTest, CrossHostSpansMatchTruthWithinSyncAccuracy) {
  const fs::path dir = Generate("requests-rpc");
  const json truth = json::parse(std::ifstream(dir / "truth.json"));
  // Hosts are found in directory order ("back" first): times in the truth's reference clock.
  CommandResult r = RunWaitpath("analyze --json --top 100000 --reference " +
                                truth["reference_host"].get<std::string>() + " " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = JsonLines(r.out);
  std::map<std::string, double> accuracy;
  for (const auto& c : records) {
    if (c["type"] == "clock") accuracy[c["host"]] = c["accuracy"];
  }
  const auto spans = SpansById(records);
  ASSERT_GE(truth["spans"].size(), 20u);
  EXPECT_EQ(spans.size(), truth["spans"].size());
  int blocked = 0;
  for (const auto& t : truth["spans"]) {
    SCOPED_TRACE(t.dump());
    const auto it = spans.find(t["span_id"]);
    ASSERT_NE(it, spans.end());
    const json& got = it->second;
    const double acc = accuracy.at(t["host"]) + 1;
    EXPECT_LE(std::abs(got["start_ns"].get<double>() - t["start_ns"].get<double>()), acc);
    EXPECT_LE(std::abs(got["end_ns"].get<double>() - t["end_ns"].get<double>()), acc);
    EXPECT_EQ(Sum(got["breakdown_ns"]), got["duration_ns"].get<int64_t>());
    double l1 = 0;
    for (const auto& [state, ns] : t["breakdown_ns"].items())
      l1 += std::abs(got["breakdown_ns"][state].get<double>() - ns.get<double>());
    double max_acc = 0;
    for (const auto& [h, a] : accuracy) max_acc = std::max(max_acc, a);
    EXPECT_LE(l1, 8 * max_acc + 100) << got.dump();
    for (const auto& b : t["blocked_by"]) {
      bool found = false;
      for (const auto& g : got["blocked_by"]) {
        if (g["span_id"] == b["span_id"]) {
          found = true;
          EXPECT_LE(std::abs(g["ns"].get<double>() - b["ns"].get<double>()), 4 * max_acc + 100);
        }
      }
      EXPECT_TRUE(found) << b.dump();
      ++blocked;
    }
  }
  EXPECT_GT(blocked, 10);
}

// The request metrics count each span's breakdown: per operation, their sum over states is
// the sum of the spans' durations (idle time is not counted).
TEST_F(SpanScenarioTest, RequestMetricsSumToSpanDurations) {
  const fs::path dir = Generate("requests");
  const fs::path metrics = dir / "metrics.txt";
  CommandResult r =
      RunWaitpath("analyze --json --metrics-file " + metrics.string() + " " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> want;
  for (const auto& rec : JsonLines(r.out)) {
    if (rec["type"] == "span") want[rec["name"]] += rec["duration_ns"].get<double>() * 1e-9;
  }
  std::map<std::string, double> seconds, observed;
  std::ifstream in(metrics);
  const std::regex counter(
      R"re(^waitpath_request_seconds_total\{.*operation="([^"]*)".*\} (\S+))re");
  const std::regex sum(
      R"re(^waitpath_request_duration_seconds_sum\{.*operation="([^"]*)".*\} (\S+))re");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, counter)) seconds[m[1]] += std::stod(m[2]);
    if (std::regex_search(line, m, sum)) observed[m[1]] += std::stod(m[2]);
  }
  ASSERT_EQ(seconds.size(), 3u);  // checkout, db, compact
  for (const auto& [op, s] : want) {
    EXPECT_NEAR(seconds[op], s, 1e-6) << op;
    EXPECT_NEAR(observed[op], s, 1e-6) << op;
  }
}

TEST_F(SpanScenarioTest, TailWritesSpansFilteredByDurationAndOperation) {
  const fs::path dir = Generate("requests");
  CommandResult r =
      RunWaitpath("tail --json --min-span 1ms --operation 'check.*' --watch tid=1 " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto records = JsonLines(r.out);
  int n = 0;
  for (const auto& rec : records) {
    if (rec["type"] != "span") continue;
    EXPECT_EQ(rec["name"], "checkout");
    EXPECT_GE(rec["duration_ns"].get<int64_t>(), 1'000'000);
    ++n;
  }
  EXPECT_GT(n, 0);
  CommandResult bad = RunWaitpath("tail --operation '(' " + dir.string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--operation"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace waitpath::testing
