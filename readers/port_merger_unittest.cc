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

// Equal times go by tie key (the port's CPU) before port: live, the relayd announces streams in
// any order.
TEST(PortMergerTest, EqualTimesGoByTieKeyThenPort) {
  FakePorts ports{{{5, 7}, {5, 7}, {5}}};
  PortMerger merger;
  for (uint32_t p = 0; p < 3; ++p) merger.AddPort(p);
  merger.SetTie(0, 1);  // port 0 reads CPU 1, ports 1 and 2 CPU 0
  std::vector<uint32_t> order;
  ASSERT_TRUE(merger.RefillMissing([&](uint32_t p, int64_t* ts) { return ports.Head(p, ts); }));
  while (merger.has_head()) {
    const uint32_t p = merger.PopEarliest();
    order.push_back(p);
    ports.queues[p].pop_front();
    int64_t ts = 0;
    const Refill r = ports.Head(p, &ts);
    ASSERT_TRUE(merger.Requeue(p, r, ts));
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2, 0, 1, 0}));
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
