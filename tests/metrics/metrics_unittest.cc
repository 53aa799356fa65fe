// Label bounds, listen addresses and pipeline-health series of the metrics exporter.
#include <gtest/gtest.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include "exporters/metrics_health.h"
#include "exporters/metrics_labels.h"
#include "exporters/metrics_server.h"
#include "model/string_table.h"
#include "tests/metrics/metrics_test_util.h"

namespace waitpath {
namespace {

using testing::ParseExposition;
using testing::Sample;

// Label values are the names as they are (they read `GET__cart`, `nginx:_worker`): Prometheus
// takes any UTF-8; only control bytes and bytes that are not UTF-8 are written \xNN.
TEST(LabelValue, KeepsNamesAsTheyAre) {
  EXPECT_EQ(LabelValue("nginx: worker"), "nginx: worker");
  EXPECT_EQ(LabelValue("kworker/0:1-events"), "kworker/0:1-events");
  EXPECT_EQ(LabelValue("GET /cart"), "GET /cart");
  EXPECT_EQ(LabelValue("say \"hi\""), "say \"hi\"");
  EXPECT_EQ(LabelValue("é"), "é");
  EXPECT_EQ(LabelValue(""), "unnamed");
  EXPECT_EQ(LabelValue("a\x1b[2Jb\xff"), "a\\x1B[2Jb\\xFF");
  EXPECT_EQ(LabelValue(std::string(100, 'x')), std::string(64, 'x') + "…");
}

// The exposition escapes what the format says (backslash, double quote, newline) and nothing
// else.
TEST(LabelValue, EscapedOnlyAsTheExpositionFormatSays) {
  prometheus::Registry registry;
  prometheus::BuildCounter()
      .Name("c_total")
      .Help("h")
      .Register(registry)
      .Add({{"operation", LabelValue("GET /cart \"x\" é")}})
      .Increment();
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, registry.Collect());
  EXPECT_NE(text.str().find("c_total{operation=\"GET /cart \\\"x\\\" é\"} 1"), std::string::npos)
      << text.str();
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

TEST(CgroupLabelValue, KeepsTheEndOfLongPaths) {
  EXPECT_EQ(CgroupLabelValue("/system.slice/wl-server.service"), "/system.slice/wl-server.service");
  EXPECT_EQ(CgroupLabelValue("/user.slice/user@0.service/a b"), "/user.slice/user@0.service/a b");
  EXPECT_EQ(CgroupLabelValue(""), "unknown");
  const std::string long_path = "/kubepods.slice/" + std::string(80, 'p') + "/cri-abc.scope";
  const std::string v = CgroupLabelValue(long_path);
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

std::vector<Sample> Scrape(const prometheus::Collectable& metrics) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, metrics.Collect());
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
  PipelineHealthMetrics health;
  ReaderCounters c;
  c.events = 100;
  c.discarded = 5;
  health.ObserveReader("h", c);
  c.events = 250;
  health.ObserveReader("h", c);
  const auto samples = Scrape(health);
  EXPECT_EQ(Value(samples, "waitpath_events_total", {{"host", "h"}}), 250);
  EXPECT_EQ(Value(samples, "waitpath_events_discarded_total", {{"host", "h"}}), 5);
  EXPECT_EQ(Value(samples, "waitpath_timestamp_regressions_total", {{"host", "h"}}), 0);
}

TEST(PipelineHealthMetrics, OneSyncQualityAtATime) {
  PipelineHealthMetrics health;
  health.SetClockSync("h", "approximate", 2e-6);
  health.SetClockSync("h", "fail", std::nullopt);
  health.SetClockSync("h", "bogus", 1.0);  // ignored
  const auto samples = Scrape(health);
  for (std::string_view q : PipelineHealthMetrics::kSyncQualities) {
    EXPECT_EQ(
        Value(samples, "waitpath_clock_sync_quality", {{"host", "h"}, {"quality", std::string(q)}}),
        q == "fail" ? 1 : 0)
        << q;
  }
  EXPECT_EQ(Value(samples, "waitpath_clock_sync_accuracy_seconds", {{"host", "h"}}), 2e-6);
}

TEST(PipelineHealthMetrics, AddersAndSetters) {
  PipelineHealthMetrics health;
  health.AddRelaydReconnect("relayd1:5344");
  health.AddRelaydReconnect("relayd1:5344");
  health.AddRelaydReconnectFailures("relayd1:5344", 13);
  health.AddPacketsMatched("a", "b", 7);
  health.AddPacketsExpired("a", 3);
  health.SetPendingCrossHostWaits(4);
  health.SetHistoryBytes(1024);
  health.AddHistoryEvictions(9);
  health.SetStreamLag("a", 1.5);
  health.AddWaitsResolved("a", 2);
  const auto s = Scrape(health);
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

namespace waitpath {
namespace {

// Every pipeline-health family as it was before the families came from the data-quality table
// (the HELP and TYPE lines and label names of the registry-based exporter, copied from its
// output): dashboards, rules and scrapers rely on them.
TEST(PipelineHealthMetrics, FamiliesKeepTheirNamesHelpTypesAndLabels) {
  PipelineHealthMetrics health;
  ReaderCounters reader;
  reader.events = 3;
  health.ObserveReader("h", reader);
  health.SetStreamLag("h", 1);
  health.AddRelaydReconnect("r");
  health.AddRelaydReconnectFailures("r", 1);
  health.SetClockSync("h", "accurate", 0.5);
  health.AddPacketsMatched("h", "p", 1);
  health.AddPacketsExpired("h", 1);
  health.AddLateEventsDropped("h", 1);
  health.SetHostLagging("h", true);
  health.AddWaitsResolved("h", 1);
  health.AddInferredSwitches("h", 1);
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, health.Collect());
  std::map<std::string, std::string> help, type;
  std::map<std::string, std::set<std::string>> labels;
  std::istringstream in(text.str());
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string hash, what, name;
    words >> hash >> what >> name;
    std::string rest;
    std::getline(words, rest);
    if (hash == "#" && what == "HELP") help[name] = rest.substr(1);
    if (hash == "#" && what == "TYPE") type[name] = rest.substr(1);
  }
  for (const Sample& s : ParseExposition(text.str())) {
    for (const auto& [label, value] : s.labels) labels[s.name].insert(label);
    labels[s.name];
  }
  struct Family {
    const char *name, *type, *help;
    std::set<std::string> labels;
  };
  const Family expected[] = {
      {"waitpath_events_total", "counter", "Trace events read per host, of every class", {"host"}},
      {"waitpath_events_discarded_total",
       "counter",
       "Events the tracer reported as lost per host",
       {"host"}},
      {"waitpath_timestamp_regressions_total",
       "counter",
       "Event timestamps that went backwards and were clamped",
       {"host"}},
      {"waitpath_stream_lag_seconds",
       "gauge",
       "How far the host's analysed stream is behind (live: the wall clock; offline: the most "
       "advanced host)",
       {"host"}},
      {"waitpath_relayd_reconnects_total",
       "counter",
       "Relay daemon connections reattached after they were lost",
       {"relayd"}},
      {"waitpath_relayd_reconnect_failures_total",
       "counter",
       "Attempts to reattach a lost relay daemon connection that failed",
       {"relayd"}},
      {"waitpath_clock_sync_quality",
       "gauge",
       "1 for the host's current clock synchronization quality, else 0",
       {"host", "quality"}},
      {"waitpath_clock_sync_accuracy_seconds",
       "gauge",
       "Accuracy bound of the host's clock transform",
       {"host"}},
      {"waitpath_packets_matched_total",
       "counter",
       "Received packets matched with their send, by receiving host and sender host (peer)",
       {"host", "peer"}},
      {"waitpath_packets_expired_total",
       "counter",
       "Sent packets never matched with a receive, dropped after the expiry",
       {"host"}},
      {"waitpath_waits_resolved_total",
       "counter",
       "Waits resolved per host (every task, watched or not)",
       {"host"}},
      {"waitpath_pending_cross_host_waits",
       "gauge",
       "Cross-host waits waiting for their sender's host to progress",
       {}},
      {"waitpath_history_bytes", "gauge", "Memory held by retained task histories", {}},
      {"waitpath_history_evictions_total",
       "counter",
       "History segments evicted (retention window or byte cap)",
       {}},
      {"waitpath_history_evicted_reads_total",
       "counter",
       "Path queries that reached into evicted history (counted unknown)",
       {}},
      {"waitpath_inferred_switches_total",
       "counter",
       "Events naming another current task than the last sched_switch: a lost switch inferred",
       {"host"}},
      {"waitpath_tasks_released_total",
       "counter",
       "Ended tasks whose memory was reclaimed and id reused",
       {}},
      {"waitpath_late_events_dropped_total",
       "counter",
       "Live: events of a host lagging more than --max-lag behind the others, dropped as lost",
       {"host"}},
      {"waitpath_host_lagging",
       "gauge",
       "Live: 1 while the host lags more than --max-lag behind the others",
       {"host"}},
      {"waitpath_span_input_errors_total",
       "counter",
       "Application span events that could not be used (unmatched, reused ids, dropped)",
       {}},
  };
  EXPECT_EQ(help.size(), std::size(expected));
  for (const Family& f : expected) {
    EXPECT_EQ(help[f.name], f.help) << f.name;
    EXPECT_EQ(type[f.name], f.type) << f.name;
    EXPECT_EQ(labels[f.name], f.labels) << f.name;
  }
}

// The engine's figures arrive as snapshots of cumulative counts: a later one replaces the
// earlier (nothing is added up twice); a setter's count of the same series adds to a counter,
// a gauge is the snapshot's.
TEST(PipelineHealthMetrics, EngineSnapshotsReplaceEachOther) {
  PipelineHealthMetrics health;
  EngineHealthSnapshot s;
  s.hosts = {"a", "b"};
  s.waits_resolved = {5, 7};
  s.stream_lag_seconds = {0.5, 0};
  s.history_bytes = 4096;
  s.history_evictions = 10;
  s.inferred_switches = {2};  // b's none yet: 0 from the start, as its siblings
  health.Publish(s);
  s.waits_resolved = {6, 9};
  s.history_evictions = 12;
  health.Publish(s);
  health.AddWaitsResolved("a", 100);
  health.SetStreamLag("a", 99);
  health.SetHistoryBytes(1);
  const auto v = Scrape(health);
  EXPECT_EQ(Value(v, "waitpath_waits_resolved_total", {{"host", "a"}}), 106);
  EXPECT_EQ(Value(v, "waitpath_waits_resolved_total", {{"host", "b"}}), 9);
  EXPECT_EQ(Value(v, "waitpath_stream_lag_seconds", {{"host", "a"}}), 0.5);
  EXPECT_EQ(Value(v, "waitpath_stream_lag_seconds", {{"host", "b"}}), 0);
  EXPECT_EQ(Value(v, "waitpath_history_bytes"), 4096);
  EXPECT_EQ(Value(v, "waitpath_history_evictions_total"), 12);
  EXPECT_EQ(Value(v, "waitpath_inferred_switches_total", {{"host", "a"}}), 2);
  EXPECT_EQ(Value(v, "waitpath_inferred_switches_total", {{"host", "b"}}), 0);
  EXPECT_EQ(Value(v, "waitpath_tasks_released_total"), 0);
  // Packets only with a host named for them; every global series exists from the start.
  EXPECT_EQ(Value(v, "waitpath_packets_matched_total", {{"host", "a"}, {"peer", "a"}}), -1);
  EXPECT_EQ(Value(Scrape(PipelineHealthMetrics()), "waitpath_history_evicted_reads_total"), 0);
}

// A scrape builds its families from copies: scraping on other threads while the engine thread
// publishes sees counters that never go back.
TEST(PipelineHealthMetrics, ScrapesWhilePublishingSeeGrowingCounters) {
  PipelineHealthMetrics health;
  std::atomic<bool> stop = false;
  std::atomic<uint64_t> published = 0;
  std::thread engine([&] {
    EngineHealthSnapshot s;
    s.hosts = {"h"};
    s.waits_resolved = {0};
    s.stream_lag_seconds = {0};
    for (uint64_t i = 1; !stop; ++i) {
      s.waits_resolved[0] = i;
      s.history_evictions = 2 * i;
      health.Publish(s);
      published = i;
    }
  });
  double last = -1;  // -1: not published yet, no series
  // At least 300 scrapes, and until the engine thread has published a while (it may start late
  // on a loaded machine).
  for (int scrapes = 0; scrapes < 300 || published < 1000; ++scrapes) {
    const auto v = Scrape(health);
    const double waits = Value(v, "waitpath_waits_resolved_total", {{"host", "h"}});
    EXPECT_GE(waits, last);
    if (waits > 0) {
      EXPECT_EQ(Value(v, "waitpath_history_evictions_total"), 2 * waits);  // one snapshot
    }
    last = waits;
  }
  stop = true;
  engine.join();
  EXPECT_EQ(Value(Scrape(health), "waitpath_waits_resolved_total", {{"host", "h"}}),
            static_cast<double>(published.load()));
}

}  // namespace
}  // namespace waitpath
