#include "incremental/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr int32_t kNoComm = -1;
constexpr int64_t kRunnable = 0;  // prev_state
constexpr int64_t kSleeping = 1;  // TASK_INTERRUPTIBLE
constexpr int32_t kNetRx = 3;     // softirq vector

Event Switch(int64_t ts, uint16_t cpu, int32_t prev, int32_t next, int64_t prev_state) {
  return SwitchEvent(ts, cpu, prev, next, prev_state);
}
Event Waking(int64_t ts, uint16_t cpu, int32_t tid) {
  return WakeEvent(EventKind::kSchedWaking, ts, cpu, tid, cpu);
}
Event Lost(int64_t ts, uint16_t cpu, int64_t begin) {
  return LostEvent(ts, cpu, -1, begin);
}

// perf's dialect, whose events name their CPU's current task: `e` as perf writes it.
constexpr uint32_t kPerf = kDialectPerf | kDialectHasWaking | kDialectHasSwitch;
Event On(Event e, int32_t current_tid) {
  e.cur_tid = current_tid;
  return e;
}

class RecordingListener : public WaitListener {
 public:
  void OnWait(const ResolvedWait& wait) override { waits.push_back(wait); }
  std::vector<ResolvedWait> waits;
};

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() { engine_.SetListener(&listener_); }

  void Push(std::vector<Event> events, uint32_t dialect = kDialectHasWaking | kDialectHasSwitch) {
    Batch batch;
    batch.host = 0;
    batch.events = std::move(events);
    batch.counters.dialect = dialect;
    engine_.Push(batch);
  }
  Utid U(int32_t tid) const {
    const Utid u = engine_.tasks().Find(0, tid);
    EXPECT_NE(u, kNoTask) << "tid " << tid;
    return u;
  }
  StateVec B(int32_t tid, int64_t a, int64_t b) { return engine_.Breakdown(U(tid), a, b); }
  std::vector<PathSegment> Path(int32_t tid, int64_t a, int64_t b) {
    std::vector<PathSegment> out;
    engine_.resolver().Expand(U(tid), a, b, &out);
    return out;
  }
  const ResolvedWait* WaitOf(int32_t tid) const {
    const Utid u = engine_.tasks().Find(0, tid);
    for (const ResolvedWait& w : listener_.waits) {
      if (w.task == u) return &w;
    }
    return nullptr;
  }

  // The invariants on one interval: the breakdown sums to its length with no negative leaf,
  // and the expansion tiles it exactly with the same time per leaf.
  void CheckInterval(Utid u, int64_t a, int64_t b) {
    SCOPED_TRACE(testing::Message() << "task " << u << " [" << a << ", " << b << ")");
    const StateVec d = engine_.Breakdown(u, a, b);
    EXPECT_EQ(d.total(), b - a);
    for (int i = 0; i < kLeafCount; ++i) EXPECT_GE(d.ns[i], 0) << LeafName(static_cast<Leaf>(i));
    std::vector<PathSegment> pieces;
    engine_.resolver().Expand(u, a, b, &pieces);
    StateVec sums;
    int64_t at = a;
    for (const PathSegment& p : pieces) {
      EXPECT_EQ(p.start, at);
      EXPECT_LT(p.start, p.end);
      sums[p.leaf] += p.end - p.start;
      at = p.end;
    }
    EXPECT_EQ(at, b);
    EXPECT_EQ(sums.ns, d.ns);
  }
  // CheckInterval over every pair of instants among the task's segment boundaries, its
  // lifetime bounds, points between them and one before its history.
  void CheckTask(Utid u) {
    const TaskHistory& h = engine_.history(u);
    const int64_t end = std::max(engine_.TaskEnd(u), engine_.host_now(0));
    std::set<int64_t> points = {engine_.TaskStart(u) - 3, engine_.TaskStart(u), end};
    for (size_t i = 0; i < h.size(); ++i) {
      points.insert(h.at(i).start);
      points.insert(h.at(i).start + 1);
    }
    std::vector<int64_t> p(points.begin(), points.end());
    for (size_t i = 0; i < p.size(); ++i) {
      for (size_t j = i + 1; j < p.size(); ++j) CheckInterval(u, p[i], p[j]);
    }
  }
  void CheckAllTasks() {
    for (Utid u = 0; u < engine_.tasks().size(); ++u) {
      if (!engine_.history(u).empty()) CheckTask(u);
    }
    // Every resolved wait reported sums to its length.
    for (const ResolvedWait& w : listener_.waits) EXPECT_EQ(w.breakdown.total(), w.end - w.start);
    size_t segments = 0;
    for (Utid u = 0; u < engine_.tasks().size(); ++u) segments += engine_.history(u).size();
    EXPECT_EQ(engine_.counters().history_segments, segments);
  }

  Engine engine_;
  RecordingListener listener_;
};

// X (10) blocks at 10; W (20) wakes it at 50 from task context. Over [10, 50) X's path is
// W's: running [10, 20), preempted by Y [20, 30), running [30, 50).
TEST_F(EngineTest, WakeFromTaskFollowsTheWaker) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 20, kRunnable),
        Switch(10, 0, 10, 0, kSleeping), Switch(20, 1, 20, 30, kRunnable),
        Switch(30, 1, 30, 20, kSleeping), Waking(50, 1, 10), Switch(60, 0, 0, 10, kRunnable),
        Switch(100, 1, 20, 0, kRunnable)});
  const TaskHistory& h = engine_.history(U(10));
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h.at(1).kind, SegmentKind::kBlocked);
  EXPECT_EQ(h.link(1).type, WaitLink::Type::kTask);
  EXPECT_EQ(h.link(1).task, U(20));
  EXPECT_EQ(h.at(2).kind, SegmentKind::kPreempted);
  EXPECT_EQ(h.at(2).start, 50);

  const ResolvedWait* w = WaitOf(10);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->start, 10);
  EXPECT_EQ(w->end, 50);
  EXPECT_EQ(w->breakdown[Leaf::kRunning], 30);
  EXPECT_EQ(w->breakdown[Leaf::kPreempted], 10);

  const StateVec all = B(10, 0, 100);
  EXPECT_EQ(all[Leaf::kRunning], 10 + 30 + 40);
  EXPECT_EQ(all[Leaf::kPreempted], 10 + 10);
  const auto path = Path(10, 10, 50);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].task, U(20));
  EXPECT_EQ(path[0].leaf, Leaf::kRunning);
  EXPECT_EQ(path[1].leaf, Leaf::kPreempted);
  EXPECT_EQ(path[2].end, 50);
  EXPECT_EQ(engine_.counters().waits, 1u);  // Y's wait, never woken, is still pending
  CheckAllTasks();
}

