#include "incremental/cpu_context_tracker.h"

#include <gtest/gtest.h>

#include "model/event.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

IrqFrame Frame(IrqFrame::Kind kind, int32_t number) {
  return IrqFrame{kind, number, 0};
}

constexpr int32_t kNetRx = 3;  // softirq vector

class CpuContextTrackerTest : public ::testing::Test {
 protected:
  CpuContextTrackerTest() { t.cpu(0); }  // CPUs are added before other calls name them

  CpuContextTracker t;
};

TEST_F(CpuContextTrackerTest, CpusGrowOnDemandAndStartUnknown) {
  EXPECT_EQ(t.size(), 1u);
  const CpuContext& c3 = t.cpu(3);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_FALSE(c3.known);
  EXPECT_EQ(c3.current, kNoTask);
  EXPECT_TRUE(c3.frames.empty());
  t.SetCurrent(3, 9, "make");
  t.EnterInterrupt(3, Frame(IrqFrame::Kind::kHardIrq, 1));
  t.cpu(7);  // growing keeps the state of existing CPUs
  EXPECT_TRUE(t.cpu(3).known);
  EXPECT_EQ(t.cpu(3).current, 9u);
  EXPECT_EQ(t.cpu(3).frames.size(), 1u);
  EXPECT_FALSE(t.cpu(7).known);
}

// Only the outermost context interrupts the task, and only leaving it resumes the task.
TEST_F(CpuContextTrackerTest, InterruptsNestOverTheCurrentTask) {
  t.SetCurrent(0, 7, "worker");
  EXPECT_EQ(t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 30)), 7u);
  EXPECT_TRUE(t.InInterrupt(0));
  EXPECT_EQ(t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kNetRx)), kNoTask);
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kSoftIrq), kNoTask);
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kHardIrq), 7u);
  EXPECT_FALSE(t.InInterrupt(0));
  // An exit without its entry closes nothing.
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kHardIrq), kNoTask);
  // Over the idle task there is nobody to interrupt.
  t.SetCurrent(0, kNoTask, {});
  EXPECT_EQ(t.EnterInterrupt(0, Frame(IrqFrame::Kind::kIpi, kIpiReschedule)), kNoTask);
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kIpi), kNoTask);
  // A switch ends contexts whose exit was not seen.
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 30));
  t.LeaveInterrupts(0);
  EXPECT_FALSE(t.InInterrupt(0));
}

// An exit closes the innermost context of its kind: the contexts inside it are over too, their
// exits lost.
TEST_F(CpuContextTrackerTest, AnExitClosesTheInnermostContextOfItsKind) {
  t.SetCurrent(0, 7, "worker");
  EXPECT_EQ(t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 30)), 7u);
  EXPECT_EQ(t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kNetRx)), kNoTask);
  // The softirq's exit was lost: the irq's exit closes both and the task resumes.
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kHardIrq), 7u);
  EXPECT_FALSE(t.InInterrupt(0));
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kTask);

  // An exit whose entry was lost closes nothing, not the context open inside it.
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 30));
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kSoftIrq), kNoTask);
  EXPECT_EQ(t.cpu(0).frames.size(), 1u);
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kHardIrq), 7u);

  // A timer closed with the softirq around it marks that softirq, which ends too; the irq
  // outside both ran no timer.
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 30));
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kNetRx));
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kTimer, 0));
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kSoftIrq), kNoTask);
  ASSERT_EQ(t.cpu(0).frames.size(), 1u);
  EXPECT_EQ(t.cpu(0).frames.innermost().kind, IrqFrame::Kind::kHardIrq);
  EXPECT_FALSE(t.cpu(0).frames.innermost().timer);
  EXPECT_EQ(t.ExitInterrupt(0, IrqFrame::Kind::kHardIrq), 7u);
}

TEST_F(CpuContextTrackerTest, WakerFromTaskIdleOrUnknownCpu) {
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kUnknown);  // never seen
  t.SetCurrent(0, kNoTask, {});
  // The idle task wakes others only from interrupts that were not traced.
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kLeaf);
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kIrq);
  t.SetCurrent(0, 5, "bash");
  const WaitLink task = t.Waker(0, 0);
  EXPECT_EQ(task.type, WaitLink::Type::kTask);
  EXPECT_EQ(task.task, 5u);
  // perf's flags say interrupt context even without entry events.
  EXPECT_EQ(t.Waker(0, kCtxKnown | kCtxSoftirq).leaf, Leaf::kIrq);
  EXPECT_EQ(t.Waker(0, kCtxSoftirq).type, WaitLink::Type::kTask);  // flags not carried
  t.Lost(0);
  EXPECT_FALSE(t.cpu(0).known);
  EXPECT_EQ(t.cpu(0).current, kNoTask);
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kUnknown);
}

// The local timer interrupt ran an hrtimer: a wake-up after the timer's exit, still inside
// the interrupt, is the timer's.
TEST_F(CpuContextTrackerTest, ATimerThatRanInsideMakesTheEnclosingContextATimer) {
  t.SetCurrent(0, 5, "bash");
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kHardIrq, 0));
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kIrq);
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kTimer, 0));
  t.ExitInterrupt(0, IrqFrame::Kind::kTimer);
  EXPECT_TRUE(t.cpu(0).frames.innermost().timer);
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kTimer);
}

