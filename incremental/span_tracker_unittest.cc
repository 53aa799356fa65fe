#include "incremental/span_tracker.h"

#include <gtest/gtest.h>

#include <vector>

#include "incremental/engine.h"
#include "model/dialect.h"
#include "model/event_builders.h"

namespace waitpath {
namespace {

constexpr int64_t kRunnable = 0;
constexpr int64_t kSleeping = 1;
constexpr int32_t kT = 10, kW = 20;

struct Seen {
  ResolvedSpan span;
  std::vector<PathSegment> path;
  std::vector<SpanBlocker> blocked_by;
};
struct Idle {
  Utid u;
  int64_t from, to;
  StateVec states;
};

class Recorder : public SpanListener {
 public:
  void OnSpan(const ResolvedSpan& span) override {
    Seen s{span,
           {span.path.begin(), span.path.end()},
           {span.blocked_by.begin(), span.blocked_by.end()}};
    s.span.path = {};
    s.span.blocked_by = {};
    spans.push_back(std::move(s));
  }
  void OnIdle(Utid u, int64_t from, int64_t to, const StateVec& states) override {
    idle.push_back(Idle{u, from, to, states});
  }
  std::vector<Seen> spans;
  std::vector<Idle> idle;
};

class SpanTrackerTest : public ::testing::Test {
 protected:
  SpanTrackerTest() { engine_.SetSpanListener(&recorder_); }

  void Push(std::vector<Event> events, std::vector<SpanIds> ids = {}) {
    Batch batch;
    batch.events = std::move(events);
    batch.spans = std::move(ids);
    batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
    engine_.Push(batch);
  }
  static Event Begin(int64_t ts, uint16_t cpu, int32_t tid, uint64_t id, int32_t ids = -1) {
    return SpanEvent(EventKind::kSpanBegin, ts, cpu, tid, id, -1, ids);
  }
  static Event End(int64_t ts, uint16_t cpu, int32_t tid, uint64_t id) {
    return SpanEvent(EventKind::kSpanEnd, ts, cpu, tid, id);
  }
  static Event Handoff(int64_t ts, uint16_t cpu, int32_t tid, uint64_t id) {
    return SpanEvent(EventKind::kSpanHandoff, ts, cpu, tid, id);
  }
  static Event Waking(int64_t ts, uint16_t cpu, int32_t tid) {
    return WakeEvent(EventKind::kSchedWaking, ts, cpu, tid, cpu);
  }
  Utid U(int32_t tid) const { return engine_.tasks().Find(0, tid); }
  static int64_t Sum(const StateVec& v) {
    int64_t n = 0;
    for (int64_t x : v.ns) n += x;
    return n;
  }

  Engine engine_;
  Recorder recorder_;
};

// T waits inside its span for W, which runs; then T waits for a CPU.
TEST_F(SpanTrackerTest, SpanIsItsThreadsActivePathOverItsInterval) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), Begin(100, 0, kT, 1, 0),
        SwitchEvent(200, 0, kT, kW, kSleeping), Waking(500, 0, kT),
        SwitchEvent(600, 0, kW, kT, kRunnable), End(700, 0, kT, 1)},
       {SpanIds{0xabc, 0xdef, 7}});
  ASSERT_EQ(recorder_.spans.size(), 1u);
  const Seen& s = recorder_.spans[0];
  EXPECT_EQ(s.span.start, 100);
  EXPECT_EQ(s.span.end, 700);
  EXPECT_EQ(s.span.span.span_id, 1u);
  EXPECT_EQ(s.span.span.ids.trace_hi, 0xabcu);
  EXPECT_EQ(s.span.span.ids.parent, 7u);
  EXPECT_EQ(s.span.breakdown[Leaf::kRunning], 500);
  EXPECT_EQ(s.span.breakdown[Leaf::kPreempted], 100);
  EXPECT_EQ(Sum(s.span.breakdown), 600);
  ASSERT_EQ(s.path.size(), 4u);
  EXPECT_EQ(s.path[1].task, U(kW));
  EXPECT_EQ(s.path[1].end - s.path[1].start, 300);
  EXPECT_TRUE(s.blocked_by.empty());
}

// While T waited, W was inside span 2: that time is span 2's.
TEST_F(SpanTrackerTest, TimeInAThreadInsideAnotherSpanIsBlockedBy) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), Begin(100, 0, kT, 1),
        SwitchEvent(200, 0, kT, kW, kSleeping), Begin(250, 0, kW, 2), End(450, 0, kW, 2),
        Waking(500, 0, kT), SwitchEvent(600, 0, kW, kT, kRunnable), End(700, 0, kT, 1)});
  ASSERT_EQ(recorder_.spans.size(), 2u);
  const Seen& w = recorder_.spans[0];
  EXPECT_EQ(w.span.span.span_id, 2u);
  EXPECT_TRUE(w.blocked_by.empty());
  const Seen& t = recorder_.spans[1];
  ASSERT_EQ(t.blocked_by.size(), 1u);
  EXPECT_EQ(t.blocked_by[0].span.span_id, 2u);
  EXPECT_EQ(t.blocked_by[0].ns, 200);
}

// A nested span on the same thread blames its parent for its own time, never itself.
TEST_F(SpanTrackerTest, NestedSpanIsBlamedInItsParentOnly) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), Begin(100, 0, kT, 1), Begin(150, 0, kT, 2),
        End(250, 0, kT, 2), End(300, 0, kT, 1)});
  ASSERT_EQ(recorder_.spans.size(), 2u);
  EXPECT_TRUE(recorder_.spans[0].blocked_by.empty());
  ASSERT_EQ(recorder_.spans[1].blocked_by.size(), 1u);
  EXPECT_EQ(recorder_.spans[1].blocked_by[0].span.span_id, 2u);
  EXPECT_EQ(recorder_.spans[1].blocked_by[0].ns, 100);
}