TEST_F(EngineTest, WakeInsideAnHrtimerIsTimer) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 0, kRunnable),
        Switch(10, 0, 10, 0, kSleeping), MakeEvent(EventKind::kHrtimerEntry, 40, 1),
        Waking(45, 1, 10), MakeEvent(EventKind::kHrtimerExit, 46, 1),
        Switch(50, 0, 0, 10, kRunnable),
        // The local timer interrupt ran a timer; the wake-up after it is still the timer's.
        Switch(60, 0, 10, 0, kSleeping), IrqEntryEvent(70, 0, 0),
        MakeEvent(EventKind::kHrtimerEntry, 71, 0), MakeEvent(EventKind::kHrtimerExit, 72, 0),
        Waking(73, 0, 10), IrqExitEvent(74, 0, 0), Switch(80, 0, 0, 10, kRunnable)});
  EXPECT_EQ(B(10, 10, 45)[Leaf::kTimer], 35);
  EXPECT_EQ(B(10, 60, 73)[Leaf::kTimer], 13);
  EXPECT_EQ(engine_.history(U(10)).link(1).type, WaitLink::Type::kLeaf);
  CheckAllTasks();
}

TEST_F(EngineTest, WakeInsideAHardIrqThatCompletedABlockRequestIsDisk) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 0, kRunnable),
        Switch(10, 0, 10, 0, kSleeping), IrqEntryEvent(40, 1, 11),
        BlockEvent(EventKind::kBlockComplete, 41, 1, 8, 8, 1234), Waking(42, 1, 10),
        IrqExitEvent(43, 1, 11), Switch(50, 0, 0, 10, kRunnable),
        // The same irq line without a block completion: a plain irq.
        Switch(60, 0, 10, 0, kSleeping), IrqEntryEvent(70, 1, 11), Waking(71, 1, 10),
        IrqExitEvent(72, 1, 11), Switch(80, 0, 0, 10, kRunnable)});
  EXPECT_EQ(B(10, 10, 42)[Leaf::kDisk], 32);
  EXPECT_EQ(B(10, 60, 71)[Leaf::kIrq], 11);
  CheckAllTasks();
}

TEST_F(EngineTest, WakeFromIpiSoftirqFlagsAndIdle) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 0, kRunnable),
        Switch(10, 0, 10, 0, kSleeping),
        IpiEvent(EventKind::kIpiEntry, 20, 1, 251, kIpiCallFunction), Waking(21, 1, 10),
        IpiEvent(EventKind::kIpiExit, 22, 1, 251, kIpiCallFunction),
        Switch(30, 0, 0, 10, kRunnable), Switch(40, 0, 10, 0, kSleeping)});
  // perf marks the interrupt context on the event itself, entry events or not.
  Event flagged = Waking(50, 1, 10);
  flagged.ctx = kCtxKnown | kCtxSoftirq;
  Push({flagged, Switch(60, 0, 0, 10, kRunnable), Switch(70, 0, 10, 0, kSleeping),
        // The idle task wakes others only from untraced interrupts.
        Waking(80, 1, 10), Switch(90, 0, 0, 10, kRunnable)});
  EXPECT_EQ(B(10, 10, 21)[Leaf::kIpi], 11);
  EXPECT_EQ(B(10, 40, 50)[Leaf::kIrq], 10);
  EXPECT_EQ(B(10, 70, 80)[Leaf::kIrq], 10);
  CheckAllTasks();
}

// S (40) sends at 30 on the same host; the packet is received in NET_RX on CPU 2, which
// wakes X: X's path is S's until the send, then the packet in flight.
TEST_F(EngineTest, WakeInsideNetRxFollowsTheSenderThenNetwork) {
  constexpr int64_t kSkb = 0xbeef00;
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 40, kRunnable),
        Switch(0, 2, 0, 0, kRunnable), Switch(10, 0, 10, 0, kSleeping),
        Switch(20, 1, 40, 41, kRunnable), Switch(25, 1, 41, 40, kSleeping),
        PacketEvent(EventKind::kPacketOut, 30, 1, 100, kSkb),
        SoftirqEvent(EventKind::kSoftirqEntry, 70, 2, kNetRx),
        PacketEvent(EventKind::kPacketIn, 71, 2, 100, kSkb), Waking(72, 2, 10),
        SoftirqEvent(EventKind::kSoftirqExit, 73, 2, kNetRx), Switch(80, 0, 0, 10, kRunnable)});
  EXPECT_EQ(engine_.packets().counters().matched, 1u);
  const TaskHistory& h = engine_.history(U(10));
  ASSERT_GE(h.size(), 2u);
  EXPECT_EQ(h.link(1).type, WaitLink::Type::kPacket);
  EXPECT_EQ(h.link(1).task, U(40));
  EXPECT_EQ(h.link(1).ts, 30);
  const StateVec d = B(10, 10, 72);
  EXPECT_EQ(d[Leaf::kRunning], 10 + 5);  // S ran [10, 20) and [25, 30)
  EXPECT_EQ(d[Leaf::kPreempted], 5);     // S preempted by 41 [20, 25)
  EXPECT_EQ(d[Leaf::kNetwork], 42);
  const auto path = Path(10, 10, 72);
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(path[0].task, U(40));
  EXPECT_EQ(path[3].leaf, Leaf::kNetwork);
  EXPECT_EQ(path[3].start, 30);
  EXPECT_EQ(path[3].task, U(10));
  CheckAllTasks();
}

// A shard's engine (docs/scale.md): a receive no local send matches comes from another shard's
// sender, which stands in as a remote task; the wait it ends is the sender's summary over
// [wait start, send), then network. The peers here are a stand-in for the bus (the real ones
// are tested end to end in live-shards-equal-one-analyzer): they answer as a shard would.
class FakePeers : public RemotePeers {
 public:
  explicit FakePeers(Engine& engine) : engine_(engine) {}
  bool Remote(const PacketKey& key) override { return key.daddr == kRemoteAddr; }
  void OnSend(uint16_t, int64_t ts, const PacketKey&, Utid sender, const StateVec& cum) override {
    sends.push_back({ts, sender, cum});
  }
  std::optional<RemoteSend> OnReceive(uint16_t, int64_t, const PacketKey& key) override {
    if (key.saddr != kRemoteAddr) return std::nullopt;
    const Utid u = engine_.RemoteTask(7, 4242, 4240, StringTable::Global().Intern("db"), 40);
    return RemoteSend{u, 40};
  }
  std::optional<StateVec> RemoteBreakdown(const RemoteSend&, int64_t a) override {
    asked_at = a;
    if (!answer) return std::nullopt;
    StateVec v;
    v[Leaf::kRunning] = 20;
    v[Leaf::kDisk] = 10;
    return v;
  }
  static constexpr uint32_t kRemoteAddr = 0x0a000014;
  struct Send {
    int64_t ts;
    Utid sender;
    StateVec cum;
  };
  std::vector<Send> sends;
  int64_t asked_at = -1;
  bool answer = true;

