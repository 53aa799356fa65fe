#include "tools/replay/replay_pacer.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

TEST(ReplayPacer, DueTimeIsTraceTimeOverSpeed) {
  ReplayPacer real_time(1.0);
  real_time.Start(1'000'000, 0);
  EXPECT_EQ(real_time.DueAfterNs(1'000'000), 0);
  EXPECT_EQ(real_time.DueAfterNs(3'000'000), 2'000'000);

  ReplayPacer fast(10.0);
  fast.Start(1'000'000, 0);
  EXPECT_EQ(fast.DueAfterNs(3'000'000), 200'000);
  EXPECT_EQ(fast.DueAfterNs(500), 0);  // before the first event: due at once
}

TEST(ReplayPacer, AsapNeverWaits) {
  ReplayPacer asap(0);
  std::atomic<bool> stop{false};
  const int64_t before = ReplayPacer::MonotonicNs();
  EXPECT_TRUE(asap.WaitUntilDue(0, stop));
  EXPECT_TRUE(asap.WaitUntilDue(60'000'000'000, stop));  // a minute later in the trace
  EXPECT_LT(ReplayPacer::MonotonicNs() - before, 1'000'000'000);
}

TEST(ReplayPacer, WaitsUntilDueAndStopsOnRequest) {
  ReplayPacer pacer(1.0);
  std::atomic<bool> stop{false};
  const int64_t before = ReplayPacer::MonotonicNs();
  EXPECT_TRUE(pacer.WaitUntilDue(5'000'000'000, stop));  // the first event fixes the origin
  EXPECT_TRUE(pacer.WaitUntilDue(5'005'000'000, stop));  // 5 ms later
  EXPECT_GE(ReplayPacer::MonotonicNs() - before, 5'000'000);
  stop = true;
  EXPECT_FALSE(pacer.WaitUntilDue(5'000'000'000'000, stop));  // would be an hour: returns now
}

}  // namespace
}  // namespace waitpath