// T begins the request and wakes W, which takes it over and ends it: until the handoff the
// request waited for W (W's wait followed to T, then W's CPU wait), then it is W's.
TEST_F(SpanTrackerTest, HandoffFollowsTheThreadThatTakesTheRequest) {
  Push({SwitchEvent(0, 1, 0, kW, kRunnable), SwitchEvent(50, 1, kW, 0, kSleeping),
        SwitchEvent(60, 0, 0, kT, kRunnable), Begin(100, 0, kT, 3),
        WakeEvent(EventKind::kSchedWaking, 150, 0, kW, 1), SwitchEvent(160, 1, 0, kW, kRunnable),
        Handoff(170, 1, kW, 3), SwitchEvent(180, 0, kT, 0, kSleeping), End(300, 1, kW, 3)});
  ASSERT_EQ(recorder_.spans.size(), 1u);
  const Seen& s = recorder_.spans[0];
  EXPECT_EQ(s.span.handoffs, 1u);
  EXPECT_EQ(s.span.task, U(kT));
  EXPECT_EQ(s.span.end_task, U(kW));
  EXPECT_EQ(Sum(s.span.breakdown), 200);
  EXPECT_EQ(s.span.breakdown[Leaf::kPreempted], 10);
}

TEST_F(SpanTrackerTest, TimeBetweenSpansOfAThreadIsIdle) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), Begin(100, 0, kT, 1), End(200, 0, kT, 1),
        SwitchEvent(250, 0, kT, 0, kSleeping), Waking(350, 0, kT),
        SwitchEvent(360, 0, 0, kT, kRunnable), Begin(400, 0, kT, 2), End(450, 0, kT, 2)});
  ASSERT_EQ(recorder_.spans.size(), 2u);
  ASSERT_EQ(recorder_.idle.size(), 1u);
  const Idle& i = recorder_.idle[0];
  EXPECT_EQ(i.from, 200);
  EXPECT_EQ(i.to, 400);
  EXPECT_EQ(Sum(i.states), 200);
  EXPECT_EQ(i.states[Leaf::kRunning], 90);
}

TEST_F(SpanTrackerTest, BadSpanInputIsCountedNeverResolved) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), End(10, 0, kT, 9), Handoff(20, 0, kT, 9),
        Begin(30, 0, kT, 1), Begin(40, 0, kT, 1), End(50, 0, kT, 1), End(60, 0, kT, 1),
        SpanEvent(EventKind::kSpanBegin, 70, 0, -1, 5), Begin(80, 0, kT, 4)});
  const SpanCounters& c = engine_.spans().counters();
  EXPECT_EQ(c.unmatched_ends, 2u);
  EXPECT_EQ(c.unmatched_handoffs, 1u);
  EXPECT_EQ(c.reused_ids, 1u);
  EXPECT_EQ(c.without_thread, 1u);
  EXPECT_EQ(c.ended, 1u);
  EXPECT_EQ(engine_.spans().open(), 1u);  // span 4, never ended
  ASSERT_EQ(recorder_.spans.size(), 1u);
  EXPECT_EQ(recorder_.spans[0].span.start, 40);
}

// A reused id drops the older span: the interval its thread held ends at its last event, out of
// time order, and is still found by later blame lookups.
TEST_F(SpanTrackerTest, DroppedSpanStillBlamesWhereItWasHeld) {
  Push({SwitchEvent(0, 0, 0, kT, kRunnable), SwitchEvent(0, 1, 0, kW, kRunnable),
        Begin(100, 1, kW, 7), Begin(150, 1, kW, 8), End(180, 1, kW, 8),
        Begin(200, 1, kW, 7),  // reuses 7: the span begun at 100 is dropped (held 100..100)
        Begin(300, 0, kT, 1), SwitchEvent(310, 0, kT, 0, kSleeping),
        WakeEvent(EventKind::kSchedWaking, 400, 1, kT, 0), SwitchEvent(410, 0, 0, kT, kRunnable),
        End(500, 0, kT, 1)});
  const SpanCounters& c = engine_.spans().counters();
  EXPECT_EQ(c.reused_ids, 1u);
  ASSERT_EQ(recorder_.spans.size(), 2u);
  const Seen& t = recorder_.spans[1];
  // [310, 400): T waited for W, which held the second span 7 then.
  ASSERT_EQ(t.blocked_by.size(), 1u);
  EXPECT_EQ(t.blocked_by[0].span.span_id, 7u);
  EXPECT_EQ(t.blocked_by[0].ns, 90);
}

TEST(SpanTrackerCap, BeginsBeyondTheCapAreDroppedAndCounted) {
  TaskTable tasks;
  std::vector<TaskHistory> histories;
  ActivePathResolver resolver(tasks, histories, 8);
  SpanTracker tracker(tasks, resolver, SpanTrackerOptions{2});
  tracker.PushBegin(0, 0, 10, 1, ~0u, {});
  tracker.PushBegin(0, 0, 11, 2, ~0u, {});
  tracker.PushBegin(0, 0, 12, 3, ~0u, {});
  EXPECT_EQ(tracker.open(), 2u);
  EXPECT_EQ(tracker.counters().dropped_full, 1u);
}

}  // namespace
}  // namespace waitpath
