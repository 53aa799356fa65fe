#include "incremental/history_store.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

// The counts equal what the histories hold, whatever changed them.
void ExpectCountsExact(const HistoryStore& store) {
  uint64_t segments = 0, origins = 0;
  for (Utid u = 0; u < store.size(); ++u) {
    segments += store[u].size();
    origins += store[u].origins();
  }
  EXPECT_EQ(store.segments(), segments);
  EXPECT_EQ(store.origins(), origins);
}

WaitLink FollowTask(Utid waker) {
  return WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, waker};
}

TEST(HistoryStoreTest, BeginsOnceAndMakesRoomForLaterTasks) {
  HistoryStore store;
  store.Add(2);
  EXPECT_EQ(store.size(), 3u);
  EXPECT_TRUE(store[2].empty());
  EXPECT_TRUE(store.Begin(4, 10, SegmentKind::kRunning));
  EXPECT_EQ(store.size(), 5u);
  EXPECT_FALSE(store.Begin(4, 20, SegmentKind::kBlocked));  // begun already: unchanged
  EXPECT_EQ(store[4].size(), 1u);
  EXPECT_EQ(store[4].back().kind, SegmentKind::kRunning);
  EXPECT_EQ(store[4].start(), 10);
  ExpectCountsExact(store);
}

TEST(HistoryStoreTest, SwitchCountsOnlyNewSegments) {
  HistoryStore store;
  store.Begin(0, 0, SegmentKind::kRunning);
  store.Switch(0, 5, SegmentKind::kRunning);  // same state: nothing new
  EXPECT_EQ(store.segments(), 1u);
  store.Switch(0, 10, SegmentKind::kInterrupted);
  store.Switch(0, 10, SegmentKind::kRunning);  // zero-length: replaces the open segment
  EXPECT_EQ(store.segments(), 2u);
  store.Switch(0, 20, SegmentKind::kBlocked);
  EXPECT_EQ(store.segments(), 3u);
  ExpectCountsExact(store);
}

TEST(HistoryStoreTest, ResolveKeepsAnOriginOnlyForAWaitThatFollowsATask) {
  HistoryStore store;
  store.Begin(0, 0, SegmentKind::kRunning);  // the waker
  store.Begin(1, 0, SegmentKind::kRunning);
  store.Switch(1, 10, SegmentKind::kBlocked);
  store.Resolve(1, 30, FollowTask(0), StateVec::Of(Leaf::kRunning, 20), StateVec{},
                SegmentKind::kPreempted);
  EXPECT_EQ(store.origins(), 1u);
  store.Switch(1, 40, SegmentKind::kBlocked);
  store.Resolve(1, 50, WaitLink{WaitLink::Type::kLeaf, Leaf::kTimer},
                StateVec::Of(Leaf::kTimer, 10), StateVec{}, SegmentKind::kPreempted);
  EXPECT_EQ(store.origins(), 1u);  // a timer's wait keeps none
  EXPECT_EQ(store[1].size(), 5u);
  ExpectCountsExact(store);
}

TEST(HistoryStoreTest, EvictionAndDropsKeepTheCountsExact) {
  HistoryStore store;
  store.Begin(0, 0, SegmentKind::kRunning);
  store.Begin(1, 0, SegmentKind::kRunning);
  for (int64_t t = 10; t <= 100; t += 10) {
    store.Switch(1, t, SegmentKind::kBlocked);
    store.Resolve(1, t + 5, FollowTask(0), StateVec::Of(Leaf::kRunning, 5), StateVec{},
                  SegmentKind::kRunning);
  }
  ExpectCountsExact(store);
  const uint64_t before = store.segments();
  store.EvictBefore(1, 52);  // the segments that ended by 52 go; the one holding 52 stays
  EXPECT_EQ(store[1].start(), 50);
  EXPECT_EQ(store.evicted_segments(), before - store.segments());
  ExpectCountsExact(store);
  store.Drop(1);
  EXPECT_TRUE(store[1].empty());
  EXPECT_EQ(store.segments(), 1u);
  EXPECT_EQ(store.origins(), 0u);
  ExpectCountsExact(store);
  // A dropped history can begin again (its Utid reused by a later task).
  EXPECT_TRUE(store.Begin(1, 200, SegmentKind::kPreempted));
  ExpectCountsExact(store);
}

}  // namespace
}  // namespace waitpath