 private:
  Engine& engine_;
};

Batch KeyedBatch(std::vector<Event> events, std::vector<PacketKey> keys) {
  Batch batch;
  batch.host = 0;
  batch.events = std::move(events);
  batch.packets = std::move(keys);
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  return batch;
}

Event KeyedPacket(EventKind kind, int64_t ts, uint16_t cpu, int32_t key) {
  Event e = PacketEvent(kind, ts, cpu, 100, 0x1000 + key);
  AsPacket(e).key() = key;
  return e;
}

TEST_F(EngineTest, WaitOnAnotherShardsSenderIsItsSummaryThenNetwork) {
  FakePeers peers(engine_);
  engine_.SetRemotePeers(&peers);
  PacketKey out, in;
  out.saddr = 0x0a00000a, out.daddr = FakePeers::kRemoteAddr, out.seq = 1;
  in.saddr = FakePeers::kRemoteAddr, in.daddr = 0x0a00000a, in.seq = 2;
  out.has_addresses = out.has_tcp = in.has_addresses = in.has_tcp = true;
  // X (10) sends its request to the remote address at 8 and blocks at 10; the reply is
  // received at 71 in NET_RX and wakes it at 72.
  engine_.Push(KeyedBatch(
      {Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 0, kRunnable),
       KeyedPacket(EventKind::kPacketOut, 8, 0, 0), Switch(10, 0, 10, 0, kSleeping),
       SoftirqEvent(EventKind::kSoftirqEntry, 70, 1, kNetRx),
       KeyedPacket(EventKind::kPacketIn, 71, 1, 1), Waking(72, 1, 10),
       SoftirqEvent(EventKind::kSoftirqExit, 73, 1, kNetRx), Switch(80, 0, 0, 10, kRunnable)},
      {out, in}));
  // The send to the other shard was handed over with the sender's vector there.
  ASSERT_EQ(peers.sends.size(), 1u);
  EXPECT_EQ(peers.sends[0].ts, 8);
  EXPECT_EQ(peers.sends[0].sender, U(10));
  EXPECT_EQ(peers.sends[0].cum.ns, engine_.Cumulative(U(10), 8).ns);
  EXPECT_EQ(peers.asked_at, 10);  // the sender's vector asked at the wait's start
  const StateVec d = B(10, 10, 72);
  EXPECT_EQ(d[Leaf::kRunning], 20);
  EXPECT_EQ(d[Leaf::kDisk], 10);
  EXPECT_EQ(d[Leaf::kNetwork], 32);  // [40, 72)
  EXPECT_EQ(engine_.counters().remote_waits, 1u);
  // The remote task, its states laid end to end, then the packet in flight.
  const auto path = Path(10, 10, 72);
  ASSERT_EQ(path.size(), 3u);
  const Task& sender = engine_.tasks()[path[0].task];
  EXPECT_TRUE(sender.remote);
  EXPECT_EQ(sender.host, 7);
  EXPECT_EQ(sender.tid, 4242);
  EXPECT_EQ(path[0].leaf, Leaf::kRunning);
  EXPECT_EQ(path[1].leaf, Leaf::kDisk);
  EXPECT_EQ(path[1].end, 40);
  EXPECT_EQ(path[2].task, U(10));
  EXPECT_EQ(path[2].leaf, Leaf::kNetwork);
  CheckAllTasks();
}

TEST_F(EngineTest, WaitOnAnotherShardsSenderWithoutItsSummaryIsNetwork) {
  FakePeers peers(engine_);
  peers.answer = false;
  engine_.SetRemotePeers(&peers);
  PacketKey in;
  in.saddr = FakePeers::kRemoteAddr, in.daddr = 0x0a00000a, in.seq = 2;
  in.has_addresses = in.has_tcp = true;
  engine_.Push(KeyedBatch(
      {Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 0, kRunnable),
       Switch(10, 0, 10, 0, kSleeping), SoftirqEvent(EventKind::kSoftirqEntry, 70, 1, kNetRx),
       KeyedPacket(EventKind::kPacketIn, 71, 1, 0), Waking(72, 1, 10),
       SoftirqEvent(EventKind::kSoftirqExit, 73, 1, kNetRx), Switch(80, 0, 0, 10, kRunnable)},
      {in}));
  EXPECT_EQ(B(10, 10, 72)[Leaf::kNetwork], 62);
  EXPECT_EQ(engine_.counters().remote_unresolved, 1u);
  CheckAllTasks();
}

TEST_F(EngineTest, PacketFromInterruptContextOrUnmatchedIsNetwork) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 40, kRunnable),
        Switch(10, 0, 10, 0, kSleeping), SoftirqEvent(EventKind::kSoftirqEntry, 20, 1, 2),
        PacketEvent(EventKind::kPacketOut, 21, 1, 10, 0x1),
        SoftirqEvent(EventKind::kSoftirqExit, 22, 1, 2),
        SoftirqEvent(EventKind::kSoftirqEntry, 30, 1, kNetRx),
        PacketEvent(EventKind::kPacketIn, 31, 1, 10, 0x1), Waking(32, 1, 10),
        SoftirqEvent(EventKind::kSoftirqExit, 33, 1, kNetRx), Switch(40, 0, 0, 10, kRunnable),
        Switch(50, 0, 10, 0, kSleeping), SoftirqEvent(EventKind::kSoftirqEntry, 60, 1, kNetRx),
        PacketEvent(EventKind::kPacketIn, 61, 1, 10, 0x2), Waking(62, 1, 10),
        SoftirqEvent(EventKind::kSoftirqExit, 63, 1, kNetRx), Switch(70, 0, 0, 10, kRunnable)});
  EXPECT_EQ(B(10, 10, 32)[Leaf::kNetwork], 22);
  EXPECT_EQ(B(10, 50, 62)[Leaf::kNetwork], 12);
  EXPECT_EQ(engine_.packets().counters().matched, 1u);
  CheckAllTasks();
}

