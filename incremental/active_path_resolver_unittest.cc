#include "incremental/active_path_resolver.h"

#include <gtest/gtest.h>

#include <vector>

namespace waitpath {
namespace {

// Histories built by hand: the resolver only reads them.
class ActivePathResolverTest : public ::testing::Test {
 protected:
  Utid AddTask(int32_t tid, int64_t start, SegmentKind kind) {
    const Utid u = tasks_.GetOrCreate(0, tid, start);
    histories_.resize(tasks_.size());
    histories_[u].Begin(start, kind);
    return u;
  }
  // Ends x's open blocked segment at `ts`, as the engine does at a wake-up.
  void Wake(Utid x, int64_t ts, const WaitLink& link, SegmentKind next = SegmentKind::kPreempted) {
    TaskHistory& h = histories_[x];
    StateVec origin;
    const StateVec delta = resolver_.ResolveWait(link, h.back().start, ts, &origin);
    h.Resolve(ts, link, delta, origin, next);
  }
  // Sum of an expansion's pieces per leaf; checks they tile [a, b).
  StateVec ExpandSums(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* pieces) {
    pieces->clear();
    resolver_.Expand(x, a, b, pieces);
    StateVec sums;
    int64_t at = a;
    for (const PathSegment& p : *pieces) {
      EXPECT_EQ(p.start, at);
      EXPECT_LT(p.start, p.end);
      sums[p.leaf] += p.end - p.start;
      at = p.end;
    }
    EXPECT_EQ(at, b);
    return sums;
  }
  void ExpectConsistent(Utid x, int64_t a, int64_t b) {
    const StateVec d = resolver_.Delta(x, a, b);
    EXPECT_EQ(d.total(), b - a);
    for (int i = 0; i < kLeafCount; ++i) EXPECT_GE(d.ns[i], 0) << LeafName(static_cast<Leaf>(i));
    std::vector<PathSegment> pieces;
    EXPECT_EQ(ExpandSums(x, a, b, &pieces).ns, d.ns) << "[" << a << ", " << b << ")";
  }

  TaskTable tasks_;
  std::vector<TaskHistory> histories_;
  ActivePathResolver resolver_{tasks_, histories_, 8};
};

TEST_F(ActivePathResolverTest, OwnSegments) {
  const Utid x = AddTask(1, 0, SegmentKind::kRunning);
  histories_[x].Switch(10, SegmentKind::kPreempted);
  histories_[x].Switch(15, SegmentKind::kRunning);
  const StateVec d = resolver_.Delta(x, 5, 20);
  EXPECT_EQ(d[Leaf::kRunning], 10);
  EXPECT_EQ(d[Leaf::kPreempted], 5);
  std::vector<PathSegment> pieces;
  ExpandSums(x, 5, 20, &pieces);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].task, x);
  EXPECT_EQ(pieces[1].leaf, Leaf::kPreempted);
  ExpectConsistent(x, 0, 100);
}

TEST_F(ActivePathResolverTest, BeforeTheHistoryIsUnknown) {
  const Utid x = AddTask(1, 100, SegmentKind::kRunning);
  const StateVec d = resolver_.Delta(x, 50, 120);
  EXPECT_EQ(d[Leaf::kUnknown], 50);
  EXPECT_EQ(d[Leaf::kRunning], 20);
  EXPECT_EQ(resolver_.counters().evicted_reads, 0u);  // never seen is not evicted
  EXPECT_EQ(resolver_.Delta(kNoTask, 0, 7)[Leaf::kUnknown], 7);
  EXPECT_EQ(resolver_.Delta(x, 10, 10).total(), 0);
  ExpectConsistent(x, 50, 120);
}

TEST_F(ActivePathResolverTest, WaitFollowsTheWaker) {
  const Utid w = AddTask(2, 0, SegmentKind::kPreempted);
  histories_[w].Switch(30, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kRunning);
  histories_[x].Switch(10, SegmentKind::kBlocked);
  Wake(x, 50, WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, w});
  histories_[x].Switch(60, SegmentKind::kRunning);
  const StateVec d = resolver_.Delta(x, 0, 70);
  EXPECT_EQ(d[Leaf::kRunning], 10 + 20 + 10);
  EXPECT_EQ(d[Leaf::kPreempted], 20 + 10);
  std::vector<PathSegment> pieces;
  ExpandSums(x, 0, 70, &pieces);
  ASSERT_EQ(pieces.size(), 5u);
  EXPECT_EQ(pieces[1].task, w);
  EXPECT_EQ(pieces[1].leaf, Leaf::kPreempted);
  EXPECT_EQ(pieces[2].task, w);
  EXPECT_EQ(pieces[2].leaf, Leaf::kRunning);
  EXPECT_EQ(pieces[3].task, x);
  for (int64_t a : {0, 5, 10, 29, 30, 49, 50, 55}) ExpectConsistent(x, a, 70);
  ExpectConsistent(x, 12, 31);
}

