#include "incremental/task_history.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

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
  EXPECT_EQ(h.cum(0).total(), 0);
  EXPECT_EQ(h.at(1).start, 130);
  EXPECT_EQ(h.cum(1)[Leaf::kRunning], 30);
  EXPECT_EQ(h.cum(2)[Leaf::kPreempted], 20);
  EXPECT_EQ(h.cum(4)[Leaf::kRunning], 35);
  EXPECT_EQ(h.cum(4)[Leaf::kInterrupted], 5);
  EXPECT_EQ(h.back_cum().total(), 60);  // F(start) sums to start - history start
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
  EXPECT_EQ(h.link(h.size() - 1).type, WaitLink::Type::kPending);
}

TEST(TaskHistoryTest, ResolveAddsTheWaitsDeltaAndKeepsItsLink) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  h.Switch(10, SegmentKind::kBlocked);
  EXPECT_TRUE(h.blocked());
  EXPECT_EQ(h.link(h.size() - 1).type, WaitLink::Type::kPending);
  StateVec delta;
  delta[Leaf::kDisk] = 25;
  delta[Leaf::kRunning] = 5;
  const StateVec origin = StateVec::Of(Leaf::kDisk, 10);
  h.Resolve(40, WaitLink{WaitLink::Type::kLeaf, Leaf::kDisk}, delta, origin,
            SegmentKind::kPreempted);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h.link(1).type, WaitLink::Type::kLeaf);
  EXPECT_EQ(h.link(1).leaf, Leaf::kDisk);
  EXPECT_EQ(h.origins(), 0u);  // a leaf's origin is its time at the start: not kept
  EXPECT_EQ(h.at(2).start, 40);
  EXPECT_EQ(h.at(2).kind, SegmentKind::kPreempted);
  EXPECT_EQ(h.cum(2)[Leaf::kRunning], 15);
  EXPECT_EQ(h.cum(2)[Leaf::kDisk], 25);
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
  EXPECT_EQ(h.EvictBefore(9).segments, 0u);  // the first segment has not ended by 9
  EXPECT_EQ(h.EvictBefore(20).segments, 2u);
  EXPECT_EQ(h.start(), 20);
  EXPECT_EQ(h.evicted_until(), 20);
  EXPECT_EQ(h.cum(0)[Leaf::kRunning], 10);  // cumulative vectors survive eviction
  EXPECT_EQ(h.EvictBefore(1000).segments, 1u);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(h.blocked());
  EXPECT_EQ(h.start(), 30);
}

TEST(TaskHistoryTest, WaitsFollowingATaskKeepTheirOriginUntilEvicted) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  const WaitLink waker{WaitLink::Type::kTask, Leaf::kBlocked, 7, 0};
  const WaitLink timer{WaitLink::Type::kLeaf, Leaf::kTimer};
  // Three waits: woken by task 7, by a timer, by task 7 again; origins 100, -, 300.
  for (int i = 0; i < 3; ++i) {
    const int64_t t = 10 + 20 * i;
    h.Switch(t, SegmentKind::kBlocked);
    h.Resolve(t + 10, i == 1 ? timer : waker, StateVec::Of(Leaf::kRunning, 10),
              StateVec::Of(Leaf::kRunning, 100 * (i + 1)), SegmentKind::kRunning);
  }
  ASSERT_EQ(h.size(), 7u);
  EXPECT_EQ(h.origins(), 2u);
  EXPECT_EQ(h.origin(h.at(1))[Leaf::kRunning], 100);
  EXPECT_EQ(h.origin(h.at(5))[Leaf::kRunning], 300);
  // Evicting the first wait drops its origin; the later one is still found.
  const TaskHistory::Evicted n = h.EvictBefore(25);
  EXPECT_EQ(n.segments, 2u);
  EXPECT_EQ(n.origins, 1u);
  EXPECT_EQ(h.origins(), 1u);
  EXPECT_EQ(h.origin(h.at(3))[Leaf::kRunning], 300);
  // A zero-length wait keeps nothing.
  h.Switch(80, SegmentKind::kBlocked);
  h.Resolve(80, waker, {}, StateVec::Of(Leaf::kRunning, 1), SegmentKind::kRunning);
  EXPECT_EQ(h.origins(), 1u);
}

