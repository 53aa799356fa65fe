#include "readers/host_timeline.h"

#include <gtest/gtest.h>

#include <limits>

namespace waitpath {
namespace {

TEST(HostTimelineTest, RegressionsAreClampedAndCounted) {
  HostTimeline t;
  EXPECT_EQ(t.last(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(t.Event(100), 100);
  EXPECT_EQ(t.Event(90), 100) << "a timestamp going back is clamped to the last one";
  EXPECT_EQ(t.regressions(), 1u);
  EXPECT_EQ(t.Event(100), 100) << "equal is no regression";
  EXPECT_EQ(t.regressions(), 1u);
  EXPECT_EQ(t.Clamp(50), 100);
  EXPECT_EQ(t.regressions(), 2u);
  EXPECT_EQ(t.Event(120), 120);
  EXPECT_EQ(t.last(), 120);
}

TEST(HostTimelineTest, FirstLastAndWatermarkFollowEvents) {
  HostTimeline t;
  EXPECT_EQ(t.first_event(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(t.last_event(), std::numeric_limits<int64_t>::min());
  t.Event(10);
  t.Event(30);
  EXPECT_EQ(t.first_event(), 10);
  EXPECT_EQ(t.last_event(), 30);
  EXPECT_EQ(t.watermark(), 30);
  // A loss marker's clamp moves the host's time, not the event figures.
  EXPECT_EQ(t.Clamp(40), 40);
  EXPECT_EQ(t.last_event(), 30);
  EXPECT_EQ(t.watermark(), 30);
  t.Idle(50);
  EXPECT_EQ(t.watermark(), 50);
  t.Idle(45);
  EXPECT_EQ(t.watermark(), 50) << "the watermark never goes back";
  EXPECT_EQ(t.last(), 40) << "inactivity does not move the host's time";
}

}  // namespace
}  // namespace waitpath
