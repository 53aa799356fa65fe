#include "model/loss_marker.h"

#include <gtest/gtest.h>

#include <limits>

namespace waitpath {
namespace {

TEST(LossMarkerTest, CarriesWhereWhenAndHowMany) {
  const Event e = LossMarker(3, 5, 1000, 900, 42);
  EXPECT_EQ(e.kind, EventKind::kLost);
  EXPECT_EQ(e.host, 3);
  EXPECT_EQ(e.cpu, 5);
  EXPECT_EQ(e.ts, 1000);
  EXPECT_EQ(e.x, 900);
  EXPECT_EQ(e.a, 42);
  EXPECT_EQ(e.cur_tid, -1);
  EXPECT_EQ(e.cur_pid, -1);
  EXPECT_EQ(e.b, 0);
  EXPECT_EQ(e.ctx, 0);
}

TEST(LossMarkerTest, CountIsCappedOrUnknown) {
  EXPECT_EQ(LossCount(true, 7), 7);
  EXPECT_EQ(LossCount(true, 0), 0);
  EXPECT_EQ(LossCount(true, std::numeric_limits<uint64_t>::max()),
            std::numeric_limits<int32_t>::max());
  EXPECT_EQ(LossCount(false, 7), -1);
}

TEST(LossMarkerTest, OneUnknownLossPerCpu) {
  std::vector<Event> out;
  const std::vector<uint16_t> cpus{0, 2, 7};
  AppendLossMarkers(out, 1, cpus, 555);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].cpu, cpus[i]);
    EXPECT_EQ(out[i].ts, 555);
    EXPECT_EQ(out[i].x, 555);
    EXPECT_EQ(out[i].a, -1);
    EXPECT_EQ(out[i].host, 1);
  }
}

}  // namespace
}  // namespace waitpath
