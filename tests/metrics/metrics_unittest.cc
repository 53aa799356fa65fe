// Label bounds, listen addresses and pipeline-health series of the metrics exporter.
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <sstream>

#include "exporters/metrics_health.h"
#include "exporters/metrics_labels.h"
#include "exporters/metrics_server.h"
#include "live/string_table.h"
#include "tests/metrics/metrics_test_util.h"

namespace waitpath {
namespace {

using testing::ParseExposition;
using testing::Sample;

TEST(SanitizeLabelValue, KeepsAllowedCharactersOnly) {
  EXPECT_EQ(SanitizeLabelValue("nginx: worker"), "nginx:_worker");
  EXPECT_EQ(SanitizeLabelValue("kworker/0:1-events"), "kworker_0:1-events");
  EXPECT_EQ(SanitizeLabelValue("a.b_c"), "a.b_c");
  EXPECT_EQ(SanitizeLabelValue(""), "_");
  EXPECT_EQ(SanitizeLabelValue("é"), "__");
  EXPECT_EQ(SanitizeLabelValue(std::string(100, 'x')).size(), 64u);
}

TEST(ProcessLabels, FirstComeThenOther) {
  StringTable& strings = StringTable::Global();
  ProcessLabels labels(2);
  const uint32_t a = labels.Slot(strings.Intern("alpha"));
  const uint32_t b = labels.Slot(strings.Intern("beta"));
  const uint32_t c = labels.Slot(strings.Intern("gamma"));
  EXPECT_EQ(labels.Name(a), "alpha");
  EXPECT_EQ(labels.Name(b), "beta");
  EXPECT_EQ(c, labels.other_slot());
  EXPECT_EQ(labels.Name(c), "other");
  // Names equal once sanitized share a slot; a known name keeps its slot.
  EXPECT_EQ(labels.Slot(strings.Intern("alpha")), a);
  EXPECT_EQ(labels.Slot(strings.Intern("delta")), labels.other_slot());
}

TEST(SanitizeCgroupLabelValue, KeepsSlashesAndTheEndOfLongPaths) {
  EXPECT_EQ(SanitizeCgroupLabelValue("/system.slice/wl-server.service"),
            "/system.slice/wl-server.service");
  EXPECT_EQ(SanitizeCgroupLabelValue("/user.slice/user@0.service/a b"),
            "/user.slice/user@0.service/a_b");
  EXPECT_EQ(SanitizeCgroupLabelValue(""), "unknown");
  const std::string long_path = "/kubepods.slice/" + std::string(80, 'p') + "/cri-abc.scope";
  const std::string v = SanitizeCgroupLabelValue(long_path);
  EXPECT_EQ(v.size(), 64u);
  EXPECT_TRUE(v.ends_with("/cri-abc.scope"));
}

TEST(ProcessLabels, CgroupKindLabelsPaths) {
  StringTable& strings = StringTable::Global();
  ProcessLabels labels(4, ProcessLabels::Kind::kCgroup);
  EXPECT_EQ(labels.Name(labels.Slot(strings.Intern("/system.slice/x.service"))),
            "/system.slice/x.service");
  EXPECT_EQ(labels.Name(labels.Slot(0)), "unknown");  // no kmod/ event named it
}

TEST(ProcessLabels, ZeroMeansEverythingIsOther) {
  ProcessLabels labels(0);
  EXPECT_EQ(labels.Name(labels.Slot(StringTable::Global().Intern("x"))), "other");
}

TEST(ParseListenAddress, DefaultsToLoopback) {
  std::string address, error;
  ASSERT_TRUE(ParseListenAddress("9464", &address, &error));
  EXPECT_EQ(address, "127.0.0.1:9464");
  ASSERT_TRUE(ParseListenAddress(":9464", &address, &error));
  EXPECT_EQ(address, "127.0.0.1:9464");
  ASSERT_TRUE(ParseListenAddress("0.0.0.0:80", &address, &error));
  EXPECT_EQ(address, "0.0.0.0:80");
  ASSERT_TRUE(ParseListenAddress("[::1]:9464", &address, &error));
  EXPECT_EQ(address, "[::1]:9464");
  EXPECT_FALSE(ParseListenAddress("host:port", &address, &error));
  EXPECT_FALSE(ParseListenAddress("1.2.3.4:70000", &address, &error));
  EXPECT_FALSE(ParseListenAddress("::1:80", &address, &error));
  EXPECT_NE(error.find("--metrics"), std::string::npos);
}

std::vector<Sample> Scrape(prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return ParseExposition(out.str());
}

double Value(const std::vector<Sample>& samples, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  for (const Sample& s : samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return -1;
}

TEST(PipelineHealthMetrics, ReaderCountersFollowCumulativeFigures) {
  prometheus::Registry registry;
  PipelineHealthMetrics health(registry);
  ReaderCounters c;
  c.events = 100;
  c.discarded = 5;
  health.ObserveReader("h", c);
  c.events = 250;
  health.ObserveReader("h", c);
  const auto samples = Scrape(registry);
  EXPECT_EQ(Value(samples, "waitpath_events_total", {{"host", "h"}}), 250);
  EXPECT_EQ(Value(samples, "waitpath_events_discarded_total", {{"host", "h"}}), 5);
  EXPECT_EQ(Value(samples, "waitpath_timestamp_regressions_total", {{"host", "h"}}), 0);
}

TEST(PipelineHealthMetrics, OneSyncQualityAtATime) {
  prometheus::Registry registry;
  PipelineHealthMetrics health(registry);
  health.SetClockSync("h", "approximate", 2e-6);
  health.SetClockSync("h", "fail", std::nullopt);
  health.SetClockSync("h", "bogus", 1.0);  // ignored
  const auto samples = Scrape(registry);
  for (std::string_view q : PipelineHealthMetrics::kSyncQualities) {
    EXPECT_EQ(
        Value(samples, "waitpath_clock_sync_quality", {{"host", "h"}, {"quality", std::string(q)}}),
        q == "fail" ? 1 : 0)
        << q;
  }
  EXPECT_EQ(Value(samples, "waitpath_clock_sync_accuracy_seconds", {{"host", "h"}}), 2e-6);
}

TEST(PipelineHealthMetrics, AddersAndSetters) {
  prometheus::Registry registry;
  PipelineHealthMetrics health(registry);
  health.AddRelaydReconnect("relayd1:5344");
  health.AddRelaydReconnect("relayd1:5344");
  health.AddRelaydReconnectFailures("relayd1:5344", 13);
  health.AddPacketsMatched("a", "b", 7);
  health.AddPacketsExpired("a", 3);
  health.SetPendingCrossHostWaits(4);
  health.SetHistoryBytes(1024);
  health.AddHistoryEvictions(9);
  health.SetStreamLag("a", 1.5);
  health.WaitsResolved("a").Increment(2);
  const auto s = Scrape(registry);
  EXPECT_EQ(Value(s, "waitpath_relayd_reconnects_total", {{"relayd", "relayd1:5344"}}), 2);
  EXPECT_EQ(Value(s, "waitpath_relayd_reconnect_failures_total", {{"relayd", "relayd1:5344"}}), 13);
  EXPECT_EQ(Value(s, "waitpath_packets_matched_total", {{"host", "a"}, {"peer", "b"}}), 7);
  EXPECT_EQ(Value(s, "waitpath_packets_expired_total", {{"host", "a"}}), 3);
  EXPECT_EQ(Value(s, "waitpath_pending_cross_host_waits"), 4);
  EXPECT_EQ(Value(s, "waitpath_history_bytes"), 1024);
  EXPECT_EQ(Value(s, "waitpath_history_evictions_total"), 9);
  EXPECT_EQ(Value(s, "waitpath_stream_lag_seconds", {{"host", "a"}}), 1.5);
  EXPECT_EQ(Value(s, "waitpath_waits_resolved_total", {{"host", "a"}}), 2);
}

}  // namespace
}  // namespace waitpath
