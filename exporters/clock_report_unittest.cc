#include "exporters/clock_report.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

HostClock Clock(SyncQuality quality, bool on_tree, uint64_t matches, double accuracy = 0) {
  HostClock c;
  c.host = "b";
  c.reference = "a";
  c.quality = quality;
  c.on_tree = on_tree;
  c.matches = matches;
  c.accuracy = accuracy;
  return c;
}

// The one line `analyze` and `live` print per host says what its times are in.
TEST(ClockSummaryTest, SaysWhetherTheHostsTimesAreMapped) {
  EXPECT_EQ(ClockSummary(Clock(SyncQuality::kAccurate, true, 14, 98900)),
            "b: clock accurate +/-98.9 us to a (14 packets)");
  EXPECT_EQ(ClockSummary(Clock(SyncQuality::kIncomplete, false, 0)),
            "b: clock incomplete to a (0 packets matched; its times are its own clock's, shifted "
            "by the traces' clock offsets)");
  EXPECT_EQ(ClockSummary(Clock(SyncQuality::kFail, false, 1200)),
            "b: clock fail to a (1200 packets matched, and no clock line fits them all; its times "
            "are its own clock's, shifted by the traces' clock offsets)");
  EXPECT_EQ(ClockSummary(Clock(SyncQuality::kFail, true, 40, 120000)),
            "b: clock fail to a (40 packets matched, and the later ones contradict the line found "
            "before them; its times still use that line, +/-120.0 us before)");
}

}  // namespace
}  // namespace waitpath
