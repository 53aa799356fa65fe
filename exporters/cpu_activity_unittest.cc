#include "exporters/cpu_activity.h"

#include <gtest/gtest.h>

#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

using Kind = CpuActivity::Kind;

int32_t Name(const char* s) {
  return static_cast<int32_t>(StringTable::Global().Intern(s));
}

// Two tasks on CPU 0, an irq inside a softirq over the second; an idle CPU 1.
std::vector<Event> Script() {
  return {
      SwitchEvent(100, 0, 0, 10, 0, -1, Name("a")),
      SwitchEvent(105, 1, 0, 0, 0, -1, -1),
      SwitchEvent(200, 0, 10, 20, 1, Name("a"), Name("b")),
      SoftirqEvent(EventKind::kSoftirqEntry, 250, 0, 3),
      IrqEntryEvent(260, 0, 42, Name("eth0-TxRx-0")),
      IrqExitEvent(270, 0, 42),
      SoftirqEvent(EventKind::kSoftirqExit, 280, 0, 3),
      SwitchEvent(300, 0, 20, 0, 1, Name("b"), -1),
  };
}

TEST(CpuActivityTest, TasksAndNestedInterruptsBecomeSlices) {
  CpuActivity cpus({}, 100);
  for (const Event& e : Script()) cpus.Observe(e);
  cpus.Finish();
  const auto& s = cpus.slices();
  ASSERT_EQ(s.size(), 4u);  // a, irq, softirq, b; idle is not drawn
  EXPECT_EQ(s[0].kind, Kind::kTask);
  EXPECT_EQ(s[0].tid, 10);
  EXPECT_EQ(s[0].start, 100);
  EXPECT_EQ(s[0].end, 200);
  EXPECT_EQ(s[1].kind, Kind::kIrq);
  EXPECT_EQ(StringTable::Global().Get(s[1].name), "eth0-TxRx-0");
  EXPECT_EQ(s[1].tid, 20);  // the task it ran over
  EXPECT_EQ(s[2].kind, Kind::kSoftirq);
  EXPECT_EQ(StringTable::Global().Get(s[2].name), "softirq NET_RX");
  EXPECT_EQ(s[2].start, 250);
  EXPECT_EQ(s[2].end, 280);
  EXPECT_EQ(s[3].tid, 20);
  ASSERT_NE(cpus.RanAt(0, 10, 150), nullptr);
  EXPECT_EQ(cpus.RanAt(0, 10, 150)->start, 100);
  ASSERT_NE(cpus.RanAt(0, 20, 300), nullptr);  // its end included: it wakes, then switches out
  EXPECT_EQ(cpus.RanAt(0, 20, 300)->cpu, 0);
  EXPECT_EQ(cpus.RanAt(0, 20, 301), nullptr);
  EXPECT_EQ(cpus.RanAt(0, 10, 250), nullptr);
  EXPECT_EQ(cpus.RanAt(1, 10, 150), nullptr);
  // A wake-up from interrupt context at t: the innermost interrupt holding t.
  ASSERT_NE(cpus.InterruptAt(0, 265), nullptr);
  EXPECT_EQ(cpus.InterruptAt(0, 265)->kind, Kind::kIrq);
  ASSERT_NE(cpus.InterruptAt(0, 275), nullptr);
  EXPECT_EQ(cpus.InterruptAt(0, 275)->kind, Kind::kSoftirq);
  EXPECT_EQ(cpus.InterruptAt(0, 290), nullptr);
  EXPECT_EQ(cpus.InterruptAt(1, 265), nullptr);
}

TEST(CpuActivityTest, OffsetsCountFromTheFirstEventAndSlicesAreClipped) {
  TimelineWindow w;
  w.from = 50;
  w.from_is_offset = true;  // 150
  w.to = 265;               // absolute
  CpuActivity cpus(w, 100);
  for (const Event& e : Script()) cpus.Observe(e);
  cpus.Finish();
  EXPECT_EQ(cpus.window().from, 150);
  ASSERT_EQ(cpus.slices().size(), 4u);
  EXPECT_EQ(cpus.slices()[0].start, 150);  // a, clipped
  for (const auto& s : cpus.slices()) {
    EXPECT_GE(s.start, 150);
    EXPECT_LE(s.end, 265);
  }
}

TEST(CpuActivityTest, ALossClosesWhatWasOpenAndAnUnmatchedExitClosesNothing) {
  CpuActivity cpus({}, 100);
  cpus.Observe(SwitchEvent(100, 0, 0, 10, 0, -1, Name("a")));
  cpus.Observe(IrqExitEvent(110, 0, 1));  // its entry was lost
  cpus.Observe(IrqEntryEvent(120, 0, 1));
  cpus.Observe(LostEvent(150, 0, 12, 130));
  cpus.Observe(SwitchEvent(400, 0, 0, 10, 0, -1, Name("a")));  // prev unknown after the loss
  cpus.Finish();
  ASSERT_EQ(cpus.slices().size(), 2u);
  EXPECT_EQ(cpus.slices()[0].kind, Kind::kIrq);
  EXPECT_EQ(cpus.slices()[0].end, 150);
  EXPECT_EQ(cpus.slices()[1].end, 150);
}

// The irq's exit was lost: the softirq's exit closes it too, and an irq exit after that has
// nothing of its kind to close.
TEST(CpuActivityTest, AnExitClosesTheInterruptsInsideItWhoseExitsWereLost) {
  CpuActivity cpus({}, 100);
  cpus.Observe(SwitchEvent(100, 0, 0, 10, 0, -1, Name("a")));
  cpus.Observe(SoftirqEvent(EventKind::kSoftirqEntry, 110, 0, 3));
  cpus.Observe(IrqEntryEvent(120, 0, 42, Name("eth0-TxRx-0")));
  cpus.Observe(SoftirqEvent(EventKind::kSoftirqExit, 130, 0, 3));
  cpus.Observe(IrqExitEvent(140, 0, 42));
  cpus.Finish();
  ASSERT_EQ(cpus.slices().size(), 3u);
  EXPECT_EQ(cpus.slices()[0].kind, Kind::kIrq);
  EXPECT_EQ(cpus.slices()[0].end, 130);
  EXPECT_EQ(cpus.slices()[1].kind, Kind::kSoftirq);
  EXPECT_EQ(cpus.slices()[1].end, 130);
  EXPECT_EQ(cpus.slices()[2].kind, Kind::kTask);
}

TEST(CpuActivityTest, StopsRecordingAtItsCap) {
  CpuActivity cpus({}, 2);
  for (const Event& e : Script()) cpus.Observe(e);
  cpus.Finish();
  EXPECT_EQ(cpus.slices().size(), 2u);
  EXPECT_TRUE(cpus.overflowed());
}

}  // namespace
}  // namespace waitpath
