// Which waits a capture takes and how it skips: its threshold, a host whose stored trace is
// not found, the hourly cap. (Cutting and the captures' contents: tests/e2e/capture_cli_test.cc.)
#include "exporters/wait_capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

// A client (tid 100) sleeps 38 µs then 3 µs, woken by a server (tid 200) each time.
void Feed(Engine& engine) {
  const int32_t client = static_cast<int32_t>(StringTable::Global().Intern("client"));
  const int32_t server = static_cast<int32_t>(StringTable::Global().Intern("server"));
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {
      SwitchEvent(1000, 0, 0, 100, 0, -1, client),
      SwitchEvent(1500, 1, 0, 200, 0, -1, server),
      SwitchEvent(2000, 0, 100, 0, 1, client, -1),
      WakeEvent(EventKind::kSchedWaking, 40000, 1, 100, 0, client),
      SwitchEvent(45000, 0, 0, 100, 0, -1, client),
      SwitchEvent(46000, 0, 100, 0, 1, client, -1),
      WakeEvent(EventKind::kSchedWaking, 49000, 1, 100, 0, client),
      SwitchEvent(60000, 1, 200, 0, 1, server, -1),
  };
  engine.Push(batch);
}

class WaitCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("waitpath-wait-capture-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WaitCaptureTest, TakesLongWaitsAndCountsAHostWithoutStoredTrace) {
  Engine engine;
  WatchedAccounting accounting(engine, WatchSet{}, {"h1"});
  std::vector<std::string> warnings, asked;
  WaitCapture capture(
      accounting, CaptureOptions{dir_.string(), 10'000, 1000, 1u << 20, 60},
      [&](const std::string& host) {
        asked.push_back(host);
        return std::vector<std::string>{};
      },
      [&](const std::string& line) { warnings.push_back(line); });
  engine.SetListener(&accounting);
  Feed(engine);
  EXPECT_EQ(capture.pending(), 1u);                // the 38 µs wait, not the 3 µs one
  EXPECT_TRUE(capture.Poll(40000, 0, 0).empty());  // its window ends at 41000
  EXPECT_EQ(capture.pending(), 1u);
  EXPECT_TRUE(capture.Poll(41000, 0, 0).empty());
  EXPECT_EQ(capture.pending(), 0u);
  EXPECT_EQ(asked, std::vector<std::string>{"h1"});
  EXPECT_EQ(capture.counters().skipped_no_trace, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("host h1"), std::string::npos) << warnings[0];
  EXPECT_TRUE(fs::is_empty(dir_));  // nothing half made is left
}

TEST_F(WaitCaptureTest, FailedCapturesDoNotUseTheHourlyBudget) {
  Engine engine;
  WatchedAccounting accounting(engine, WatchSet{}, {"h1"});
  int asked = 0;
  WaitCapture capture(
      accounting, CaptureOptions{dir_.string(), 1000, 0, 1u << 20, 1},
      [&](const std::string&) {
        ++asked;
        return std::vector<std::string>{};
      },
      [](const std::string&) {});
  engine.SetListener(&accounting);
  Feed(engine);
  ASSERT_EQ(capture.pending(), 2u);
  capture.Poll(INT64_MAX, 0, 0);
  // The first is tried (and fails: nothing stored), so only a written one uses the hour.
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(capture.counters().skipped_rate, 0u);
  EXPECT_EQ(capture.counters().skipped_no_trace, 2u);
}

// Requests (spans): at least --capture-min-request, or, as pNN, strictly slower than that
// percentile of the operation's recent spans once 100 were seen.
TEST_F(WaitCaptureTest, TakesSlowRequestsByThresholdOrPercentile) {
  Engine engine;
  WatchedAccounting accounting(engine, WatchSet{}, {"h1"});
  engine.SetListener(&accounting);
  Feed(engine);
  const Utid client = engine.tasks().Find(0, 100);
  ASSERT_NE(client, kNoTask);
  auto span = [&](uint64_t id, int64_t ns) {
    ResolvedSpan s;
    s.span.span_id = id;
    s.span.name = StringTable::Global().Intern("checkout");
    s.task = s.end_task = client;
    s.start = 1'000'000;
    s.end = s.start + ns;
    return s;
  };
  auto none = [](const std::string&) { return std::vector<std::string>{}; };
  auto quiet = [](const std::string&) {};

  CaptureOptions threshold{dir_.string(), INT64_MAX, 0, 1u << 20, 60};
  threshold.min_request_ns = 5000;
  WaitCapture by_threshold(accounting, threshold, none, quiet);
  by_threshold.OnSpan(span(1, 4999));
  EXPECT_EQ(by_threshold.pending(), 0u);
  by_threshold.OnSpan(span(2, 5000));
  EXPECT_EQ(by_threshold.pending(), 1u);

  CaptureOptions percentile{dir_.string(), INT64_MAX, 0, 1u << 20, 60};
  percentile.request_quantile = 0.99;
  WaitCapture by_percentile(accounting, percentile, none, quiet);
  for (uint64_t i = 0; i < 98; ++i) by_percentile.OnSpan(span(10 + i, 1000));
  by_percentile.OnSpan(span(200, 1'000'000));  // slow, but before 100 were seen
  EXPECT_EQ(by_percentile.pending(), 0u);
  by_percentile.OnSpan(span(201, 1000));
  by_percentile.OnSpan(span(202, 1000));   // 100 seen: their p99 is 1000
  EXPECT_EQ(by_percentile.pending(), 0u);  // equal is not slower (a replay repeats itself)
  by_percentile.OnSpan(span(203, 1001));
  EXPECT_EQ(by_percentile.pending(), 1u);
  for (int i = 0; i < 50; ++i) by_percentile.OnSpan(span(300 + i, 1000));  // usual ones
  EXPECT_EQ(by_percentile.pending(), 1u);
}

}  // namespace
}  // namespace waitpath