TEST(TaskHistoryTest, LongHistoryAcrossChunksFindsAndEvicts) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  // 10,000 segments of 10 ns: running and preempted alternating.
  for (int i = 1; i < 10000; ++i)
    h.Switch(10 * i, i % 2 ? SegmentKind::kPreempted : SegmentKind::kRunning);
  ASSERT_EQ(h.size(), 10000u);
  for (int64_t t : {0, 9, 10, 639, 640, 12345, 99989, 99990, 200000}) {
    EXPECT_EQ(h.Find(t), static_cast<size_t>(std::min<int64_t>(t / 10, 9999))) << t;
  }
  EXPECT_EQ(h.EvictBefore(50000).segments, 5000u);
  EXPECT_EQ(h.start(), 50000);
  EXPECT_EQ(h.Find(50000), 0u);
  EXPECT_EQ(h.Find(76543), 2654u);
  EXPECT_EQ(h.cum(0)[Leaf::kRunning], 25000);
  EXPECT_EQ(h.cum(0)[Leaf::kPreempted], 25000);
  for (int i = 10000; i < 20000; ++i)
    h.Switch(10 * i, i % 2 ? SegmentKind::kPreempted : SegmentKind::kRunning);
  EXPECT_EQ(h.EvictBefore(190000).segments, 14000u);
  EXPECT_EQ(h.size(), 1000u);
  EXPECT_EQ(h.back_cum()[Leaf::kRunning] + h.back_cum()[Leaf::kPreempted], 199990);
}

// Vectors are kept as 32-bit offsets from a base per group of segments; one that does not
// fit (over 4.29 s of one leaf in a group, or below the base) is kept whole. Either way each
// segment's vector reads back exactly, before and after eviction drops bases and wholes.
TEST(TaskHistoryTest, CumulativeVectorsReadBackExactlyWhateverTheirSize) {
  TaskHistory h;
  h.Begin(0, SegmentKind::kRunning);
  std::vector<StateVec> want = {StateVec{}};
  int64_t t = 0;
  const WaitLink timer{WaitLink::Type::kLeaf, Leaf::kTimer};
  for (int i = 1; i < 200; ++i) {
    // Mostly short segments; every 7th a long one (10 s), every 11th a wait with a delta
    // over several leaves, one of them negative (no real wait has one: the layout must not
    // rely on it).
    const int64_t len = i % 7 == 0 ? 10'000'000'000 : 1000 + i;
    if (i % 11 == 0) {
      const SegmentKind own = h.back().kind;
      StateVec v = h.back_cum();
      t += 100;
      h.Switch(t, SegmentKind::kBlocked);
      v[OwnLeaf(own)] += 100;
      want.push_back(v);
      StateVec delta;
      delta[Leaf::kTimer] = len;
      delta[Leaf::kDisk] = i % 22 == 0 ? -5 : 7;
      delta[Leaf::kUnknown] = 5'000'000'000;
      t += len;
      h.Resolve(t, timer, delta, {}, SegmentKind::kRunning);
      want.push_back(v + delta);
      continue;
    }
    const StateVec before = h.back_cum();
    const SegmentKind open = h.back().kind;
    t += len;
    h.Switch(t, open == SegmentKind::kRunning ? SegmentKind::kPreempted : SegmentKind::kRunning);
    StateVec v = before;
    v[OwnLeaf(open)] += len;
    want.push_back(v);
  }
  ASSERT_EQ(h.size(), want.size());
  for (size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.cum(i).ns, want[i].ns) << i;
  // Evict in uneven steps: groups' bases and whole vectors go with their segments.
  for (size_t keep : {190u, 170u, 150u, 100u, 33u, 17u, 16u, 1u}) {
    h.EvictBefore(h.at(h.size() - keep).start);
    ASSERT_EQ(h.size(), keep);
    const size_t first = want.size() - keep;
    for (size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h.cum(i).ns, want[first + i].ns) << i;
  }
  static_assert(TaskHistory::kSegmentBytes == 16);
}

