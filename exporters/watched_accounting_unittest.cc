// The accounting with its report over task lifetimes long past the retention: ended tasks are
// reported when their end falls behind the horizon, their Utids reused, and a long-lived task
// that waited on them still names them right.
#include "exporters/watched_accounting.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exporters/analysis_report.h"
#include "live/event_decoder.h"
#include "live/string_table.h"

namespace waitpath {
namespace {

Event Ev(int64_t ts, uint16_t cpu, EventKind kind, int32_t a = 0, int32_t b = 0, int32_t c = -1,
         int32_t d = -1, int64_t x = 0) {
  Event e{};
  e.ts = ts;
  e.cpu = cpu;
  e.kind = kind;
  e.cur_tid = -1;
  e.cur_pid = -1;
  e.a = a;
  e.b = b;
  e.c = c;
  e.d = d;
  e.x = x;
  return e;
}

// A parent (tid 100) forks 2000 children one after the other and waits for each: the child
// runs 300 ns, exits and wakes the parent from its own context. With 1 µs of retention every
// child is reported, dropped and released long before the input ends.
TEST(WatchedAccountingTest, ReleasedTasksAreReportedAndStillNamedWhereCredited) {
  Engine engine(EngineOptions{.retention_ns = 1000});
  std::ostringstream out;
  WatchedAccounting accounting(engine, WatchSet{}, {"h"});
  AnalysisOptions options;
  options.json = true;
  options.top = 100000;
  AnalysisReport report(accounting, options, out);
  engine.SetListener(&accounting);
  const int32_t make = static_cast<int32_t>(StringTable::Global().Intern("make"));
  const int32_t cc = static_cast<int32_t>(StringTable::Global().Intern("cc1"));
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {Ev(0, 0, EventKind::kSchedSwitch, 0, 100, -1, make, 0)};
  engine.Push(batch);
  constexpr int kChildren = 2000;
  int64_t t = 10;
  for (int i = 0; i < kChildren; ++i) {
    const int32_t c = 300 + i % 50;  // tids reused, as the kernel's wrap
    batch.events = {
        Ev(t, 0, EventKind::kProcessFork, 100, c, cc, c),
        Ev(t + 1, 0, EventKind::kSchedSwitch, 100, 0, make, -1, 1),  // the parent waits
        Ev(t + 2, 1, EventKind::kSchedSwitch, 0, c, -1, cc, 0),
        Ev(t + 300, 1, EventKind::kProcessExit, c),
        Ev(t + 301, 1, EventKind::kSchedWaking, 100, 0, make),  // the child wakes it
        Ev(t + 302, 1, EventKind::kSchedSwitch, c, 0, cc, -1, 0x20),
        Ev(t + 303, 0, EventKind::kSchedSwitch, 0, 100, -1, make, 0),
        Ev(t + 350, 0, EventKind::kProcessFree, c),
    };
    engine.Push(batch);
    t += 400;
  }
  accounting.Finish();
  EXPECT_GT(engine.counters().tasks_released, kChildren - 100u);
  EXPECT_LT(engine.tasks().size(), 200u);  // slots reused, not one per child

  std::map<std::string, int> records;
  nlohmann::json parent;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json r = nlohmann::json::parse(line);
    ++records[r["comm"]];
    const int64_t life = r["end_ns"].get<int64_t>() - r["start_ns"].get<int64_t>();
    int64_t sum = 0, by_task = 0;
    for (const auto& [k, v] : r["breakdown_ns"].items()) {
      EXPECT_GE(v.get<int64_t>(), 0);
      sum += v.get<int64_t>();
    }
    for (const auto& b : r["by_task"]) by_task += b["ns"].get<int64_t>();
    EXPECT_EQ(sum, life);
    EXPECT_EQ(by_task, life);
    if (r["comm"] == "make") parent = r;
  }
  EXPECT_EQ(records["cc1"], kChildren);
  EXPECT_EQ(records["make"], 1);
  // The parent's waits went to its children: each credited under its own name and tid.
  ASSERT_FALSE(parent.is_null());
  std::map<int, int64_t> children;
  for (const auto& b : parent["by_task"]) {
    if (b["tid"] == 100) continue;
    EXPECT_EQ(b["comm"], "cc1");
    children[b["tid"]] += b["ns"].get<int64_t>();
  }
  EXPECT_EQ(children.size(), 50u);  // the 50 tids (each several children, credited apart)
  int64_t credited = 0;
  for (const auto& [tid, ns] : children) credited += ns;
  EXPECT_EQ(credited, kChildren * 300);  // each child ran 299 ns... from its fork: 1 + 299
}

}  // namespace
}  // namespace waitpath
