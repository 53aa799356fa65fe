#include "exporters/span_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr int64_t kRunnable = 0, kSleeping = 1;

// T (tid 10) serves "GET /a" waiting on W (tid 20), which is inside "query" meanwhile.
std::vector<nlohmann::json> Report(SpanReportOptions options) {
  Engine engine;
  const std::vector<std::string> hosts{"web"};
  std::ostringstream out;
  SpanReport report(engine, hosts, options, out);
  engine.SetSpanListener(&report);
  const auto get = static_cast<int32_t>(StringTable::Global().Intern("GET /a"));
  const auto query = static_cast<int32_t>(StringTable::Global().Intern("query"));
  Batch b;
  b.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  b.spans = {SpanIds{1, 2, 0}, SpanIds{1, 2, 0x11}};
  b.events = {SwitchEvent(0, 0, 0, 10, kRunnable),
              SpanEvent(EventKind::kSpanBegin, 100, 0, 10, 0x11, get, 0),
              SwitchEvent(200, 0, 10, 20, kSleeping),
              SpanEvent(EventKind::kSpanBegin, 250, 0, 20, 0x22, query, 1),
              SpanEvent(EventKind::kSpanEnd, 450, 0, 20, 0x22),
              WakeEvent(EventKind::kSchedWaking, 500, 0, 10, 0),
              SwitchEvent(600, 0, 20, 10, kRunnable),
              SpanEvent(EventKind::kSpanEnd, 700, 0, 10, 0x11),
              SpanEvent(EventKind::kSpanEnd, 710, 0, 10, 0x99)};
  engine.Push(b);
  report.Finish();
  std::vector<nlohmann::json> records;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

TEST(SpanReport, JsonRecordPerSpanThenOperationsAndInputCounters) {
  SpanReportOptions o;
  o.json = true;
  const auto r = Report(o);
  ASSERT_EQ(r.size(), 5u);  // 2 spans, 2 operations, span_input
  const auto& get = r[1];
  EXPECT_EQ(get["type"], "span");
  EXPECT_EQ(get["name"], "GET /a");
  EXPECT_EQ(get["trace_id"], "00000000000000010000000000000002");
  EXPECT_EQ(get["span_id"], "0000000000000011");
  EXPECT_TRUE(get["parent"].is_null());
  EXPECT_EQ(get["duration_ns"], 600);
  int64_t sum = 0;
  for (const auto& [k, v] : get["breakdown_ns"].items()) sum += v.get<int64_t>();
  EXPECT_EQ(sum, 600);
  int64_t by_task = 0;
  for (const auto& t : get["by_task"]) by_task += t["ns"].get<int64_t>();
  EXPECT_EQ(by_task, 600);
  ASSERT_EQ(get["blocked_by"].size(), 1u);
  EXPECT_EQ(get["blocked_by"][0]["operation"], "query");
  EXPECT_EQ(get["blocked_by"][0]["ns"], 200);
  EXPECT_EQ(r[0]["parent"], "0000000000000011");
  EXPECT_EQ(r[4]["type"], "span_input");
  EXPECT_EQ(r[4]["unmatched_ends"], 1);
}

TEST(SpanReport, MinSpanAndOperationFilterRecordsNotTheSummary) {
  SpanReportOptions o;
  o.json = true;
  o.operation = "GET .*";
  o.min_span_ns = 500;
  const auto r = Report(o);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0]["name"], "GET /a");
  EXPECT_EQ(r[1]["type"], "operation");
}

// p50/p99 by nearest rank over the operation's spans; their breakdowns summed.
TEST(SpanReport, OperationSummaryHasPercentilesAndSums) {
  Engine engine;
  const std::vector<std::string> hosts{"web"};
  std::ostringstream out;
  SpanReportOptions options;
  options.json = true;
  options.records = false;
  SpanReport report(engine, hosts, options, out);
  engine.SetSpanListener(&report);
  const auto op = static_cast<int32_t>(StringTable::Global().Intern("op"));
  Batch b;
  b.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  b.events = {SwitchEvent(0, 0, 0, 10, kRunnable)};
  int64_t t = 100;
  for (uint64_t i = 1; i <= 5; ++i) {  // durations 100, 200, ..., 500
    b.events.push_back(SpanEvent(EventKind::kSpanBegin, t, 0, 10, i, op));
    t += 100 * static_cast<int64_t>(i);
    b.events.push_back(SpanEvent(EventKind::kSpanEnd, t, 0, 10, i));
    t += 10;
  }
  engine.Push(b);
  report.Finish();
  std::istringstream in(out.str());
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["type"], "operation");
  EXPECT_EQ(j["spans"], 5);
  EXPECT_EQ(j["p50_ns"], 300);
  EXPECT_EQ(j["p99_ns"], 500);
  EXPECT_EQ(j["breakdown_ns"]["running"], 1500);
}

}  // namespace
}  // namespace waitpath