// Most vectors are not kept but derived from the nearest known one before them (a group's
// base, one after a resolved wait, the first retained segment). Random sequences of every
// operation (own switches, zero-length replacements, a blocked segment closed by a switch or
// by a wait's resolution, a wait resolved straight into another wait, eviction anywhere in a
// group; links to a task, whose task and origin are kept apart, and to a leaf) against a model
// keeping every vector and link whole: each reads back exactly, every step.
TEST(TaskHistoryTest, DerivedVectorsMatchAModelKeepingEveryVector) {
  struct Model {
    int64_t start;
    SegmentKind kind;
    StateVec cum;
    WaitLink link{};  // resolved blocked segments
    StateVec origin{};
  };
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ull;
    auto rnd = [&](uint64_t n) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return (state >> 33) % n;
    };
    TaskHistory h;
    std::vector<Model> model = {{0, SegmentKind::kRunning, StateVec{}}};
    h.Begin(0, SegmentKind::kRunning);
    int64_t t = 0;
    for (int step = 0; step < 400; ++step) {
      const uint64_t op = rnd(10);
      // A tenth of the steps at the open segment's start: a zero-length segment replaced.
      if (rnd(10) != 0)
        t += rnd(3) == 0 ? int64_t{5'000'000'000} + static_cast<int64_t>(rnd(1000))
                         : static_cast<int64_t>(1 + rnd(5000));
      Model& open = model.back();
      if (open.kind == SegmentKind::kBlocked && op < 6) {
        StateVec delta;
        delta[Leaf::kTimer] = static_cast<int64_t>(rnd(2)) * (t - open.start);
        delta[static_cast<Leaf>(rnd(kLeafCount))] += static_cast<int64_t>(rnd(3'000'000'000));
        const SegmentKind next = rnd(3) == 0 ? SegmentKind::kBlocked : SegmentKind::kPreempted;
        WaitLink link{WaitLink::Type::kLeaf, Leaf::kTimer};
        StateVec origin;
        if (rnd(2) == 0) {
          link = WaitLink{rnd(2) ? WaitLink::Type::kTask : WaitLink::Type::kPacket, Leaf::kBlocked,
                          static_cast<Utid>(rnd(100)), t - 1};
          origin[static_cast<Leaf>(rnd(kLeafCount))] = static_cast<int64_t>(rnd(1'000'000));
        }
        h.Resolve(t, link, delta, origin, next);
        if (t <= open.start) {
          open.kind = next;
        } else {
          open.link = link;
          open.origin = origin;
          model.push_back({t, next, open.cum + delta});
        }
      } else if (op < 8) {
        const auto kind = static_cast<SegmentKind>(rnd(5));
        const bool added = h.Switch(t, kind);
        EXPECT_EQ(added, open.kind != kind && t > open.start);
        if (open.kind != kind) {
          if (t <= open.start) {
            open.kind = kind;
          } else {
            StateVec v = open.cum;
            v[OwnLeaf(open.kind)] += t - open.start;
            model.push_back({t, kind, v});
          }
        }
      } else {
        const int64_t before = model[rnd(model.size())].start + static_cast<int64_t>(rnd(3));
        h.EvictBefore(before);
        size_t drop = 0;
        while (model.size() - drop > 1 && model[drop + 1].start <= before) ++drop;
        model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(drop));
      }
      ASSERT_EQ(h.size(), model.size()) << "seed " << seed << " step " << step;
      size_t origins = 0;
      for (size_t i = 0; i < model.size(); ++i) {
        if (i + 1 < model.size() && model[i].kind == SegmentKind::kBlocked) {
          const WaitLink got = h.link(i);
          const WaitLink& want = model[i].link;
          ASSERT_EQ(got.type, want.type);
          ASSERT_EQ(got.leaf, want.leaf);
          ASSERT_EQ(got.task, NeedsOrigin(want) ? want.task : kNoTask);
          if (NeedsOrigin(want)) {
            ++origins;
            ASSERT_EQ(got.task, want.task);
            if (want.type == WaitLink::Type::kPacket) {
              ASSERT_EQ(got.ts, want.ts);
            }
            ASSERT_EQ(h.origin(h.at(i)).ns, model[i].origin.ns);
          }
        }
        ASSERT_EQ(h.at(i).start, model[i].start);
        ASSERT_EQ(h.at(i).kind, model[i].kind);
        ASSERT_EQ(h.cum(i).ns, model[i].cum.ns)
            << "seed " << seed << " step " << step << " segment " << i;
      }
      ASSERT_EQ(h.back_cum().ns, model.back().cum.ns);
      ASSERT_EQ(h.origins(), origins);
    }
  }
}

TEST(ChunkedQueueTest, PushPopIndexAcrossChunks) {
  ChunkedQueue<int, 4> q;
  EXPECT_TRUE(q.empty());
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 7 + 1; ++i) q.push_back(next_in++);
    for (int i = 0; i < round % 5 && !q.empty(); ++i) {
      EXPECT_EQ(q[0], next_out++);
      q.pop_front();
    }
    ASSERT_EQ(q.size(), static_cast<size_t>(next_in - next_out));
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(q[i], next_out + static_cast<int>(i));
    if (!q.empty()) {
      EXPECT_EQ(q.back(), next_in - 1);
    }
  }
  // Whole chunks only: what is held plus at most one partly used chunk at each end and a spare.
  EXPECT_LE(q.capacity_bytes(), (q.size() / 4 + 3) * 4 * sizeof(int));
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
