#include "live/event_decoder.h"

#include <gtest/gtest.h>

#include "live/event_builders.h"

namespace waitpath {
namespace {

// Decoding itself is exercised on real traces in host_reader_unittest.cc; here the dialect
// summary users see in `waitpath stats`.
TEST(EventDecoderTest, DialectNames) {
  EXPECT_EQ(DialectName(kDialectPerf | kDialectHasSwitch | kDialectHasWaking),
            "perf +sched_waking");
  EXPECT_EQ(DialectName(kDialectLttngLegacy | kDialectHasSwitch | kDialectSeedAddons),
            "lttng<2.7 +seed-addons sched_wakeup-only");
  EXPECT_EQ(DialectName(kDialectLttngModern | kDialectHasSwitch | kDialectHasWaking |
                        kDialectNetworkHeader),
            "lttng>=2.7 +network_header +sched_waking");
  EXPECT_EQ(DialectName(kDialectLttngModern | kDialectHasSwitch | kDialectHasWaking |
                        kDialectNetworkHeader | kDialectKmodTcp | kDialectKmodCgroup),
            "lttng>=2.7 +network_header +kmod-tcp +kmod-cgroup +sched_waking");
  EXPECT_EQ(DialectName(0), "unknown (no kernel scheduler events)");
}

TEST(EventDecoderTest, KindNamesAreComplete) {
  for (int k = 0; k < kEventKindCount; ++k) {
    EXPECT_NE(EventKindName(static_cast<EventKind>(k)), "invalid");
  }
  EXPECT_EQ(EventKindName(EventKind::kSchedSwitch), "sched_switch");
}

// The views name the slots; code that still reads them by position (the readers' loss
// markers, the clock sync's packet keys, the replay format) relies on where they are.
TEST(EventViewsTest, NamedFieldsAreTheSlotsReadByPosition) {
  const Event sw = SwitchEvent(10, 1, 20, 30, 0x80, 4, 5);
  EXPECT_EQ(sw.kind, EventKind::kSchedSwitch);
  EXPECT_EQ(sw.ts, 10);
  EXPECT_EQ(sw.cpu, 1);
  EXPECT_EQ(sw.cur_tid, -1);
  EXPECT_EQ(AsSchedSwitch(sw).prev_tid(), 20);
  EXPECT_EQ(AsSchedSwitch(sw).next_tid(), sw.b);
  EXPECT_EQ(AsSchedSwitch(sw).prev_state(), 0x80);

  Event packet = PacketEvent(EventKind::kPacketIn, 10, 0, 60, 0xbeef);
  EXPECT_EQ(AsPacket(packet).key(), -1);  // no key unless the decoder appended one
  AsPacket(packet).key() = 3;
  EXPECT_EQ(packet.a, 3);
  EXPECT_EQ(packet.x, 0xbeef);

  const Event lost = LostEvent(10, 2, 17, 5);
  EXPECT_EQ(lost.a, 17);
  EXPECT_EQ(lost.x, 5);

  // Fields a kind does not have stay absent.
  const Event timer = MakeEvent(EventKind::kHrtimerEntry, 10, 0);
  EXPECT_EQ(timer.a, -1);
  EXPECT_EQ(timer.c, -1);
  EXPECT_EQ(AsHrtimer(timer).hrtimer(), 0);
}

}  // namespace
}  // namespace waitpath
