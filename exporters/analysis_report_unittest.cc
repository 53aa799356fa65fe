// The report as a sink of the accounting: task records (text and JSON) and wait records
// (a tree per wait in text, a path in JSON) from a hand-made history.
#include "exporters/analysis_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

// X (10, "client") runs 10 ns, then waits 80 ns for W (20, "server"), which runs 60 and is
// preempted 20 meanwhile, and wakes X; X then runs 10 more. Times in ms so that the text
// output has readable figures.
std::string Report(bool json, int64_t min_wait_ns) {
  constexpr int64_t kMs = 1'000'000;
  Engine engine;
  std::ostringstream out;
  WatchSelector client;
  std::string error;
  EXPECT_TRUE(ParseWatch("comm=client", &client, &error));
  WatchSet watch;
  watch.Add(std::move(client));
  WatchedAccounting accounting(engine, std::move(watch), {"box"});
  AnalysisOptions options;
  options.json = json;
  options.min_wait_ns = min_wait_ns;
  AnalysisReport report(accounting, options, out);
  engine.SetListener(&accounting);
  const int32_t c = static_cast<int32_t>(StringTable::Global().Intern("client"));
  const int32_t s = static_cast<int32_t>(StringTable::Global().Intern("server"));
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {SwitchEvent(0, 0, 0, 10, 0, -1, c),
                  SwitchEvent(0, 1, 0, 20, 0, -1, s),
                  SwitchEvent(10 * kMs, 0, 10, 0, 1, c, -1),
                  SwitchEvent(70 * kMs, 1, 20, 30, 0, s, -1),
                  SwitchEvent(90 * kMs, 1, 30, 20, 1, -1, s),
                  WakeEvent(EventKind::kSchedWaking, 90 * kMs, 1, 10, 0, c),
                  SwitchEvent(90 * kMs, 0, 0, 10, 0, -1, c),
                  SwitchEvent(100 * kMs, 0, 10, 0, 1, c, -1)};
  engine.Push(batch);
  accounting.Finish();
  EXPECT_EQ(report.tasks_reported(), 1u);
  return out.str();
}

TEST(AnalysisReportTest, TaskRecordInText) {
  const std::string text = Report(false, -1);
  EXPECT_NE(text.find("client (host box, tid 10, pid 10)  0.100000 s observed"), std::string::npos)
      << text;
  EXPECT_NE(text.find("breakdown: running 80.0%, preempted 20.0%"), std::string::npos) << text;
  // The wait went through the server (80 of 100: its 60 running, 20 preempted), the rest is
  // the client's own running.
  EXPECT_NE(text.find("80.0%  server               box/20       running 75.0%, preempted 25.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("20.0%  client               box/10       running 100.0%"), std::string::npos)
      << text;
}

TEST(AnalysisReportTest, TaskAndWaitRecordsInJson) {
  std::istringstream in(Report(true, 0));
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(in, line);) {
    records.push_back(nlohmann::json::parse(line));
    // Written by hand (JsonLine), yet the bytes nlohmann would write: same keys in the same
    // order, no spaces, the same escaping.
    EXPECT_EQ(nlohmann::ordered_json::parse(line).dump(), line);
  }
  ASSERT_EQ(records.size(), 2u);  // the wait, then the task at the end of the input
  const nlohmann::json& wait = records[0];
  EXPECT_EQ(wait["type"], "wait");
  EXPECT_EQ(wait["duration_ns"], 80'000'000);
  EXPECT_EQ(wait["cause"], "task");
  EXPECT_EQ(wait["waker"]["comm"], "server");
  EXPECT_EQ(wait["breakdown_ns"]["running"], 60'000'000);
  EXPECT_EQ(wait["breakdown_ns"]["preempted"], 20'000'000);
  ASSERT_EQ(wait["path"].size(), 2u);
  EXPECT_EQ(wait["path"][0]["comm"], "server");
  EXPECT_EQ(wait["path"][0]["state"], "running");
  const nlohmann::json& task = records.back();
  EXPECT_EQ(task["type"], "task");
  EXPECT_EQ(task["end_ns"].get<int64_t>() - task["start_ns"].get<int64_t>(), 100'000'000);
  ASSERT_EQ(task["by_task"].size(), 2u);
  EXPECT_EQ(task["by_task"][0]["comm"], "server");
  EXPECT_EQ(task["by_task"][0]["ns"], 80'000'000);
  EXPECT_EQ(task["by_task"][1]["comm"], "client");
  EXPECT_EQ(task["by_task"][1]["ns"], 20'000'000);
}

TEST(AnalysisReportTest, WaitTreeInText) {
  const std::string text = Report(false, 50'000'000);
  // The headline: the path's largest state, where it was, and the runner-up.
  EXPECT_NE(text.find("client box/10 waited 80.000 ms: running 75% on box/server (preempted 25%)\n"
                      "  active path (cause task): running 75.0%, preempted 25.0%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("server (box/20): running 60.000 ms, preempted 20.000 ms"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace waitpath