TEST_F(EngineTest, PrevStateDecidesPreemptedOrBlocked) {
  struct Case {
    int64_t prev_state;
    SegmentKind kind;
  };
  const Case cases[] = {{0, SegmentKind::kPreempted},    {1, SegmentKind::kBlocked},
                        {2, SegmentKind::kBlocked},      {0x80, SegmentKind::kBlocked},
                        {1024, SegmentKind::kPreempted}, {2048, SegmentKind::kPreempted},
                        {256, SegmentKind::kPreempted},  {2048 | 1, SegmentKind::kBlocked}};
  int32_t tid = 100;
  int64_t ts = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "prev_state " << c.prev_state);
    Push({Switch(ts, 0, 0, tid, kRunnable), Switch(ts + 10, 0, tid, 0, c.prev_state)});
    const TaskHistory& h = engine_.history(U(tid));
    EXPECT_EQ(h.back().kind, c.kind);
    EXPECT_EQ(h.back().start, ts + 10);
    ++tid;
    ts += 100;
  }
  // The preempted task's time counts as its own preemption.
  const StateVec d = B(100, 0, 50);
  EXPECT_EQ(d[Leaf::kRunning], 10);
  EXPECT_EQ(d[Leaf::kPreempted], 40);
  CheckAllTasks();
}

TEST_F(EngineTest, InterruptOverARunningTaskIsInterrupted) {
  Push({Switch(0, 0, 0, 10, kRunnable), IrqEntryEvent(10, 0, 5),
        SoftirqEvent(EventKind::kSoftirqEntry, 12, 0, 1),
        SoftirqEvent(EventKind::kSoftirqExit, 14, 0, 1), IrqExitEvent(15, 0, 5),
        IpiEvent(EventKind::kIpiEntry, 20, 0, 1, kIpiReschedule),
        IpiEvent(EventKind::kIpiExit, 21, 0, 1, kIpiReschedule), Switch(30, 0, 10, 0, kRunnable)});
  const StateVec d = B(10, 0, 30);
  EXPECT_EQ(d[Leaf::kRunning], 24);
  EXPECT_EQ(d[Leaf::kInterrupted], 6);
  const TaskHistory& h = engine_.history(U(10));
  ASSERT_EQ(h.size(), 6u);
  EXPECT_EQ(h.at(1).kind, SegmentKind::kInterrupted);
  EXPECT_EQ(h.at(1).start, 10);
  EXPECT_EQ(h.at(2).start, 15);
  CheckAllTasks();
}

TEST_F(EngineTest, InterruptWithoutExitEndsAtTheNextSwitch) {
  Push({Switch(0, 0, 0, 10, kRunnable), IrqEntryEvent(10, 0, 5), Switch(20, 0, 10, 11, kRunnable),
        IrqExitEvent(25, 0, 5), Switch(30, 0, 11, 10, kSleeping)});
  const StateVec d = B(10, 0, 40);
  EXPECT_EQ(d[Leaf::kRunning], 10 + 10);
  EXPECT_EQ(d[Leaf::kInterrupted], 10);
  EXPECT_EQ(d[Leaf::kPreempted], 10);
  CheckAllTasks();
}

// P (50) forks C (51) at 30 during X's wait; C wakes X at 60. Before C's birth X's path
// follows P.
TEST_F(EngineTest, ForkLinkFollowsTheParentBeforeBirth) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 50, kRunnable),
        Switch(10, 0, 10, 0, kSleeping), ForkEvent(30, 1, 50, 51, 51),
        WakeEvent(EventKind::kSchedWakeupNew, 30, 1, 51, 1), Switch(40, 1, 50, 51, kRunnable),
        Waking(60, 1, 10), Switch(70, 0, 0, 10, kRunnable)});
  const Utid c = U(51);
  EXPECT_EQ(engine_.tasks()[c].parent, U(50));
  EXPECT_EQ(engine_.tasks()[c].birth, 30);
  EXPECT_EQ(engine_.tasks()[c].pid, 51);
  EXPECT_EQ(engine_.TaskStart(c), 30);
  const StateVec d = B(10, 10, 60);
  EXPECT_EQ(d[Leaf::kRunning], 20 + 20);
  EXPECT_EQ(d[Leaf::kPreempted], 10);
  EXPECT_EQ(d[Leaf::kUnknown], 0);
  const auto path = Path(10, 10, 60);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].task, U(50));
  EXPECT_EQ(path[0].end, 30);
  EXPECT_EQ(path[1].task, c);
  EXPECT_EQ(path[1].leaf, Leaf::kPreempted);
  EXPECT_EQ(path[2].task, c);
  EXPECT_EQ(path[2].leaf, Leaf::kRunning);
  CheckAllTasks();
}

// Z wakes Y at 40, Y wakes X at 70: X's wait goes through Y's wait down to Z.
TEST_F(EngineTest, ChainOfThreeTasks) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 20, kRunnable),
        Switch(0, 2, 0, 30, kRunnable), Switch(5, 1, 20, 0, kSleeping),
        Switch(10, 0, 10, 0, kSleeping), Waking(40, 2, 20), Switch(45, 1, 0, 20, kRunnable),
        Waking(70, 1, 10), Switch(75, 0, 0, 10, kRunnable), Switch(90, 2, 30, 0, kSleeping)});
  const StateVec d = B(10, 10, 70);
  EXPECT_EQ(d[Leaf::kRunning], 30 + 25);
  EXPECT_EQ(d[Leaf::kPreempted], 5);
  const StateVec inside = B(10, 20, 50);  // inside both waits
  EXPECT_EQ(inside[Leaf::kRunning], 20 + 5);
  EXPECT_EQ(inside[Leaf::kPreempted], 5);
  const auto path = Path(10, 10, 70);
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].task, U(30));
  EXPECT_EQ(path[0].end, 40);
  EXPECT_EQ(path[1].task, U(20));
  EXPECT_EQ(path[1].leaf, Leaf::kPreempted);
  EXPECT_EQ(path[2].task, U(20));
  EXPECT_EQ(path[2].end, 70);
  CheckAllTasks();
}

TEST_F(EngineTest, SwitchedInWithoutAWakeUpIsBlockedOrUnknownAfterLoss) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(10, 0, 10, 0, kSleeping),
        Switch(50, 0, 0, 10, kRunnable), Switch(60, 0, 10, 0, kSleeping), Lost(80, 1, 75),
        Switch(100, 0, 0, 10, kRunnable), Switch(110, 0, 10, 0, kRunnable)});
  EXPECT_EQ(engine_.counters().missed_wakeups, 2u);
  EXPECT_EQ(engine_.counters().loss_markers, 1u);
  EXPECT_EQ(B(10, 10, 50)[Leaf::kBlocked], 40);
  EXPECT_EQ(B(10, 60, 100)[Leaf::kUnknown], 40);
  EXPECT_EQ(engine_.history(U(10)).link(1).type, WaitLink::Type::kNone);
  CheckAllTasks();
}

