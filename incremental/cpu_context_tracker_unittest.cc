#include "incremental/cpu_context_tracker.h"

#include <gtest/gtest.h>

#include "live/event.h"

namespace waitpath {
namespace {

IrqFrame Frame(IrqFrame::Type type, int32_t number) {
  return IrqFrame{type, number, 0};
}

TEST(CpuContextTrackerTest, CpusGrowOnDemandAndStartUnknown) {
  CpuContextTracker t;
  EXPECT_EQ(t.size(), 0u);
  CpuContext& c3 = t.cpu(3);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_FALSE(c3.known);
  EXPECT_EQ(c3.current, kNoTask);
  EXPECT_TRUE(c3.frames.empty());
  c3.current = 9;
  c3.frames.push_back(Frame(IrqFrame::Type::kHardIrq, 1));
  t.cpu(7);  // growing keeps the state of existing CPUs
  EXPECT_EQ(t.cpu(3).current, 9u);
  EXPECT_EQ(t.cpu(3).frames.size(), 1u);
}

TEST(ClassifyInterruptTest, WhatHappenedInsideDecidesFirst) {
  IrqFrame f = Frame(IrqFrame::Type::kIpi, kIpiCallFunction);
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kIpi);
  f.timer = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kTimer);
  f.disk = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kDisk);
  f.packet = true;
  EXPECT_EQ(ClassifyInterrupt(f, ""), Leaf::kNetwork);

  IrqFrame nic = Frame(IrqFrame::Type::kHardIrq, 30);
  nic.disk = true;  // a block completion inside a NIC's irq is still disk
  EXPECT_EQ(ClassifyInterrupt(nic, "eth0"), Leaf::kDisk);
}

TEST(ClassifyInterruptTest, SoftirqVectors) {
  const auto softirq = [](int32_t vec) {
    return ClassifyInterrupt(Frame(IrqFrame::Type::kSoftIrq, vec), "");
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
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Type::kTimer, 0), ""), Leaf::kTimer);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Type::kIpi, kIpiLocalTimer), ""), Leaf::kTimer);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Type::kIpi, kIpiReschedule), ""), Leaf::kIpi);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Type::kIpi, kIpiOther), ""), Leaf::kIpi);
  EXPECT_EQ(ClassifyInterrupt(Frame(IrqFrame::Type::kFromFlags, 0), ""), Leaf::kIrq);
}

TEST(ClassifyInterruptTest, HardIrqsByDeviceName) {
  const auto hard = [](std::string_view name) {
    return ClassifyInterrupt(Frame(IrqFrame::Type::kHardIrq, 11), name);
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