TEST_F(ActivePathResolverTest, PendingWaitIsBlocked) {
  const Utid x = AddTask(1, 0, SegmentKind::kRunning);
  histories_[x].Switch(10, SegmentKind::kBlocked);
  EXPECT_EQ(resolver_.Delta(x, 0, 40)[Leaf::kBlocked], 30);
  ExpectConsistent(x, 0, 40);
}

TEST_F(ActivePathResolverTest, LeafUnknownAndNoneLinks) {
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 10, WaitLink{WaitLink::Type::kLeaf, Leaf::kDisk});
  histories_[x].Switch(11, SegmentKind::kBlocked);
  Wake(x, 20, WaitLink{WaitLink::Type::kUnknown});
  histories_[x].Switch(21, SegmentKind::kBlocked);
  Wake(x, 30, WaitLink{WaitLink::Type::kNone});
  const StateVec d = resolver_.Delta(x, 0, 30);
  EXPECT_EQ(d[Leaf::kDisk], 10);
  EXPECT_EQ(d[Leaf::kUnknown], 9);
  EXPECT_EQ(d[Leaf::kBlocked], 9);
  EXPECT_EQ(d[Leaf::kPreempted], 2);
  ExpectConsistent(x, 0, 30);
  ExpectConsistent(x, 5, 25);
}

TEST_F(ActivePathResolverTest, PacketFollowsTheSenderUntilTheSend) {
  const Utid r = AddTask(2, 0, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 100, WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, r, 60});
  const StateVec d = resolver_.Delta(x, 0, 100);
  EXPECT_EQ(d[Leaf::kRunning], 60);
  EXPECT_EQ(d[Leaf::kNetwork], 40);
  std::vector<PathSegment> pieces;
  ExpandSums(x, 0, 100, &pieces);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].task, r);
  EXPECT_EQ(pieces[1].leaf, Leaf::kNetwork);
  for (int64_t a : {0, 30, 60, 80}) ExpectConsistent(x, a, 100);
}

TEST_F(ActivePathResolverTest, PacketFromAnUnknownSenderIsNetwork) {
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 100, WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, kNoTask, 60});
  EXPECT_EQ(resolver_.Delta(x, 0, 100)[Leaf::kNetwork], 100);
  ExpectConsistent(x, 0, 100);
}

TEST_F(ActivePathResolverTest, ForkLinkFollowsTheParentBeforeBirth) {
  const Utid p = AddTask(2, 0, SegmentKind::kRunning);
  const Utid c = AddTask(3, 40, SegmentKind::kPreempted);
  tasks_[c].parent = p;
  tasks_[c].birth = 40;
  tasks_[c].parent_origin = resolver_.Cum(p, 40);  // as the engine records at the fork
  histories_[c].Switch(50, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 70, WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, c});
  const StateVec d = resolver_.Delta(x, 0, 70);
  EXPECT_EQ(d[Leaf::kRunning], 40 + 20);  // parent, then child
  EXPECT_EQ(d[Leaf::kPreempted], 10);
  EXPECT_EQ(d[Leaf::kUnknown], 0);
  std::vector<PathSegment> pieces;
  ExpandSums(x, 0, 70, &pieces);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].task, p);
  EXPECT_EQ(pieces[1].task, c);
  ExpectConsistent(x, 10, 60);
}

TEST_F(ActivePathResolverTest, DepthLimitCutsLongChainsAsUnknown) {
  // Each task waits on the next; the chain is longer than max_depth (8).
  constexpr int kChain = 12;
  std::vector<Utid> chain;
  for (int i = 0; i < kChain; ++i) chain.push_back(AddTask(100 + i, 0, SegmentKind::kBlocked));
  histories_[chain.back()] = {};
  histories_[chain.back()].Begin(0, SegmentKind::kRunning);
  // Wake from the far end first, so that each waker is resolved when its waiter wakes.
  for (int i = kChain - 2; i >= 0; --i) {
    Wake(chain[static_cast<size_t>(i)], 100 - i,
         WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, chain[static_cast<size_t>(i) + 1]});
  }
  // Inside every wait of the chain, the resolver walks the links and stops at max_depth.
  const StateVec d = resolver_.Delta(chain[0], 0, 50);
  EXPECT_EQ(d[Leaf::kUnknown], 50);
  EXPECT_GT(resolver_.counters().depth_limited, 0u);
  ExpectConsistent(chain[0], 0, 50);
  // Whole waits use the vectors stored at their wake-ups, each resolved one level down:
  // the chain's end ran until 90, then each waker was preempted until it woke the next.
  const StateVec whole = resolver_.Delta(chain[0], 0, 100);
  EXPECT_EQ(whole[Leaf::kRunning], 90);
  EXPECT_EQ(whole[Leaf::kPreempted], 10);
}

