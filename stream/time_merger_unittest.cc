#include "stream/time_merger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "stream/host_stats.h"

namespace waitpath {
namespace {

std::unique_ptr<Batch> MakeBatch(uint16_t host, std::vector<int64_t> ts, bool last) {
  auto b = std::make_unique<Batch>();
  b->host = host;
  for (int64_t t : ts) {
    Event e{};
    e.ts = t;
    e.x = t;  // the host's own time, kept through the merge
    e.host = host;
    b->events.push_back(e);
  }
  b->watermark = ts.empty() ? std::numeric_limits<int64_t>::min() : ts.back();
  b->last = last;
  return b;
}

TEST(TimeMergerTest, MergesInReferenceTimeAndWaitsForSlowHosts) {
  TimeMerger m(2);
  // Host 1's clock is 1000 ahead: its 1150 is reference 150.
  m.SetTransform(1, ClockTransform::FromLine(1.0, -1000.0, 1000));
  m.Push(MakeBatch(0, {100, 200, 300}, false));
  Event e;
  const Batch* b = nullptr;
  EXPECT_FALSE(m.Next(&e, &b));  // host 1 has shown nothing yet
  EXPECT_EQ(m.needed(), 1);
  m.Push(MakeBatch(1, {1150, 1250}, true));
  std::vector<std::pair<int, int64_t>> got;
  while (m.Next(&e, &b)) got.emplace_back(b->host, e.ts);
  EXPECT_EQ(m.needed(), 0);  // host 0 may still have something before 250
  m.Push(MakeBatch(0, {400}, true));
  while (m.Next(&e, &b)) got.emplace_back(b->host, e.ts);
  EXPECT_TRUE(m.done());
  const std::vector<std::pair<int, int64_t>> want = {{0, 100}, {1, 150}, {0, 200},
                                                     {1, 250}, {0, 300}, {0, 400}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(m.TakeConsumed().size(), 3u);
}

// Live: host 1's clock is 120 behind and no packets fixed it; host 0 streams on. With a lag
// limit of 10 the merger holds at most that much of host 0: host 1's events older than that
// are dropped, counted, and its CPU gets a lost marker before its next event.
TEST(TimeMergerTest, AHostLaggingPastTheLimitIsNotWaitedForAndItsLateEventsAreLost) {
  TimeMerger m(2);
  m.SetMaxLag(10);
  Event e;
  const Batch* b = nullptr;
  std::vector<std::pair<int, int64_t>> got;
  for (int64_t t = 0; t < 100; t += 5) {
    m.Push(MakeBatch(0, {t}, false));
    m.Push(MakeBatch(1, {t - 120}, false));  // what host 1 stamps as it happens
    while (m.Next(&e, &b)) got.emplace_back(b->host, e.ts);
  }
  // Host 0's events all went out (held at most 10 behind the newest), host 1's were dropped.
  int host0 = 0, host1 = 0;
  for (const auto& [h, ts] : got) (h == 0 ? host0 : host1) += 1;
  EXPECT_GE(host0, 17);
  EXPECT_EQ(host1, 0);
  EXPECT_TRUE(m.lagging(1));
  EXPECT_EQ(m.dropped_late(1), 20u);
  EXPECT_FALSE(m.lagging(0));
  // Host 1 catches up (its clock is fixed): a lost marker first, then its events.
  m.SetTransform(1, ClockTransform::FromLine(1.0, 120.0, 0));
  m.Push(MakeBatch(1, {-25}, false));  // reference 95
  m.Push(MakeBatch(0, {100}, true));
  m.Push(MakeBatch(1, {-10}, true));  // reference 110
  got.clear();
  std::vector<EventKind> kinds;
  while (m.Next(&e, &b)) {
    got.emplace_back(b->host, e.ts);
    kinds.push_back(e.kind);
  }
  ASSERT_FALSE(got.empty());
  const auto first1 =
      std::find_if(got.begin(), got.end(), [](const auto& g) { return g.first == 1; });
  ASSERT_NE(first1, got.end());
  EXPECT_EQ(kinds[static_cast<size_t>(first1 - got.begin())], EventKind::kLost);
  EXPECT_FALSE(m.lagging(1));
}

// Three hosts with different clocks, batches of random sizes fed as the merger asks for
// them: every event comes out once, in reference-time order, each host's in its own order.
// (Equal reference times on two hosts may come in either order.)
// The offline one-pass policy holds back what is past the release limit, then lets it go.
TEST(TimeMergerTest, NothingPastTheReleaseLimitGoes) {
  TimeMerger m(2);
  m.Push(MakeBatch(0, {100, 200, 300}, true));
  m.Push(MakeBatch(1, {150, 250}, true));
  m.SetReleaseLimit(200);
  Event e;
  const Batch* b = nullptr;
  std::vector<int64_t> got;
  while (m.Next(&e, &b)) got.push_back(e.ts);
  EXPECT_EQ(got, (std::vector<int64_t>{100, 150, 200}));
  EXPECT_EQ(m.needed(), -1);
  EXPECT_FALSE(m.done());
  m.SetReleaseLimit(std::numeric_limits<int64_t>::max());
  while (m.Next(&e, &b)) got.push_back(e.ts);
  EXPECT_EQ(got, (std::vector<int64_t>{100, 150, 200, 250, 300}));
  EXPECT_TRUE(m.done());
}

TEST(TimeMergerTest, MergedOrderWhateverTheBatching) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const std::vector<ClockTransform> transforms = {ClockTransform(),
                                                    ClockTransform::FromLine(1.0, -500.0, 1000),
                                                    ClockTransform::FromLine(1.0, 300.0, 1000)};
    std::vector<std::vector<int64_t>> events(3);
    std::vector<int64_t> want;  // every reference time, sorted
    for (int h = 0; h < 3; ++h) {
      int64_t t = 1000 + static_cast<int64_t>(rng() % 50);
      for (int i = 0; i < 200; ++i) {
        t += static_cast<int64_t>(rng() % 20);  // ties within and across hosts happen
        events[h].push_back(t);
        want.push_back(transforms[h].ToReference(t));
      }
    }
    std::sort(want.begin(), want.end());
    TimeMerger m(3);
    for (uint16_t h = 0; h < 3; ++h) m.SetTransform(h, transforms[h]);
    std::vector<size_t> fed(3, 0);
    std::vector<int64_t> got;
    std::vector<std::vector<int64_t>> per_host(3);  // own timestamps, as released
    Event e;
    const Batch* b = nullptr;
    for (;;) {
      while (m.Next(&e, &b)) {
        got.push_back(e.ts);
        per_host[b->host].push_back(e.x);
      }
      if (m.done() || m.needed() < 0) break;
      const size_t h = static_cast<size_t>(m.needed());
      const size_t n = std::min<size_t>(events[h].size() - fed[h], 1 + rng() % 40);
      std::vector<int64_t> ts(events[h].begin() + static_cast<std::ptrdiff_t>(fed[h]),
                              events[h].begin() + static_cast<std::ptrdiff_t>(fed[h] + n));
      fed[h] += n;
      m.Push(MakeBatch(static_cast<uint16_t>(h), ts, fed[h] == events[h].size()));
    }
    SCOPED_TRACE(round);
    ASSERT_EQ(got, want);
    for (int h = 0; h < 3; ++h) EXPECT_EQ(per_host[h], events[h]);
  }
}

TEST(TimeMergerTest, WatermarkOfAQuietHostLetsOthersProceed) {
  TimeMerger m(2);
  m.Push(MakeBatch(0, {100, 200}, false));
  auto quiet = MakeBatch(1, {}, false);
  quiet->watermark = 150;  // e.g. an inactivity message
  m.Push(std::move(quiet));
  Event e;
  const Batch* b = nullptr;
  ASSERT_TRUE(m.Next(&e, &b));
  EXPECT_EQ(e.ts, 100);
  EXPECT_FALSE(m.Next(&e, &b));  // 200 is past host 1's watermark
  EXPECT_EQ(m.needed(), 1);
}

// A host whose input ended reads again (a session recreated on the relayd): it is waited for
// again, and its new events follow its old ones. Its counters go on from the old reader's.
TEST(TimeMergerTest, AReopenedHostIsWaitedForAgain) {
  TimeMerger m(2);
  m.Push(MakeBatch(0, {100}, true));  // host 0's first session ends
  m.Reopen(0);
  m.Push(MakeBatch(1, {150, 250}, false));
  Event e;
  const Batch* b = nullptr;
  std::vector<std::pair<int, int64_t>> got;
  while (m.Next(&e, &b)) got.emplace_back(b->host, e.ts);
  // 150 waits for host 0, which reads again: without Reopen it would have gone.
  EXPECT_EQ(got, (std::vector<std::pair<int, int64_t>>{{0, 100}}));
  m.Push(MakeBatch(0, {200}, true));
  m.Push(MakeBatch(1, {}, true));
  while (m.Next(&e, &b)) got.emplace_back(b->host, e.ts);
  EXPECT_EQ(got, (std::vector<std::pair<int, int64_t>>{{0, 100}, {1, 150}, {0, 200}, {1, 250}}));
}

TEST(HostStatsTest, AResumedHostCountsOnFromItsEarlierReaders) {
  HostStats s;
  Batch first;
  first.counters.events = 10;
  first.counters.discarded = 2;
  first.counters.gaps = 1;
  first.counters.cpus = 2;
  first.counters.first_ns = 100;
  first.counters.last_ns = 200;
  first.last = true;
  s.Add(first);
  EXPECT_TRUE(s.ended);
  s.Resume();
  EXPECT_FALSE(s.ended);
  Batch second;  // the new reader's counters start again from zero
  second.counters.events = 5;
  second.counters.cpus = 1;
  second.counters.first_ns = 300;
  second.counters.last_ns = 400;
  s.Add(second);
  EXPECT_EQ(s.reader.events, 15u);
  EXPECT_EQ(s.reader.discarded, 2u);
  EXPECT_EQ(s.reader.gaps, 2u);  // the old one's and the break between the two
  EXPECT_EQ(s.reader.cpus, 2u);
  EXPECT_EQ(s.reader.first_ns, 100);
  EXPECT_EQ(s.reader.last_ns, 400);
}

}  // namespace
}  // namespace waitpath
