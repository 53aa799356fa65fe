#include "app/host_health.h"

#include <gtest/gtest.h>

#include "exporters/clock_report.h"

namespace waitpath {
namespace {

using std::chrono::seconds;
constexpr int64_t kWall = 1'700'000'000'000'000'000;  // now, ns since the epoch
constexpr int64_t kS = 1'000'000'000;

HostHealthModel::Host Host(const std::string& name, uint64_t events, int64_t analysed_to) {
  HostHealthModel::Host h;
  h.name = name;
  h.events = events;
  h.analysed_to = analysed_to;
  return h;
}

HostClock Clock(const std::string& host, SyncQuality quality, double accuracy) {
  HostClock c;
  c.host = host;
  c.reference = "a";
  c.quality = quality;
  c.accuracy = accuracy;
  return c;
}

TEST(HostHealthModel, EventsPerSecondSinceTheLastLook) {
  const auto t0 = HostHealthModel::Clock::now();
  HostHealthModel model(t0);
  std::vector<HostHealth> rows = model.Rows({Host("a", 200, kWall)}, 1, t0 + seconds(2), kWall);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_DOUBLE_EQ(rows[0].events_per_s, 100);
  rows = model.Rows({Host("a", 250, kWall)}, 1, t0 + seconds(3), kWall);
  EXPECT_DOUBLE_EQ(rows[0].events_per_s, 50);
  EXPECT_EQ(rows[0].sync, "");  // one host: nothing to synchronize
  EXPECT_EQ(rows[0].state, "");
}

TEST(HostHealthModel, LagBehindTheWallClockOrWhenAReplayedEventWasEmitted) {
  HostHealthModel model;
  HostHealthModel::Host analysed = Host("a", 0, kWall - 3 * kS / 2);
  HostHealthModel::Host replayed = Host("b", 0, 1000);  // its original times: years ago
  HostHealthModel::Host nothing_yet = Host("c", 0, std::numeric_limits<int64_t>::min());
  Batch batch;
  batch.host = 1;
  batch.counters.emitted_ns = kWall - 2 * kS;
  model.ObserveBatch(batch);
  const std::vector<HostHealth> rows =
      model.Rows({analysed, replayed, nothing_yet}, 3, HostHealthModel::Clock::now(), kWall);
  EXPECT_DOUBLE_EQ(rows[0].lag_s, 1.5);
  EXPECT_DOUBLE_EQ(rows[1].lag_s, 2);
  EXPECT_LT(rows[2].lag_s, 0);  // not known
}

// A relayd lost: its state says for how long, and the outage's time adds up across losses.
TEST(HostHealthModel, OutagesAreTimed) {
  const auto t0 = HostHealthModel::Clock::now();
  HostHealthModel model(t0);
  HostHealthModel::Host a = Host("a", 10, kWall);
  a.relayd_lost = true;
  model.Rows({a}, 1, t0, kWall);
  std::vector<HostHealth> rows = model.Rows({a}, 1, t0 + seconds(72), kWall);
  EXPECT_EQ(rows[0].state, "relayd lost for 1m12s");
  EXPECT_DOUBLE_EQ(rows[0].outage_s, 72);
  a.relayd_lost = false;
  rows = model.Rows({a}, 1, t0 + seconds(80), kWall);
  EXPECT_EQ(rows[0].state, "");
  EXPECT_DOUBLE_EQ(rows[0].outage_s, 80);  // lost until it was seen back
  a.relayd_lost = true;
  model.Rows({a}, 1, t0 + seconds(100), kWall);
  rows = model.Rows({a}, 1, t0 + seconds(110), kWall);
  EXPECT_DOUBLE_EQ(rows[0].outage_s, 90);
}

TEST(HostHealthModel, SyncOfEachHostOnceClocksCome) {
  HostHealthModel model;
  const auto now = HostHealthModel::Clock::now();
  std::vector<HostHealth> rows = model.Rows({Host("a", 0, 0), Host("b", 0, 0)}, 2, now, kWall);
  EXPECT_EQ(rows[0].sync, "synchronizing");
  EXPECT_EQ(rows[1].sync, "synchronizing");
  model.SetClocks(
      {Clock("a", SyncQuality::kAccurate, 0), Clock("b", SyncQuality::kAccurate, 12e3)});
  rows = model.Rows({Host("a", 0, 0), Host("b", 0, 0)}, 2, now, kWall);
  EXPECT_EQ(rows[0].sync, "reference");
  EXPECT_EQ(rows[1].sync, "+/-12.0 us accurate");
  model.SetClocks({Clock("a", SyncQuality::kAccurate, 0), Clock("b", SyncQuality::kFail, 2.5e6)});
  rows = model.Rows({Host("a", 0, 0), Host("b", 0, 0)}, 2, now, kWall);
  EXPECT_EQ(rows[1].sync, "+/-2.5 ms fail");
}

// The host row and the message about the same clock on one screen write its accuracy alike
// (they read "+/-127 us" and "±172.1 µs").
TEST(HostHealthModel, ClockAccuracyReadsAsInTheClockMessage) {
  HostHealthModel model;
  const HostClock a = Clock("a", SyncQuality::kAccurate, 0);
  HostClock b = Clock("b", SyncQuality::kAccurate, 172'130);
  b.on_tree = true;
  b.matches = 46;
  model.SetClocks({a, b});
  const std::vector<HostHealth> rows =
      model.Rows({Host("a", 0, 0), Host("b", 0, 0)}, 2, HostHealthModel::Clock::now(), kWall);
  EXPECT_EQ(rows[1].sync, "+/-172.1 us accurate");
  EXPECT_EQ(ClockSummary(b), "b: clock accurate +/-172.1 us to a (46 packets)");
}

TEST(HostHealthModel, EndedOverRelaydLostOverLagging) {
  HostHealthModel model;
  HostHealthModel::Host h = Host("a", 0, kWall);
  h.lost = 7;
  h.lagging = true;
  EXPECT_EQ(model.Rows({h}, 1, HostHealthModel::Clock::now(), kWall)[0].state,
            "lagging (events dropped)");
  h.relayd_lost = true;
  EXPECT_EQ(model.Rows({h}, 1, HostHealthModel::Clock::now(), kWall)[0].state,
            "relayd lost for 0s");
  h.ended = true;
  const HostHealth row = model.Rows({h}, 1, HostHealthModel::Clock::now(), kWall)[0];
  EXPECT_EQ(row.state, "ended");
  EXPECT_LT(row.lag_s, 0);  // an ended host lags nothing
  EXPECT_EQ(row.lost, 7u);
}

}  // namespace
}  // namespace waitpath