TEST_F(EngineTest, LostEventsMakeTheRunningTaskUnknown) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 20, kRunnable),
        Switch(5, 1, 20, 0, kSleeping), Lost(40, 0, 30),
        // A wake-up from the CPU whose state is lost has an unknown waker.
        Waking(45, 0, 20), Switch(60, 0, 10, 11, kRunnable), Switch(70, 0, 11, 10, kSleeping)});
  const StateVec d = B(10, 0, 70);
  EXPECT_EQ(d[Leaf::kRunning], 30);
  EXPECT_EQ(d[Leaf::kUnknown], 30);
  EXPECT_EQ(d[Leaf::kPreempted], 10);
  EXPECT_EQ(engine_.counters().unknown_wakers, 1u);
  EXPECT_EQ(B(20, 5, 45)[Leaf::kUnknown], 40);
  CheckAllTasks();
}

TEST_F(EngineTest, StatedumpWaitingTaskStartsBlocked) {
  Push({StatedumpProcessEvent(0, 0, 10, 9, kStatedumpWait), StatedumpProcessEvent(0, 0, 20, 20, 1),
        Switch(5, 1, 0, 20, kRunnable), Waking(30, 1, 10), Switch(40, 0, 0, 10, kRunnable),
        Switch(50, 0, 10, 0, kRunnable)});
  const Utid x = U(10);
  EXPECT_EQ(engine_.tasks()[x].pid, 9);
  EXPECT_EQ(engine_.TaskStart(x), 0);
  EXPECT_EQ(engine_.history(x).at(0).kind, SegmentKind::kBlocked);
  EXPECT_EQ(engine_.history(x).link(0).task, U(20));
  // W's history starts at its first switch; before that its path is unknown.
  const StateVec d = B(10, 0, 30);
  EXPECT_EQ(d[Leaf::kUnknown], 5);
  EXPECT_EQ(d[Leaf::kRunning], 25);
  EXPECT_EQ(engine_.TaskStart(U(20)), 5);
  CheckAllTasks();
}

TEST_F(EngineTest, StatedumpOfARunnableTaskAddsNoHistory) {
  Push({Switch(0, 0, 0, 30, kRunnable), StatedumpProcessEvent(1, 0, 10, 10, 1)});
  const Utid x = U(10);
  EXPECT_EQ(engine_.tasks()[x].pid, 10);
  EXPECT_TRUE(engine_.history(x).empty());
  EXPECT_EQ(engine_.Breakdown(x, 0, 10)[Leaf::kUnknown], 10);
  Push({Switch(20, 0, 30, 10, kRunnable)});
  EXPECT_EQ(engine_.TaskStart(x), 20);
  CheckAllTasks();
}

// kmod/ cgroup events: a state dump names a task's cgroup, a fork inherits it, an attach of a
// thread group moves every thread of the process, one of a single thread only that one, and
// other hierarchies (cgroup v1) name nothing.
TEST_F(EngineTest, CgroupsFromStatedumpAttachAndFork) {
  StringTable& s = StringTable::Global();
  const auto id = [&](std::string_view p) { return static_cast<int32_t>(s.Intern(p)); };
  Push({CgroupEvent(0, 0, 10, 10, id("/init.scope")), StatedumpProcessEvent(0, 0, 10, 10, 1),
        Switch(1, 0, 0, 10, kRunnable), ForkEvent(2, 0, 10, 11, 10), ForkEvent(3, 0, 10, 12, 12)});
  EXPECT_EQ(s.Get(engine_.tasks()[U(10)].cgroup), "/init.scope");
  EXPECT_EQ(s.Get(engine_.tasks()[U(11)].cgroup), "/init.scope");  // a thread
  EXPECT_EQ(s.Get(engine_.tasks()[U(12)].cgroup), "/init.scope");  // a child process
  Push({CgroupEvent(4, 0, 10, 10, id("/system.slice/wl.service"), 1),
        CgroupEvent(5, 0, 12, 12, id("/system.slice/other.service"), 0),
        CgroupEvent(6, 0, 12, 12, id("/cpu,cpuacct/x"), 1, /*hierarchy=*/2)});
  EXPECT_EQ(s.Get(engine_.tasks()[U(10)].cgroup), "/system.slice/wl.service");
  EXPECT_EQ(s.Get(engine_.tasks()[U(11)].cgroup), "/system.slice/wl.service");
  EXPECT_EQ(s.Get(engine_.tasks()[U(12)].cgroup), "/system.slice/other.service");
  // A task first named by its cgroup event (a state dump lists it before its process state).
  Push({CgroupEvent(7, 0, 20, 20, id("/")), StatedumpProcessEvent(7, 0, 20, 20, 1)});
  EXPECT_EQ(s.Get(engine_.tasks()[U(20)].cgroup), "/");
  EXPECT_EQ(engine_.tasks()[U(20)].pid, 20);
  CheckAllTasks();
}

TEST_F(EngineTest, ExitThenFinalSwitchEndsTheTask) {
  Push({Switch(0, 0, 0, 10, kRunnable), ProcessEndEvent(EventKind::kProcessExit, 50, 0, 10)});
  const Utid x = U(10);
  EXPECT_EQ(engine_.TaskEnd(x), 50);  // the exit, until the final switch is seen
  Push({Switch(55, 0, 10, 0, 0x80), ProcessEndEvent(EventKind::kProcessFree, 60, 1, 10),
        Switch(70, 1, 0, 10, kRunnable), Switch(80, 1, 10, 0, kSleeping)});
  EXPECT_EQ(engine_.TaskEnd(x), 55);
  EXPECT_EQ(engine_.TaskStart(x), 0);
  // Freed: the tid now names a new task.
  const Utid again = U(10);
  EXPECT_NE(again, x);
  EXPECT_EQ(engine_.TaskStart(again), 70);
  EXPECT_EQ(engine_.TaskEnd(again), 80);  // alive: to the host's newest event
  CheckAllTasks();
}

// After sched_process_exit a task may still sleep and run (closing files, freeing memory):
// its life ends at the switch-out in a dead state. A later switch-in of its tid without a
// traced free or fork is a new task (the tid was reused).
TEST_F(EngineTest, ExitThenASleepIsNotTheEndAndAReusedTidIsANewTask) {
  Push({Switch(0, 0, 0, 10, kRunnable), ProcessEndEvent(EventKind::kProcessExit, 50, 0, 10),
        Switch(55, 0, 10, 0, kSleeping), Waking(60, 1, 10), Switch(65, 0, 0, 10, kRunnable),
        Switch(70, 0, 10, 0, 0x20 /* EXIT_ZOMBIE */)});
  const Utid x = U(10);
  EXPECT_EQ(engine_.TaskEnd(x), 70);
  Push({Switch(80, 1, 0, 10, kRunnable), Switch(90, 1, 10, 0, kSleeping)});
  const Utid again = U(10);
  EXPECT_NE(again, x);
  EXPECT_EQ(engine_.TaskStart(again), 80);
  EXPECT_EQ(engine_.TaskEnd(x), 70);
  const StateVec life = engine_.Cumulative(x, engine_.TaskEnd(x));
  EXPECT_EQ(life.total(), 70);
  EXPECT_EQ(life[Leaf::kRunning], 55 + 5);
  CheckAllTasks();
}