TEST_F(CpuContextTrackerTest, APacketReceivedInsideIsFollowedToItsSender) {
  t.SetCurrent(0, 5, "bash");
  t.PacketReceived(0, 9, 100);  // in task context: nothing to record it in
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kTask);
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kNetRx));
  t.PacketReceived(0, 9, 100);
  const WaitLink packet = t.Waker(0, 0);
  EXPECT_EQ(packet.type, WaitLink::Type::kPacket);
  EXPECT_EQ(packet.leaf, Leaf::kNetwork);
  EXPECT_EQ(packet.task, 9u);
  EXPECT_EQ(packet.ts, 100);
  t.PacketReceived(0, kNoTask, 0);  // the next one's sender is not known
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kLeaf);
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kNetwork);
}

// Interrupt threads: what the thread handles is its interrupt's, as in a frame, until
// another task runs.
TEST_F(CpuContextTrackerTest, AnInterruptThreadsWakeUpsAreItsInterrupts) {
  const int32_t kRcuSoftirq = 9;
  t.SetCurrent(0, 3, "irq/130-nvme0q1");
  EXPECT_TRUE(t.cpu(0).in_irq_thread);
  EXPECT_EQ(StringTable::Global().Get(t.cpu(0).irq_thread.name), "nvme0q1");
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kDisk);  // by its name
  t.SetCurrent(0, 4, "irq/9-acpi");
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kIrq);
  t.DiskCompleted(0);
  EXPECT_EQ(t.Waker(0, 0).leaf, Leaf::kDisk);  // by what it handled
  // A frame over the thread takes what happens inside it.
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kRcuSoftirq));
  t.PacketReceived(0, 9, 100);
  t.ExitInterrupt(0, IrqFrame::Kind::kSoftIrq);
  EXPECT_FALSE(t.cpu(0).irq_thread.packet);
  t.SetCurrent(0, 6, "napi/eth0-8193");
  t.PacketReceived(0, 9, 100);
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kPacket);
  t.SetCurrent(0, 5, "bash");
  EXPECT_FALSE(t.cpu(0).in_irq_thread);
  EXPECT_EQ(t.Waker(0, 0).type, WaitLink::Type::kTask);
}

TEST_F(CpuContextTrackerTest, APacketSentFromTaskContextIsTheTasks) {
  EXPECT_EQ(t.PacketSender(0, 0), kNoTask);  // CPU not known
  t.SetCurrent(0, 5, "curl");
  EXPECT_EQ(t.PacketSender(0, 0), 5u);
  // perf's softirq bit: the stack sending (an ACK), not the task.
  EXPECT_EQ(t.PacketSender(0, kCtxKnown | kCtxSoftirq), kNoTask);
  t.EnterInterrupt(0, Frame(IrqFrame::Kind::kSoftIrq, kNetRx));
  EXPECT_EQ(t.PacketSender(0, 0), kNoTask);
}

TEST(ClassifyInterruptTest, WhatHappenedInsideDecidesFirst) {
  IrqFrame f = Frame(IrqFrame::Kind::kIpi, kIpiCallFunction);
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kIpi);
  f.timer = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kTimer);
  f.disk = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kDisk);
  f.packet = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kNetwork);

  IrqFrame nic = Frame(IrqFrame::Kind::kHardIrq, 30);
  nic.disk = true;  // a block completion inside a NIC's irq is still disk
  EXPECT_EQ(ClassifyInterrupt(nic, "eth0"), Leaf::kDisk);
}

TEST(ClassifyInterruptTest, SoftirqVectors) {
  const auto softirq = [](int32_t vec) {
    return ClassifyInterrupt(Frame(IrqFrame::Kind::kSoftIrq, vec), "");
  };
  EXPECT_EQ(softirq(0), Leaf::kIrq);      // HI
  EXPECT_EQ(softirq(1), Leaf::kTimer);    // TIMER
  EXPECT_EQ(softirq(2), Leaf::kNetwork);  // NET_TX
  EXPECT_EQ(softirq(3), Leaf::kNetwork);  // NET_RX
  EXPECT_EQ(softirq(4), Leaf::kDisk);     // BLOCK
  EXPECT_EQ(softirq(5), Leaf::kDisk);     // IRQ_POLL
  EXPECT_EQ(softirq(6), Leaf::kIrq);      // TASKLET
  EXPECT_EQ(softirq(7), Leaf::kIrq);      // SCHED
  EXPECT_EQ(softirq(8), Leaf::kTimer);    // HRTIMER
  EXPECT_EQ(softirq(9), Leaf::kIrq);      // RCU
}

TEST(ClassifyInterruptTest, TimersAndIpis) {
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Kind::kTimer, 0), ""), Leaf::kTimer);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Kind::kIpi, kIpiLocalTimer), ""), Leaf::kTimer);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Kind::kIpi, kIpiReschedule), ""), Leaf::kIpi);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Kind::kIpi, kIpiOther), ""), Leaf::kIpi);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Kind::kFromFlags, 0), ""), Leaf::kIrq);
}

TEST(ClassifyInterruptTest, HardIrqsByDeviceName) {
  const auto hard = [](std::string_view name) {
    return ClassifyInterrupt(Frame(IrqFrame::Kind::kHardIrq, 11), name);
  };
  EXPECT_EQ(hard("nvme0q1"), Leaf::kDisk);
  EXPECT_EQ(hard("ahci[0000:00:17.0]"), Leaf::kDisk);
  EXPECT_EQ(hard("eth0"), Leaf::kNetwork);
  EXPECT_EQ(hard("enp3s0-TxRx-0"), Leaf::kNetwork);
  EXPECT_EQ(hard("virtio0-input.0"), Leaf::kNetwork);
  EXPECT_EQ(hard("i8042"), Leaf::kUserInput);
  EXPECT_EQ(hard("hpet"), Leaf::kTimer);
  EXPECT_EQ(hard("acpi"), Leaf::kIrq);
  EXPECT_EQ(hard(""), Leaf::kIrq);
}

}  // namespace
}  // namespace waitpath
