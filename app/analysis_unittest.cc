// Which sinks an analysis has for which flags, and that the engine's waits reach them.
#include "app/analysis.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "app/analyze_command.h"
#include "app/live_command.h"
#include "model/dialect.h"
#include "model/event_builders.h"

namespace waitpath {
namespace {

constexpr int64_t kRunnable = 0, kSleeping = 1;  // prev_state

// Task 10 runs, sleeps [100, 200) until task 11 wakes it, and runs again.
Batch OneWait() {
  Batch batch;
  batch.host = 0;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {SwitchEvent(0, 0, 0, 10, kRunnable), SwitchEvent(100, 0, 10, 11, kSleeping),
                  WakeEvent(EventKind::kSchedWaking, 200, 0, 10, 0),
                  SwitchEvent(300, 0, 11, 10, kRunnable), SwitchEvent(400, 0, 10, 0, kRunnable)};
  return batch;
}

AnalysisPlan Plan(const AnalyzeOptions& options) {
  AnalysisPlan plan;
  std::string error;
  EXPECT_TRUE(PlanAnalysis(options, &plan, &error)) << error;
  plan.hosts = {"h1"};
  return plan;
}

TEST(AnalyzePlan, TheReportAndTheSpanSummaryByDefault) {
  AnalyzeOptions options;
  Analysis analysis(Plan(options));
  ASSERT_TRUE(analysis.report());
  ASSERT_TRUE(analysis.spans());
  EXPECT_FALSE(analysis.view());
  EXPECT_FALSE(analysis.timeline());
  EXPECT_FALSE(analysis.capture());
  EXPECT_FALSE(analysis.metrics());
}

TEST(AnalyzePlan, RowsHaveNoSpans) {
  AnalyzeOptions options;
  options.format = "folded";
  const AnalysisPlan plan = Plan(options);
  EXPECT_EQ(plan.report->format, TaskFormat::kFolded);
  EXPECT_FALSE(plan.spans->records);
  EXPECT_FALSE(plan.spans->summary);
  options.format = "json";
  EXPECT_TRUE(Plan(options).spans->records);
}

TEST(AnalyzePlan, FlagsThatDisagreeAreRefused) {
  AnalyzeOptions options;
  AnalysisPlan plan;
  std::string error;
  options.json = true;
  options.format = "csv";
  EXPECT_FALSE(PlanAnalysis(options, &plan, &error));
  EXPECT_EQ(error, "--json and --format csv disagree");
  options.json = false;
  options.min_wait = "1ms";
  EXPECT_FALSE(PlanAnalysis(options, &plan, &error));
  EXPECT_EQ(error, "--min-wait prints wait records: with --format text or json only");
}

TEST(AnalyzePlan, ATimelineCapturesAndMetricsWhenAskedFor) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("waitpath-analysis-" + std::to_string(getpid()));
  AnalyzeOptions options;
  options.timeline.file = (dir / "t.json").string();
  options.capture.dir = (dir / "captures").string();
  options.capture.min_wait = "50ns";
  options.metrics.file = (dir / "m.prom").string();
  AnalysisPlan plan = Plan(options);
  ASSERT_TRUE(plan.timeline && plan.capture && plan.metrics);
  EXPECT_EQ(plan.capture->options.min_wait_ns, 50);
  plan.timeline->reference = "h1";
  Analysis analysis(std::move(plan));
  EXPECT_TRUE(analysis.timeline());
  EXPECT_TRUE(analysis.capture());
  EXPECT_TRUE(analysis.metrics());
  // The wait reaches the capture (a sink of the accounting) and the metrics (a listener).
  analysis.feed().OnEvents(OneWait());
  analysis.feed().OnBatchDone(OneWait());
  EXPECT_EQ(analysis.capture()->pending(), 1u);
  std::ostringstream text;
  analysis.metrics()->WriteText(text);
  EXPECT_NE(text.str().find("waitpath_active_path_seconds_total{"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Analysis, TheEnginesWaitsReachTheReport) {
  AnalyzeOptions options;
  options.json = true;
  options.min_wait = "50ns";
  AnalysisPlan plan = Plan(options);
  std::ostringstream out;
  plan.out = &out;
  Analysis analysis(std::move(plan));
  analysis.feed().OnEvents(OneWait());
  EXPECT_NE(out.str().find("\"type\":\"wait\""), std::string::npos) << out.str();
  analysis.Finish();
  EXPECT_NE(out.str().find("\"type\":\"task\""), std::string::npos) << out.str();
}

TEST(Analysis, ALiveHostIsAddedToTheAccountingAndTheMetrics) {
  AnalysisPlan plan;
  plan.live = true;
  plan.metrics = MetricsOptions{};
  Analysis analysis(std::move(plan));
  analysis.AddHost("h1");
  EXPECT_EQ(analysis.accounting().hosts(), std::vector<std::string>{"h1"});
  std::ostringstream text;
  analysis.metrics()->WriteText(text);
  EXPECT_NE(text.str().find("host=\"h1\""), std::string::npos);
}

TEST(LivePlan, ATerminalGetsTheViewAndPipesTheReport) {
  LiveOptions options;
  options.tail = true;
  AnalysisPlan lines, screen;
  int64_t max_lag_ns = 0;
  std::string error;
  ASSERT_TRUE(PlanLive(options, false, &lines, &max_lag_ns, &error)) << error;
  EXPECT_TRUE(lines.report);
  EXPECT_FALSE(lines.view);
  EXPECT_TRUE(lines.spans->records);
  EXPECT_EQ(lines.report->min_wait_ns, 0);  // tail: every wait
  EXPECT_EQ(max_lag_ns, 10'000'000'000);
  ASSERT_TRUE(PlanLive(options, true, &screen, &max_lag_ns, &error)) << error;
  EXPECT_FALSE(screen.report);
  EXPECT_TRUE(screen.view);
  EXPECT_FALSE(screen.spans->records);  // they would tear the screen
}

TEST(LivePlan, MetricsOnARelaydOnly) {
  LiveOptions options;
  options.metrics = "127.0.0.1:0";
  AnalysisPlan relayd, traces;
  int64_t max_lag_ns = 0;
  std::string error;
  ASSERT_TRUE(PlanLive(options, false, &relayd, &max_lag_ns, &error)) << error;
  EXPECT_TRUE(relayd.live);
  EXPECT_TRUE(relayd.metrics);
  EXPECT_TRUE(relayd.report->task_records);  // live: task records when stopped
  options.traces = {"/some/trace"};
  ASSERT_TRUE(PlanLive(options, false, &traces, &max_lag_ns, &error)) << error;
  EXPECT_FALSE(traces.live);
  EXPECT_FALSE(traces.metrics);
}

TEST(LivePlan, CapturesWithBabeltrace2NeedTheRelaydsFiles) {
  LiveOptions options;
  options.capture.dir =
      (std::filesystem::temp_directory_path() / ("waitpath-live-plan-" + std::to_string(getpid())))
          .string();
  options.capture.min_wait = "1ms";
  options.decoder = "babeltrace2";
  AnalysisPlan plan;
  int64_t max_lag_ns = 0;
  std::string error;
  EXPECT_FALSE(PlanLive(options, false, &plan, &max_lag_ns, &error));
  EXPECT_NE(error.find("needs --capture-traces DIR"), std::string::npos);
  std::filesystem::remove_all(options.capture.dir);
}

}  // namespace
}  // namespace waitpath