TEST_F(EngineTest, SchedWakeupIsUsedOnlyWithoutSchedWaking) {
  const auto events = [](int64_t t0) {
    return std::vector<Event>{Switch(t0, 0, 0, 10, kRunnable), Switch(t0, 1, 0, 20, kRunnable),
                              Switch(t0 + 10, 0, 10, 0, kSleeping),
                              WakeEvent(EventKind::kSchedWakeup, t0 + 30, 1, 10, 0),
                              Switch(t0 + 40, 0, 0, 10, kRunnable)};
  };
  Push(events(0));  // with sched_waking: the later wakeup is not the waker's context
  EXPECT_EQ(B(10, 10, 40)[Leaf::kBlocked], 30);
  Push(events(100), kDialectHasSwitch);
  EXPECT_EQ(B(10, 110, 130)[Leaf::kRunning], 20);
  CheckAllTasks();
}

// The dialect is each host's own, also when the hosts' events are interleaved (merged
// input): sched_wakeup is the waker's context only on a host without sched_waking.
TEST_F(EngineTest, TheDialectIsEachHostsOwn) {
  Batch with_waking;
  with_waking.host = 0;
  with_waking.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  Batch wakeup_only;
  wakeup_only.host = 1;
  wakeup_only.counters.dialect = kDialectHasSwitch;
  const std::vector<Event> events = {Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 20, kRunnable),
                                     Switch(10, 0, 10, 0, kSleeping),
                                     WakeEvent(EventKind::kSchedWakeup, 30, 1, 10, 0),
                                     Switch(40, 0, 0, 10, kRunnable)};
  for (const Event& e : events) {
    engine_.Process(e, with_waking);
    engine_.Process(e, wakeup_only);
  }
  EXPECT_EQ(B(10, 10, 40)[Leaf::kBlocked], 30);
  const Utid other = engine_.tasks().Find(1, 10);
  ASSERT_NE(other, kNoTask);
  EXPECT_EQ(engine_.Breakdown(other, 10, 30)[Leaf::kRunning], 20);
  EXPECT_EQ(engine_.history(other).link(1).task, engine_.tasks().Find(1, 20));
}

TEST_F(EngineTest, PerfCurrentTaskFillsInAnUnseenCpu) {
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(10, 0, 10, 0, kSleeping)});
  Event e = Waking(30, 1, 10);
  e.cur_tid = 20;
  e.cur_pid = 2;
  Push({e, Switch(40, 0, 0, 10, kRunnable)}, kDialectPerf | kDialectHasWaking | kDialectHasSwitch);
  const Utid w = U(20);
  EXPECT_EQ(engine_.tasks()[w].pid, 2);
  EXPECT_EQ(engine_.history(U(10)).link(1).task, w);
  EXPECT_EQ(B(10, 10, 30)[Leaf::kUnknown], 20);  // W was first seen at 30
  CheckAllTasks();
}

// perf lost the switch from idle into the child on CPU 1 (as it does on some machines): the
// child's own events still name it. Its wake-up of the parent is the child's, not an
// interrupt of the idle task, and the child's time since the CPU's last event is unknown
// (the switch could have come at any point of it), then its own.
TEST_F(EngineTest, ALostSwitchIsInferredFromTheEventsOwnCurrentTask) {
  // CPU 0: the parent (10) runs, then waits for the child (20); CPU 1 goes idle at 5.
  Push({On(Switch(0, 0, 0, 10, kRunnable), 0), On(Switch(0, 1, 0, 30, kRunnable), 0),
        On(Switch(5, 1, 30, 0, kSleeping), 30), On(Waking(8, 0, 20), 10),
        On(Switch(10, 0, 10, 0, kSleeping), 10)},
       kPerf);
  // [idle -> 20 on CPU 1 lost, somewhere after 8] The child wakes the parent at 40.
  Push({On(Waking(40, 1, 10), 20), On(Switch(42, 0, 0, 10, kRunnable), 0),
        On(Switch(50, 1, 20, 0, kSleeping), 20)},
       kPerf);
  EXPECT_EQ(engine_.counters().inferred_switches, 1u);
  const Utid child = U(20);
  const TaskHistory& parent = engine_.history(U(10));
  ASSERT_GE(parent.size(), 3u);
  EXPECT_EQ(parent.link(1).type, WaitLink::Type::kTask);
  EXPECT_EQ(parent.link(1).task, child);
  // The child: preempted from its wake-up (8) until the CPU's last event... the switch was
  // lost somewhere in [8, 40): unknown, then running until 50.
  const StateVec c = B(20, 8, 50);
  EXPECT_EQ(c[Leaf::kUnknown], 32);
  EXPECT_EQ(c[Leaf::kRunning], 10);
  EXPECT_EQ(B(10, 10, 40)[Leaf::kIrq], 0);
  CheckAllTasks();
}

// A task we thought asleep is named current by an event of its own: its wake-up and switch-in
// were lost. Its wait ends, unknown, when its CPU was last seen otherwise; from there to the
// event it is unknown too, then its own.
TEST_F(EngineTest, AnInferredSwitchOfASleepingTaskEndsItsWaitUnknown) {
  Push({On(Switch(0, 0, 0, 10, kRunnable), 0), On(Switch(10, 0, 10, 0, kSleeping), 10),
        On(SoftirqEvent(EventKind::kSoftirqRaise, 20, 0, kNetRx), 0), On(Waking(40, 0, 99), 10),
        On(Switch(50, 0, 10, 0, kSleeping), 10)},
       kPerf);
  EXPECT_EQ(engine_.counters().inferred_switches, 1u);
  EXPECT_EQ(engine_.counters().missed_wakeups, 1u);
  const StateVec d = B(10, 10, 50);
  EXPECT_EQ(d[Leaf::kUnknown], 30);
  EXPECT_EQ(d[Leaf::kRunning], 10);
  EXPECT_EQ(engine_.history(U(99)).at(0).start, 40);  // woken by 10, already current
  CheckAllTasks();                                    // the history counters too
}

