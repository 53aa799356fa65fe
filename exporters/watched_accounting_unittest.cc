// The accounting with its report over task lifetimes long past the retention: ended tasks are
// reported when their end falls behind the horizon, their Utids reused, and a long-lived task
// that waited on them still names them right.
#include "exporters/watched_accounting.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exporters/analysis_report.h"
#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

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
  batch.events = {SwitchEvent(0, 0, 0, 100, 0, -1, make)};
  engine.Push(batch);
  constexpr int kChildren = 2000;
  int64_t t = 10;
  for (int i = 0; i < kChildren; ++i) {
    const int32_t c = 300 + i % 50;  // tids reused, as the kernel's wrap
    batch.events = {
        ForkEvent(t, 0, 100, c, c, cc),
        SwitchEvent(t + 1, 0, 100, 0, 1, make, -1),  // the parent waits
        SwitchEvent(t + 2, 1, 0, c, 0, -1, cc),
        ProcessEndEvent(EventKind::kProcessExit, t + 300, 1, c),
        WakeEvent(EventKind::kSchedWaking, t + 301, 1, 100, 0, make),  // the child wakes it
        SwitchEvent(t + 302, 1, c, 0, 0x20, cc, -1),
        SwitchEvent(t + 303, 0, 0, 100, 0, -1, make),
        ProcessEndEvent(EventKind::kProcessFree, t + 350, 0, c),
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