TEST_F(ActivePathResolverTest, EvictedHistoryIsUnknownAndCounted) {
  const Utid x = AddTask(1, 0, SegmentKind::kRunning);
  histories_[x].Switch(10, SegmentKind::kPreempted);
  histories_[x].Switch(20, SegmentKind::kRunning);
  resolver_.SetHorizon(15);  // as the engine does before evicting
  histories_[x].EvictBefore(15);
  // [0, 10) is gone; the task's own segment [10, 20) is still retained and read as it is.
  const StateVec d = resolver_.Delta(x, 0, 30);
  EXPECT_EQ(d[Leaf::kUnknown], 10);
  EXPECT_EQ(d[Leaf::kPreempted], 10);
  EXPECT_EQ(d[Leaf::kRunning], 10);
  EXPECT_EQ(resolver_.counters().evicted_reads, 1u);
  ExpectConsistent(x, 0, 30);
}

// A wait resolved while its waker's history was complete, queried after the waker's older
// segments were evicted: the breakdown must stay non-negative and agree with the expansion.
TEST_F(ActivePathResolverTest, QueryIntoAWaitWhoseWakerWasPartlyEvicted) {
  const Utid w = AddTask(2, 0, SegmentKind::kPreempted);
  histories_[w].Switch(8, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 10, WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, w}, SegmentKind::kRunning);
  resolver_.SetHorizon(8);  // as the engine does before evicting
  histories_[w].EvictBefore(8);
  histories_[x].EvictBefore(8);  // x's wait ends at 10: kept
  ASSERT_EQ(histories_[x].start(), 0);
  ExpectConsistent(x, 5, 12);
  const StateVec d = resolver_.Delta(x, 5, 12);
  EXPECT_EQ(d[Leaf::kUnknown], 3);
  EXPECT_EQ(d[Leaf::kRunning], 4);
  EXPECT_GT(resolver_.counters().evicted_reads, 0u);
}

// A packet wait resolved while its sender's history was whole, read after the sender's
// history before the send is gone: the stored value after the send no longer depends on it.
TEST_F(ActivePathResolverTest, PacketWaitReadAfterTheSendersHistoryWasEvicted) {
  const Utid r = AddTask(2, 0, SegmentKind::kRunning);
  histories_[r].Switch(30, SegmentKind::kPreempted);
  histories_[r].Switch(50, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  Wake(x, 100, WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, r, 60});
  const StateVec before = resolver_.Delta(x, 0, 100);
  EXPECT_EQ(before[Leaf::kPreempted], 20);
  resolver_.SetHorizon(55);  // as the engine does before evicting
  histories_[r].EvictBefore(55);
  // After the send (60) the wait is network whatever the sender's history holds now.
  for (int64_t a : {55, 60, 70}) {
    ExpectConsistent(x, a, 100);
  }
  EXPECT_EQ(resolver_.Delta(x, 70, 100)[Leaf::kNetwork], 30);
  EXPECT_EQ(resolver_.Delta(x, 55, 100)[Leaf::kRunning], 5);
  EXPECT_EQ(resolver_.Delta(x, 55, 100)[Leaf::kNetwork], 40);
}

// A packet wait resolved after the horizon passed its send: only the part before the send
// read the sender's history, so only that part is unknown (owned by the sender); the flight
// stays network.
TEST_F(ActivePathResolverTest, PacketWaitOlderThanTheHorizonIsUnknownOnlyBeforeTheSend) {
  const Utid r = AddTask(2, 0, SegmentKind::kRunning);
  const Utid x = AddTask(1, 0, SegmentKind::kBlocked);
  resolver_.SetHorizon(80);
  histories_[r].EvictBefore(80);
  StateVec origin;
  const WaitLink link{WaitLink::Type::kPacket, Leaf::kNetwork, r, 60};
  const StateVec d = resolver_.ResolveWait(link, 0, 100, &origin);
  EXPECT_EQ(d[Leaf::kUnknown], 60);
  EXPECT_EQ(d[Leaf::kNetwork], 40);
  Wake(x, 100, link);
  std::vector<PathSegment> pieces;
  EXPECT_EQ(ExpandSums(x, 0, 100, &pieces).ns, d.ns);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].task, r);  // the task whose history was gone
  EXPECT_EQ(pieces[0].leaf, Leaf::kUnknown);
  ExpectConsistent(x, 80, 100);
}

// One horizon for every host: a chain that crosses to another host reads that host's history
// only from the horizon on, though the other host's own clock is behind.
TEST_F(ActivePathResolverTest, ChainAcrossHostsReadsNothingBeforeTheHorizon) {
  const Utid w = tasks_.GetOrCreate(1, 7, 0);  // on host 1
  histories_.resize(tasks_.size());
  histories_[w].Begin(0, SegmentKind::kRunning);
  histories_[w].Switch(40, SegmentKind::kPreempted);
  resolver_.SetHorizon(50);
  StateVec origin;
  const StateVec d =
      resolver_.ResolveWait(WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, w}, 0, 100, &origin);
  EXPECT_EQ(d[Leaf::kUnknown], 50);
  EXPECT_EQ(d[Leaf::kPreempted], 50);
  EXPECT_EQ(d[Leaf::kRunning], 0);
}

}  // namespace
}  // namespace waitpath