// A packet received by a threaded NAPI poller (or an `irq/N-eth…` thread, or any IRQ under
// PREEMPT_RT) in task context: the wake-up it makes is network, followed to the sender when
// the packet is matched, not the thread's own running.
TEST_F(EngineTest, WakeFromAnInterruptThreadIsTheInterrupts) {
  constexpr int64_t kSkb = 0xbeef00;
  const int32_t napi = static_cast<int32_t>(StringTable::Global().Intern("napi/eth0-8193"));
  const int32_t irq_nvme = static_cast<int32_t>(StringTable::Global().Intern("irq/130-nvme0q1"));
  // X (10) sleeps at 10; S (40) sends at 30; the NAPI thread (60) receives it on CPU 2 in
  // task context at 71 and wakes X at 72.
  Push({Switch(0, 0, 0, 10, kRunnable), Switch(0, 1, 0, 40, kRunnable),
        Switch(0, 2, 0, 0, kRunnable), Switch(10, 0, 10, 0, kSleeping),
        PacketEvent(EventKind::kPacketOut, 30, 1, 100, kSkb),
        SwitchEvent(70, 2, 0, 60, kRunnable, kNoComm, napi),
        PacketEvent(EventKind::kPacketIn, 71, 2, 100, kSkb), Waking(72, 2, 10),
        Switch(75, 2, 60, 0, kSleeping), Switch(80, 0, 0, 10, kRunnable)});
  const TaskHistory& h = engine_.history(U(10));
  ASSERT_GE(h.size(), 2u);
  EXPECT_EQ(h.link(1).type, WaitLink::Type::kPacket);
  EXPECT_EQ(h.link(1).task, U(40));
  const StateVec d = B(10, 10, 72);
  EXPECT_EQ(d[Leaf::kRunning], 20);  // S ran [10, 30)
  EXPECT_EQ(d[Leaf::kNetwork], 42);  // in flight, then in the NAPI thread
  // A threaded disk interrupt's wake-up is disk; a wake-up after the thread left is the
  // next task's.
  Push({Switch(90, 0, 10, 0, kSleeping), SwitchEvent(95, 2, 0, 61, kRunnable, kNoComm, irq_nvme),
        MakeEvent(EventKind::kBlockComplete, 96, 2), Waking(97, 2, 10),
        Switch(98, 2, 61, 0, kSleeping), Switch(99, 0, 0, 10, kRunnable)});
  ASSERT_GE(h.size(), 4u);
  EXPECT_EQ(B(10, 90, 97)[Leaf::kDisk], 7);
  EXPECT_EQ(engine_.counters().inferred_switches, 0u);
  CheckAllTasks();
}

// Two tasks ping-pong on one CPU long past a small retention window: in each 10 ns round
// the current one is interrupted [2, 3), wakes the other at 5 and blocks at 10.
class EngineEvictionTest : public EngineTest {
 protected:
  static constexpr int64_t kStep = 10;
  // 4 events a round; the engine evicts every 16384 events of a host, so 8192 rounds end
  // just after its second pass.
  static constexpr int kRounds = 8192;

  static std::vector<Event> PingPong(int64_t t0, int first_round, int rounds) {
    std::vector<Event> events;
    int32_t cur = first_round % 2 == 0 ? 10 : 20;
    int32_t other = first_round % 2 == 0 ? 20 : 10;
    int64_t ts = t0;
    for (int i = 0; i < rounds; ++i) {
      events.push_back(IrqEntryEvent(ts + 2, 0, 5));
      events.push_back(IrqExitEvent(ts + 3, 0, 5));
      events.push_back(Waking(ts + 5, 0, other));
      ts += kStep;
      events.push_back(Switch(ts, 0, cur, other, kSleeping));
      std::swap(cur, other);
    }
    return events;
  }

  // Breakdown and expansion of X over [a, b) for a and b around the eviction horizon.
  void CheckAround(Engine& engine, Utid x, std::initializer_list<int64_t> as,
                   std::initializer_list<int64_t> bs) {
    for (int64_t a : as) {
      for (int64_t b : bs) {
        if (a >= b) continue;
        SCOPED_TRACE(testing::Message() << "[" << a << ", " << b << ")");
        const StateVec d = engine.Breakdown(x, a, b);
        EXPECT_EQ(d.total(), b - a);
        for (int i = 0; i < kLeafCount; ++i) {
          EXPECT_GE(d.ns[i], 0) << LeafName(static_cast<Leaf>(i));
        }
        std::vector<PathSegment> pieces;
        engine.resolver().Expand(x, a, b, &pieces);
        StateVec sums;
        int64_t at = a;
        for (const PathSegment& p : pieces) {
          EXPECT_EQ(p.start, at);
          sums[p.leaf] += p.end - p.start;
          at = p.end;
        }
        EXPECT_EQ(at, b);
        EXPECT_EQ(sums.ns, d.ns);
      }
    }
  }
};

TEST_F(EngineEvictionTest, OldHistoryIsEvictedAndReadsIntoItAreUnknown) {
  Engine engine(EngineOptions{.retention_ns = 1000});
  RecordingListener listener;
  engine.SetListener(&listener);
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {Switch(0, 0, 0, 10, kRunnable)};
  engine.Push(batch);
  const Utid x = engine.tasks().Find(0, 10);
  EXPECT_EQ(engine.tasks().Find(0, 20), kNoTask);

  // Passes run every quarter of the retention (and every 16384 events): the retained
  // history stays the same size however long the input runs.
  constexpr int kFirst = 4000;
  batch.events = PingPong(0, 0, kFirst);
  engine.Push(batch);
  EXPECT_GT(engine.counters().evicted_segments, 0u);
  const uint64_t early = engine.counters().history_segments;
  const size_t early_bytes = engine.history_bytes();
  batch.events = PingPong(kStep * kFirst, kFirst, kRounds - kFirst);
  engine.Push(batch);
  const int64_t now = engine.host_now(0);
  EXPECT_EQ(now, kStep * kRounds);
  EXPECT_LE(engine.counters().history_segments, early + early / 4);
  EXPECT_LE(engine.history_bytes(), early_bytes + early_bytes / 4);
  EXPECT_GT(engine.history(x).start(), 0);
  size_t segments = 0;
  for (Utid u = 0; u < engine.tasks().size(); ++u) segments += engine.history(u).size();
  EXPECT_EQ(engine.counters().history_segments, segments);

  // The whole life: the evicted part is unknown and counted; the sum holds.
  const uint64_t reads = engine.resolver().counters().evicted_reads;
  const StateVec whole = engine.Breakdown(x, 0, now);
  EXPECT_EQ(whole.total(), now);
  EXPECT_GE(whole[Leaf::kUnknown], engine.history(x).start());
  EXPECT_GT(engine.resolver().counters().evicted_reads, reads);
  std::vector<PathSegment> pieces;
  engine.resolver().Expand(x, 0, now, &pieces);
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.front().start, 0);
  EXPECT_EQ(pieces.front().leaf, Leaf::kUnknown);
  EXPECT_EQ(pieces.back().end, now);
  CheckAround(engine, x, {0, now - 1500, now - 1000}, {now - 900, now});

  // Recent history is intact. In every 20 ns a task runs 9 and is interrupted 1, is blocked
  // 5 on the other (which runs 4 and is interrupted 1 meanwhile), and is runnable 5.
  const StateVec recent = engine.Breakdown(x, now - 400, now);
  EXPECT_EQ(recent.total(), 400);
  EXPECT_EQ(recent[Leaf::kUnknown], 0);
  EXPECT_EQ(recent[Leaf::kRunning], 20 * (9 + 4));
  EXPECT_EQ(recent[Leaf::kInterrupted], 20 * 2);
  EXPECT_EQ(recent[Leaf::kPreempted], 20 * 5);
  for (const ResolvedWait& w : listener.waits) ASSERT_EQ(w.breakdown.total(), w.end - w.start);
}

