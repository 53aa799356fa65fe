#include "live/event_decoder.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

// Decoding itself is exercised on real traces in host_reader_unittest.cc; here the dialect
// summary users see in `waitpath stats`.
TEST(EventDecoderTest, DialectNames) {
  EXPECT_EQ(DialectName(kDialectPerf | kDialectHasSwitch | kDialectHasWaking), "perf +sched_waking");
  EXPECT_EQ(DialectName(kDialectLttngLegacy | kDialectHasSwitch | kDialectSeedAddons),
            "lttng<2.7 +seed-addons sched_wakeup-only");
  EXPECT_EQ(DialectName(kDialectLttngModern | kDialectHasSwitch | kDialectHasWaking | kDialectNetworkHeader),
            "lttng>=2.7 +network_header +sched_waking");
  EXPECT_EQ(DialectName(0), "unknown (no kernel scheduler events)");
}

TEST(EventDecoderTest, KindNamesAreComplete) {
  for (int k = 0; k < kEventKindCount; ++k) {
    EXPECT_NE(EventKindName(static_cast<EventKind>(k)), "invalid");
  }
  EXPECT_EQ(EventKindName(EventKind::kSchedSwitch), "sched_switch");
}

}  // namespace
}  // namespace waitpath
