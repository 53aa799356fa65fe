#include "incremental/task_history.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

TEST(TaskHistoryTest, SwitchAccumulatesOwnTime) {
  TaskHistory h;
  EXPECT_TRUE(h.empty());
  h.Begin(100, SegmentKind::kRunning);
  EXPECT_EQ(h.start(), 100);
  h.Switch(130, SegmentKind::kPreempted);
  h.Switch(150, SegmentKind::kRunning);
  h.Switch(155, SegmentKind::kInterrupted);
  h.Switch(160, SegmentKind::kRunning);
  ASSERT_EQ(h.size(), 5u);
  EXPECT_EQ(h.at(0).cum.total(), 0);
  EXPECT_EQ(h.at(1).start, 130);
  EXPECT_EQ(h.at(1).cum[Leaf::kRunning], 30);
  EXPECT_EQ(h.at(2).cum[Leaf::kPreempted], 20);
  EXPECT_EQ(h.at(4).cum[Leaf::kRunning], 35);
  EXPECT_EQ(h.at(4).cum[Leaf::kInterrupted], 5);
  EXPECT_EQ(h.back().cum.total(), 60);  // F(start) sums to start - history start
  EXPECT_FALSE(h.blocked());
}

TEST(TaskHistoryTest, SwitchToTheSameKindIsANoOp) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  h.Switch(10, SegmentKind::kRunning);
  EXPECT_EQ(h.size(), 1u);
}

TEST(TaskHistoryTest, ZeroLengthSegmentsAreReplaced) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  h.Switch(0, SegmentKind::kBlocked);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h.back().kind, SegmentKind::kBlocked);
  EXPECT_TRUE(h.blocked());
  // A zero-length wait leaves no blocked segment (and no link) behind.
  h.Resolve(0, WaitLink{WaitLink::Type::kLeaf, Leaf::kTimer}, {}, {}, SegmentKind::kPreempted);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h.back().kind, SegmentKind::kPreempted);
  EXPECT_EQ(h.back().link.type, WaitLink::Type::kPending);
}

TEST(TaskHistoryTest, ResolveAddsTheWaitsDeltaAndKeepsItsLink) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  h.Switch(10, SegmentKind::kBlocked);
  EXPECT_TRUE(h.blocked());
  EXPECT_EQ(h.back().link.type, WaitLink::Type::kPending);
  StateVec delta;
  delta[Leaf::kDisk] = 25;
  delta[Leaf::kRunning] = 5;
  const StateVec origin = StateVec::Of(Leaf::kDisk, 10);
  h.Resolve(40, WaitLink{WaitLink::Type::kLeaf, Leaf::kDisk}, delta, origin,
            SegmentKind::kPreempted);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h.at(1).link.type, WaitLink::Type::kLeaf);
  EXPECT_EQ(h.at(1).link.leaf, Leaf::kDisk);
  EXPECT_EQ(h.at(1).origin[Leaf::kDisk], 10);
  EXPECT_EQ(h.at(2).start, 40);
  EXPECT_EQ(h.at(2).kind, SegmentKind::kPreempted);
  EXPECT_EQ(h.at(2).cum[Leaf::kRunning], 15);
  EXPECT_EQ(h.at(2).cum[Leaf::kDisk], 25);
  EXPECT_FALSE(h.blocked());
}

TEST(TaskHistoryTest, FindAndEndOf) {
  TaskHistory h;
  h.Begin(10, SegmentKind::kRunning);
  h.Switch(20, SegmentKind::kPreempted);
  h.Switch(30, SegmentKind::kRunning);
  EXPECT_EQ(h.Find(10), 0u);
  EXPECT_EQ(h.Find(19), 0u);
  EXPECT_EQ(h.Find(20), 1u);
  EXPECT_EQ(h.Find(29), 1u);
  EXPECT_EQ(h.Find(1000), 2u);
  EXPECT_EQ(h.EndOf(0, 99), 20);
  EXPECT_EQ(h.EndOf(2, 99), 99);
}

TEST(TaskHistoryTest, EvictBeforeDropsEndedSegmentsKeepsTheOpenOne) {
  TaskHistory h;
  EXPECT_EQ(h.start(), std::numeric_limits<int64_t>::max());
  h.Begin(0, SegmentKind::kRunning);
  h.Switch(10, SegmentKind::kPreempted);
  h.Switch(20, SegmentKind::kRunning);
  h.Switch(30, SegmentKind::kBlocked);
  EXPECT_EQ(h.EvictBefore(9), 0u);  // the first segment has not ended by 9
  EXPECT_EQ(h.EvictBefore(20), 2u);
  EXPECT_EQ(h.start(), 20);
  EXPECT_EQ(h.evicted_until(), 20);
  EXPECT_EQ(h.at(0).cum[Leaf::kRunning], 10);  // cumulative vectors survive eviction
  EXPECT_EQ(h.EvictBefore(1000), 1u);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(h.blocked());
  EXPECT_EQ(h.start(), 30);
}

TEST(TaskHistoryTest, OwnLeafMapsEveryKind) {
  EXPECT_EQ(OwnLeaf(SegmentKind::kRunning), Leaf::kRunning);
  EXPECT_EQ(OwnLeaf(SegmentKind::kInterrupted), Leaf::kInterrupted);
  EXPECT_EQ(OwnLeaf(SegmentKind::kPreempted), Leaf::kPreempted);
  EXPECT_EQ(OwnLeaf(SegmentKind::kBlocked), Leaf::kBlocked);
  EXPECT_EQ(OwnLeaf(SegmentKind::kUnknown), Leaf::kUnknown);
}

TEST(StateVecTest, Arithmetic) {
  StateVec a = StateVec::Of(Leaf::kRunning, 5);
  a[Leaf::kTimer] = 3;
  const StateVec b = StateVec::Of(Leaf::kRunning, 2);
  EXPECT_EQ((a + b)[Leaf::kRunning], 7);
  EXPECT_EQ((a - b)[Leaf::kRunning], 3);
  EXPECT_EQ((a - b)[Leaf::kTimer], 3);
  EXPECT_EQ(a.total(), 8);
  EXPECT_EQ(LeafName(Leaf::kUserInput), "user_input");
  EXPECT_EQ(LeafName(Leaf::kUnknown), "unknown");
}

}  // namespace
}  // namespace waitpath
