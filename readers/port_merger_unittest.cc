#include "readers/port_merger.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace waitpath {
namespace {

using Refill = PortMerger::Refill;

// Ports as queues of timestamps; an entry of -1 answers AGAIN once (and is dropped).
struct FakePorts {
  std::vector<std::deque<int64_t>> queues;
  Refill Head(uint32_t port, int64_t* ts) {
    auto& q = queues[port];
    if (q.empty()) return Refill::kEnded;
    if (q.front() == -1) {
      q.pop_front();
      ++agains;
      return Refill::kAgain;
    }
    *ts = q.front();
    return Refill::kHead;
  }
  int agains = 0;
  // Merges everything as the sink does; returns the (port, ts) order.
  std::vector<std::pair<uint32_t, int64_t>> MergeAll() {
    PortMerger merger;
    for (uint32_t p = 0; p < queues.size(); ++p) merger.AddPort(p);
    std::vector<std::pair<uint32_t, int64_t>> out;
    while (!merger.done()) {
      EXPECT_TRUE(merger.RefillMissing([&](uint32_t p, int64_t* ts) { return Head(p, ts); }));
      while (merger.has_head() && !merger.blocked()) {
        const uint32_t p = merger.PopEarliest();
        out.emplace_back(p, queues[p].front());
        queues[p].pop_front();
        int64_t ts = 0;
        const Refill r = Head(p, &ts);
        EXPECT_TRUE(merger.Requeue(p, r, ts));
        if (r == Refill::kAgain) {
          EXPECT_TRUE(merger.blocked());
        }
      }
    }
    return out;
  }
};

TEST(PortMergerTest, EarliestHeadFirstTiesToTheLowerPort) {
  FakePorts ports{{{1, 5, 9}, {2, 5, 6}, {0, 10}}};
  const auto order = ports.MergeAll();
  const std::vector<std::pair<uint32_t, int64_t>> want{{2, 0}, {0, 1}, {1, 2}, {0, 5},
                                                       {1, 5}, {1, 6}, {0, 9}, {2, 10}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(ports.agains, 0);
}

TEST(PortMergerTest, APortWithoutAHeadHoldsTheMergeBack) {
  // Port 1 answers AGAIN before its second message: port 0's later events must wait for it.
  FakePorts ports{{{1, 2, 3, 4}, {1, -1, 2}}};
  const auto order = ports.MergeAll();
  const std::vector<std::pair<uint32_t, int64_t>> want{{0, 1}, {1, 1}, {0, 2},
                                                       {1, 2}, {0, 3}, {0, 4}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(ports.agains, 1);
}

TEST(PortMergerTest, EndedPortsLeaveAndErrorsStop) {
  PortMerger merger;
  merger.AddPort(0);
  merger.AddPort(1);
  EXPECT_TRUE(merger.RefillMissing([](uint32_t p, int64_t* ts) {
    *ts = 7;
    return p == 0 ? Refill::kEnded : Refill::kHead;
  }));
  EXPECT_FALSE(merger.blocked());
  ASSERT_TRUE(merger.has_head());
  EXPECT_EQ(merger.PopEarliest(), 1u);
  EXPECT_FALSE(merger.Requeue(1, Refill::kError, 0));
  EXPECT_TRUE(merger.done());
  merger.AddPort(2);
  EXPECT_FALSE(merger.RefillMissing([](uint32_t, int64_t*) { return Refill::kError; }));
}

}  // namespace
}  // namespace waitpath