// A wait that began long before the eviction cutoff and is woken after the eviction: its
// evicted part is unknown.
TEST_F(EngineEvictionTest, LongWaitWokenAfterEviction) {
  Engine engine(EngineOptions{.retention_ns = 1000});
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  // X (30) blocks at 1 on CPU 1; the ping-pong on CPU 0 runs; at the end 10 wakes X.
  batch.events = {Switch(0, 1, 0, 30, kRunnable), Switch(0, 0, 0, 10, kRunnable),
                  Switch(1, 1, 30, 0, kSleeping)};
  const std::vector<Event> more = PingPong(2, 0, kRounds);
  batch.events.insert(batch.events.end(), more.begin(), more.end());
  const int64_t end = batch.events.back().ts;
  const int32_t last = (kRounds % 2 == 0) ? 10 : 20;  // current on CPU 0 at the end
  batch.events.push_back(Waking(end + 1, 0, 30));
  batch.events.push_back(Switch(end + 5, 1, 0, 30, kRunnable));
  const uint64_t reads = engine.resolver().counters().evicted_reads;
  engine.Push(batch);
  EXPECT_GT(engine.resolver().counters().evicted_reads, reads);  // at the wake-up
  const Utid x = engine.tasks().Find(0, 30);
  ASSERT_EQ(engine.history(x).at(0).kind, SegmentKind::kBlocked);  // the long wait is retained
  ASSERT_EQ(engine.history(x).at(0).start, 1);
  ASSERT_EQ(engine.history(x).link(0).task, engine.tasks().Find(0, last));
  ASSERT_GT(engine.history(engine.tasks().Find(0, last)).start(), 1000);
  const StateVec wait = engine.history(x).cum(1) - engine.history(x).cum(0);
  EXPECT_EQ(wait.total(), end);
  EXPECT_GT(wait[Leaf::kUnknown], end - 1100);
  EXPECT_GT(wait[Leaf::kRunning], 0);
  CheckAround(engine, x, {0, 1, 500, end - 1500, end - 500}, {end - 100, end + 1, end + 5});
}

// A long wait woken just before an eviction pass keeps its blocked segment (it ends after
// the cutoff) while its waker's older segments go: queries into it must not mix the
// breakdown stored at the wake-up with a recomputation over evicted history.
TEST_F(EngineEvictionTest, LongWaitWokenJustBeforeEviction) {
  Engine engine(EngineOptions{.retention_ns = 1000});
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {Switch(0, 1, 0, 30, kRunnable), Switch(0, 0, 0, 10, kRunnable),
                  Switch(1, 1, 30, 0, kSleeping)};
  constexpr int kTail = 50;  // rounds after the wake-up; the second pass comes in them
  const std::vector<Event> head = PingPong(2, 0, kRounds - kTail);
  batch.events.insert(batch.events.end(), head.begin(), head.end());
  const int64_t t = batch.events.back().ts;
  batch.events.push_back(Waking(t + 1, 0, 30));
  batch.events.push_back(Switch(t + 2, 1, 0, 30, kRunnable));
  batch.events.push_back(Switch(t + 3, 1, 30, 0, kSleeping));
  const std::vector<Event> tail = PingPong(t, kRounds - kTail, kTail);
  batch.events.insert(batch.events.end(), tail.begin(), tail.end());
  engine.Push(batch);
  const int64_t end = engine.host_now(0);
  const int64_t horizon = engine.resolver().horizon();
  ASSERT_GT(horizon, 1);
  ASSERT_LT(horizon, t + 1);
  const Utid x = engine.tasks().Find(0, 30);
  ASSERT_EQ(engine.history(x).at(0).kind, SegmentKind::kBlocked);
  ASSERT_EQ(engine.history(x).at(0).start, 1);
  const Utid waker = engine.history(x).link(0).task;
  ASSERT_NE(waker, kNoTask);
  ASSERT_GT(engine.history(waker).start(), 1);  // the waker's early history is gone
  // At the wake-up only what the first pass evicted was unknown; the second pass evicted
  // more of the waker's history, which the stored breakdown still counts as known.
  const StateVec wait = engine.history(x).cum(1) - engine.history(x).cum(0);
  EXPECT_EQ(wait.total(), t);
  EXPECT_GT(wait[Leaf::kUnknown], 0);
  EXPECT_LT(wait[Leaf::kUnknown], horizon - 1);
  CheckAround(engine, x, {0, 1, 500, horizon - 1, horizon, horizon + 1, t - 100},
              {horizon + 2, t, t + 1, t + 2, end});
}

// A host whose traces have no scheduler events (user-space spans only): nothing says when its
// threads ran, so a span's thread is `unknown` there, never `running` (a 1 ms sleep inside the
// span read as running 100 % before).
TEST_F(EngineTest, AThreadSeenOnlyInUserSpaceEventsIsUnknownNotRunning) {
  Push({SpanEvent(EventKind::kSpanBegin, 100, 0, 7, 1),
        SpanEvent(EventKind::kSpanEnd, 1100, 0, 7, 1)},
       /*dialect=*/0);
  const StateVec d = B(7, 100, 1100);
  EXPECT_EQ(d[Leaf::kRunning], 0);
  EXPECT_EQ(d[Leaf::kUnknown], 1000);
  CheckInterval(U(7), 100, 1100);
}

// The same events on a host whose kernel is traced: the thread ran when it emitted them.
TEST_F(EngineTest, AThreadSeenInUserSpaceEventsOfATracedKernelIsRunning) {
  Push({SpanEvent(EventKind::kSpanBegin, 100, 0, 7, 1),
        SpanEvent(EventKind::kSpanEnd, 1100, 0, 7, 1)});
  EXPECT_EQ(B(7, 100, 1100)[Leaf::kRunning], 1000);
}

}  // namespace
}  // namespace waitpath
