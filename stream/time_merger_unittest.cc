#include "stream/time_merger.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

std::unique_ptr<Batch> MakeBatch(uint16_t host, std::vector<int64_t> ts, bool last) {
  auto b = std::make_unique<Batch>();
  b->host = host;
  for (int64_t t : ts) {
    Event e{};
    e.ts = t;
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
  const std::vector<std::pair<int, int64_t>> want = {{0, 100}, {1, 150}, {0, 200}, {1, 250}, {0, 300}, {0, 400}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(m.TakeConsumed().size(), 3u);
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

}  // namespace
}  // namespace waitpath
