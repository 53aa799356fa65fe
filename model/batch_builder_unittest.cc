#include "model/batch_builder.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace waitpath {
namespace {

struct Delivered {
  std::vector<Batch*> batches;
  ~Delivered() {
    for (Batch* b : batches) delete b;
  }
  BatchBuilder::Deliver Sink() {
    return [this](Batch* b) { batches.push_back(b); };
  }
};

TEST(BatchBuilderTest, FlushHandsOverWithTheFiguresOfItsEnd) {
  BatchPool pool(4);
  Delivered out;
  BatchBuilder builder(7, 3, pool, out.Sink());
  EXPECT_EQ(builder.size(), 0u);
  builder.Current().events.push_back(Event{});
  builder.Current().events.push_back(Event{});
  EXPECT_EQ(builder.size(), 2u);
  EXPECT_FALSE(builder.full());
  builder.Current().events.push_back(Event{});
  EXPECT_TRUE(builder.full());
  ReaderCounters c;
  c.events = 3;
  builder.Flush(c, 1234);
  ASSERT_EQ(out.batches.size(), 1u);
  const Batch& b = *out.batches[0];
  EXPECT_EQ(b.host, 7);
  EXPECT_EQ(b.events.size(), 3u);
  EXPECT_EQ(b.counters.events, 3u);
  EXPECT_EQ(b.watermark, 1234);
  EXPECT_FALSE(b.last);
  EXPECT_EQ(builder.size(), 0u) << "the next event starts another batch";
}

TEST(BatchBuilderTest, FlushWithNothingStartedHandsAnEmptyBatch) {
  BatchPool pool(4);
  Delivered out;
  BatchBuilder builder(1, 8, pool, out.Sink());
  builder.Flush({}, 5, /*last=*/true, "stopped");
  ASSERT_EQ(out.batches.size(), 1u);
  EXPECT_TRUE(out.batches[0]->events.empty());
  EXPECT_TRUE(out.batches[0]->last);
  EXPECT_EQ(out.batches[0]->error, "stopped");
  EXPECT_EQ(out.batches[0]->host, 1);
}

TEST(BatchBuilderTest, GivenBatchesAreReusedCleared) {
  BatchPool pool(4);
  Delivered out;
  BatchBuilder builder(2, 8, pool, out.Sink());
  builder.Current().events.push_back(Event{});
  builder.Current().packets.push_back(PacketKey{});
  builder.Flush({}, 0, true, "boom");
  Batch* used = out.batches.back();
  out.batches.pop_back();
  pool.Give(used);
  Batch& next = builder.Current();
  EXPECT_EQ(&next, used) << "reused, not allocated";
  EXPECT_TRUE(next.events.empty());
  EXPECT_TRUE(next.packets.empty());
  EXPECT_FALSE(next.last);
  EXPECT_TRUE(next.error.empty());
  EXPECT_GE(next.events.capacity(), 8u);
}

TEST(BatchPoolTest, KeepsABoundedNumber) {
  BatchPool pool(2);
  std::vector<Batch*> taken;
  for (int i = 0; i < 5; ++i) {
    taken.push_back(pool.Take());
    taken.back()->watermark = i;  // Give() leaves it: it tells a reused batch from a new one
  }
  for (Batch* b : taken) pool.Give(b);  // the three beyond the bound are deleted
  int reused = 0;
  for (int i = 0; i < 5; ++i) {
    std::unique_ptr<Batch> b(pool.Take());
    reused += b->watermark != Batch{}.watermark;
  }
  EXPECT_EQ(reused, 2);
}

}  // namespace
}  // namespace waitpath
