#include "readers/host_input.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "readers/event_decoder.h"

namespace waitpath {
namespace {

struct Fixture {
  BatchPool pool{4};
  std::vector<std::unique_ptr<Batch>> out;
  HostInput input{2, 16, pool, [this](Batch* b) { out.emplace_back(b); }};
};

TEST(HostInputTest, AGapIsALossOnEveryCpuAtTheLastTime) {
  Fixture f;
  int s0 = 0, s1 = 0;
  f.input.cpus.SetStreamCpu(&s0, 1);
  f.input.cpus.SetStreamCpu(&s1, 3);
  f.input.cpus.ForgetStreams();  // the broken graph's streams
  f.input.time.Event(500);
  f.input.MarkGap();
  ASSERT_EQ(f.out.size(), 1u) << "handed over at once";
  const Batch& b = *f.out[0];
  ASSERT_EQ(b.events.size(), 2u);
  EXPECT_EQ(b.events[0].cpu, 1);
  EXPECT_EQ(b.events[1].cpu, 3);
  for (const Event& e : b.events) {
    EXPECT_EQ(e.kind, EventKind::kLost);
    EXPECT_EQ(e.ts, 500);
    EXPECT_EQ(e.a, -1);
    EXPECT_EQ(e.host, 2);
  }
  EXPECT_EQ(b.counters.gaps, 1u);
  EXPECT_EQ(b.watermark, 500);
}

TEST(HostInputTest, AGapBeforeAnyEventIsAtZero) {
  Fixture f;
  f.input.cpus.NoteReplayedCpu(0);
  f.input.MarkGap();
  ASSERT_EQ(f.out.size(), 1u);
  ASSERT_EQ(f.out[0]->events.size(), 1u);
  EXPECT_EQ(f.out[0]->events[0].ts, 0);
}

TEST(HostInputTest, SnapshotCountsTheOriginalCpusOfAReplayedHost) {
  Fixture f;
  f.input.counters.cpus = 1;  // the replayer's stream
  f.input.cpus.NoteReplayedCpu(0);
  f.input.cpus.NoteReplayedCpu(7);
  f.input.time.Event(10);
  f.input.time.Event(5);
  f.input.dialect = kDialectLttngModern;
  EXPECT_EQ(f.input.Snapshot().cpus, 1u);
  EXPECT_EQ(f.input.Snapshot().regressions, 1u);
  EXPECT_EQ(f.input.Snapshot().first_ns, 10);
  f.input.dialect |= kDialectReplayed;
  EXPECT_EQ(f.input.Snapshot().cpus, 2u);
  EXPECT_EQ(f.input.Snapshot().dialect, kDialectLttngModern | kDialectReplayed);
}

TEST(HostInputTest, FinishHandsTheLastBatchWithItsReason) {
  Fixture f;
  f.input.Finish("stopped");
  ASSERT_EQ(f.out.size(), 1u);
  EXPECT_TRUE(f.out[0]->last);
  EXPECT_EQ(f.out[0]->error, "stopped");
  EXPECT_EQ(f.out[0]->watermark, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(f.out[0]->counters.events, 0u);
}

}  // namespace
}  // namespace waitpath
