#include "fleet/peer_clock.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

TEST(PeerClock, OneWayFromTheFastestPacketUntilPointsBothWays) {
  PeerClock clock;
  EXPECT_FALSE(clock.Judging());
  EXPECT_TRUE(clock.Plausible(5 * kS, 0));  // nothing to judge by yet
  // The peer's sends received 700 and 500 ns later in our clock: the fastest is the estimate.
  for (const auto& [sent, received] : {std::pair<int64_t, int64_t>{1000, 1700}, {3000, 3500}}) {
    ASSERT_TRUE(clock.AddPoint(sent, received, true));
    clock.AddDelay(sent, received);
  }
  EXPECT_FALSE(clock.Synchronized());
  EXPECT_TRUE(clock.Judging());
  EXPECT_EQ(clock.ToLocal(10'000), 10'500);
  EXPECT_EQ(clock.ToRemote(10'500), 10'000);
}

TEST(PeerClock, PointsBothWaysSynchronize) {
  // The peer's clock is 1 ms ahead of ours; packets take 50 us each way.
  PeerClock clock;
  constexpr int64_t kAhead = kMs, kWire = 50'000;
  for (int64_t t = 0; t < 2 * kS; t += 100 * kMs) {
    ASSERT_TRUE(clock.AddPoint(t + kAhead, t + kWire, true));  // its send, our receive
    ASSERT_TRUE(clock.AddPoint(t + 10 * kMs + kAhead + kWire, t + 10 * kMs, false));  // ours
  }
  ASSERT_TRUE(clock.Synchronized());
  // Within the wire time, and what the slopes allow over the points' span.
  EXPECT_LE(clock.pair().accuracy(), 2 * kWire);
  EXPECT_NEAR(clock.ToLocal(kS + kAhead), kS, 2 * kWire);
  EXPECT_NEAR(clock.ToRemote(kS), kS + kAhead, 2 * kWire);
  EXPECT_EQ(clock.resets(), 0u);
}

TEST(PeerClock, OurClockGoingBackStartsOver) {
  PeerClock clock;
  ASSERT_TRUE(clock.AddPoint(5 * kS, 5 * kS, true));
  clock.AddDelay(5 * kS, 5 * kS);
  // A receive more than a second before the last one: this host restarted, or a replay looped.
  ASSERT_TRUE(clock.AddPoint(kS, kS + 100, true));
  EXPECT_EQ(clock.resets(), 1u);
  EXPECT_FALSE(clock.Judging());  // the one-way estimate went with the old line
}

TEST(PeerClock, ALateSampleOfOurSendFromBeforeTheStartIsDropped) {
  PeerClock clock;
  ASSERT_TRUE(clock.AddPoint(10 * kS, 10 * kS, true));
  // The peer's sample of a send of ours long before the line's first point: a leftover.
  EXPECT_FALSE(clock.AddPoint(7 * kS, 7 * kS, false));
  EXPECT_EQ(clock.resets(), 0u);
  // Within a second of it: a point.
  EXPECT_TRUE(clock.AddPoint(int64_t{9'500} * kMs, int64_t{9'500} * kMs, false));
}

TEST(PeerClock, ALineIsOutlivedPastItsSpanAndTenSeconds) {
  PeerClock clock;
  EXPECT_FALSE(clock.Outlived(100 * kS));  // no points: nothing to outlive
  ASSERT_TRUE(clock.AddPoint(0, 0, true));
  ASSERT_TRUE(clock.AddPoint(kS, kS, true));
  EXPECT_FALSE(clock.Outlived(11 * kS));
  EXPECT_TRUE(clock.Outlived(11 * kS + 1));
  // Points over 20 s, none more than 10 s after the last: it may be extrapolated 20 s.
  for (int64_t t = 5 * kS; t <= 20 * kS; t += 5 * kS) ASSERT_TRUE(clock.AddPoint(t, t, true));
  EXPECT_EQ(clock.resets(), 0u);
  EXPECT_FALSE(clock.Outlived(40 * kS));
  EXPECT_TRUE(clock.Outlived(40 * kS + 1));
  // A point past that starts the line over.
  ASSERT_TRUE(clock.AddPoint(50 * kS, 50 * kS, true));
  EXPECT_EQ(clock.resets(), 1u);
}

TEST(PeerClock, AnEdgeSentAfterItsReceiveOrLongBeforeIsAnotherPackets) {
  PeerClock clock;
  ASSERT_TRUE(clock.AddPoint(1000, 1500, true));
  clock.AddDelay(1000, 1500);
  EXPECT_TRUE(clock.Plausible(2000, 2600));
  EXPECT_TRUE(clock.Plausible(2000, 2000));             // within the 1 ms of slack
  EXPECT_FALSE(clock.Plausible(10 * kMs, 1500));        // sent 8.5 ms after its receive
  EXPECT_FALSE(clock.Plausible(1000, 11 * kS + 1500));  // more than 10 s before it
}

}  // namespace
}  // namespace waitpath
