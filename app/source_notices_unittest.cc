#include "app/source_notices.h"

#include <gtest/gtest.h>

#include <sstream>

#include "model/dialect.h"

namespace waitpath {
namespace {

using testing::internal::CaptureStderr;
using testing::internal::GetCapturedStderr;

// The metrics the notices count into, over an engine with no host.
struct Metrics {
  std::string Text() const {
    std::ostringstream out;
    exporter.WriteText(out);
    return out.str();
  }
  Engine engine;
  WatchedAccounting accounting{engine, WatchSet{}, {}};
  MetricsExporter exporter{engine, accounting, MetricsOptions{}};
};

TEST(SourceNotices, ARelaydLostIsSaidOnceAndItsReattachCounted) {
  Metrics metrics;
  SourceNotices notices("net://relayd", "10s", &metrics.exporter);
  // The series exist from the start, at 0, for alert rules over them.
  EXPECT_NE(metrics.Text().find("waitpath_relayd_reconnects_total{relayd=\"net://relayd\"} 0"),
            std::string::npos)
      << metrics.Text();
  EXPECT_NE(
      metrics.Text().find("waitpath_relayd_reconnect_failures_total{relayd=\"net://relayd\"} 0"),
      std::string::npos);
  RelaydLink::Counts counts;
  CaptureStderr();
  notices.Relayd(0, "h1 (session s)", counts);
  EXPECT_EQ(GetCapturedStderr(), "");
  counts.losses = 1;
  counts.failed = 3;  // however long it stays away
  CaptureStderr();
  notices.Relayd(0, "h1 (session s)", counts);
  notices.Relayd(0, "h1 (session s)", counts);
  EXPECT_EQ(GetCapturedStderr(),
            "waitpath: host h1 (session s): lost the relayd; reattaching (the gap is counted as "
            "lost data)\n");
  counts.reconnects = 1;
  CaptureStderr();
  notices.Relayd(0, "h1 (session s)", counts);
  EXPECT_EQ(GetCapturedStderr(), "waitpath: host h1 (session s): reattached to the relayd\n");
  const std::string text = metrics.Text();
  EXPECT_NE(text.find("waitpath_relayd_reconnects_total{relayd=\"net://relayd\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("waitpath_relayd_reconnect_failures_total{relayd=\"net://relayd\"} 3"),
            std::string::npos);
  // A new reader of that source starts from zero: its first loss is said again.
  notices.Restarted(0);
  CaptureStderr();
  notices.Relayd(0, "h1 (session s)", RelaydLink::Counts{1, 0, 0});
  EXPECT_NE(GetCapturedStderr().find("lost the relayd"), std::string::npos);
}

TEST(SourceNotices, AHostLaggingIsSaidWhenItStartsAndWhenItEnds) {
  SourceNotices notices("net://relayd", "10s", nullptr);
  CaptureStderr();
  notices.Lag(0, "a", "a (session s)", false, 0);
  notices.Lag(1, "b", "b (session s)", true, 5);
  notices.Lag(1, "b", "b (session s)", true, 9);
  EXPECT_EQ(GetCapturedStderr(),
            "waitpath: host b (session s) is more than 10s behind the others (a clock not "
            "synchronized, or a stalled stream): not waiting for it; its older events are "
            "dropped as lost\n");
  EXPECT_FALSE(notices.lagging(0));
  EXPECT_TRUE(notices.lagging(1));
  EXPECT_FALSE(notices.lagging(7));  // not seen yet
  CaptureStderr();
  notices.Lag(0, "a", "a (session s)", false, 0);
  notices.Lag(1, "b", "b (session s)", false, 9);
  EXPECT_EQ(GetCapturedStderr(), "waitpath: host b (session s) caught up\n");
}

// A session of user-space events only (spans, no kernel tracer): said once per host, once it
// has read for 2 s or ended; a kernel session is never named.
TEST(SourceNotices, AHostWithoutKernelSchedulerEventsIsSaidOnce) {
  SourceNotices notices("net://relayd", "10s", nullptr);
  ReaderCounters ust;
  ust.events = 100;
  ust.first_ns = 0;
  ust.last_ns = 1'000'000'000;
  ReaderCounters kernel = ust;
  kernel.dialect = kDialectHasSwitch | kDialectLttngModern;
  CaptureStderr();
  notices.Kernel(0, "vm (session spans)", ust, false);  // 1 s: too early to say
  notices.Kernel(1, "db (session k)", kernel, false);
  EXPECT_EQ(GetCapturedStderr(), "");
  ust.last_ns = kernel.last_ns = 2'000'000'000;
  CaptureStderr();
  notices.Kernel(0, "vm (session spans)", ust, false);
  notices.Kernel(0, "vm (session spans)", ust, true);
  notices.Kernel(1, "db (session k)", kernel, true);
  EXPECT_EQ(GetCapturedStderr(),
            "waitpath: host vm (session spans): no kernel scheduler events (sched_switch) in its "
            "session: its threads' states are unknown (trace its kernel too: "
            "configs/lttng/waitpath-session.sh)\n");
  ReaderCounters brief;  // ended before 2 s
  brief.events = 3;
  brief.first_ns = brief.last_ns = 5;
  CaptureStderr();
  notices.Kernel(2, "c (session s)", brief, true);
  EXPECT_NE(GetCapturedStderr(), "");
}

TEST(SourceNotices, LateEventsDroppedAreCountedPerHost) {
  Metrics metrics;
  SourceNotices notices("net://relayd", "10s", &metrics.exporter);
  CaptureStderr();
  notices.Lag(0, "a", "a", true, 5);
  notices.Lag(0, "a", "a", true, 12);
  GetCapturedStderr();
  const std::string text = metrics.Text();
  EXPECT_NE(text.find("waitpath_late_events_dropped_total{host=\"a\"} 12"), std::string::npos)
      << text;
}

TEST(SourceNotices, TheReferenceOnceThenEachHostsQualityWhenItChanges) {
  SourceNotices notices("net://relayd", "10s", nullptr);
  HostClock a, b;
  a.host = a.reference = b.reference = "a";
  b.host = "b";
  b.on_tree = true;
  b.quality = SyncQuality::kApproximate;
  b.accuracy = 2000;
  b.matches = 4;
  CaptureStderr();
  notices.Clocks({a});  // one host: nothing to say
  notices.Clocks({a, b});
  b.accuracy = 1000;  // better, still approximate: not said
  notices.Clocks({a, b});
  b.quality = SyncQuality::kAccurate;
  notices.Clocks({a, b});
  EXPECT_EQ(GetCapturedStderr(),
            "waitpath: times are in the clock of host a (the reference, the first by name)\n"
            "waitpath: b: clock approximate +/-2.0 us to a (4 packets)\n"
            "waitpath: b: clock accurate +/-1.0 us to a (4 packets)\n");
}

}  // namespace
}  // namespace waitpath
