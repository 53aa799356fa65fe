#include "incremental/engine.h"

#include <algorithm>

#include "live/dialect.h"
#include "live/event_views.h"
#include "live/string_table.h"

namespace waitpath {
namespace {
constexpr uint64_t kEvictEvery = 16384;  // events between eviction passes on a host

// A packet event's TCP/IP key, if its dialect carried one.
const PacketKey* PacketKeyOf(const Event& e, const Batch& batch) {
  const int32_t key = AsPacket(e).key();
  return key >= 0 ? &batch.packets[static_cast<size_t>(key)] : nullptr;
}
}  // namespace

Engine::Engine(EngineOptions options)
    : options_(options), resolver_(tasks_, histories_.all(), options.max_depth) {}

Engine::HostState& Engine::Host(uint16_t host) {
  if (host >= hosts_.size()) hosts_.resize(host + 1u);
  return hosts_[host];
}

int64_t Engine::host_now(uint16_t host) const {
  return host < hosts_.size() ? hosts_[host].now : std::numeric_limits<int64_t>::min();
}

int64_t Engine::TaskEnd(Utid u) const {
  const Task& t = tasks_[u];
  if (t.end_ts != kNever) return t.end_ts;
  return std::min(t.exit_ts, std::max(host_now(t.host), t.first_ts));
}

EngineCounters Engine::counters() const {
  EngineCounters c = counters_;
  c.evicted_segments = histories_.evicted_segments();
  c.history_segments = histories_.segments();
  c.history_origins = histories_.origins();
  return c;
}

void Engine::Begin(Utid u, int64_t ts, SegmentKind kind) {
  if (histories_.Begin(u, ts, kind)) tasks_[u].first_ts = ts;
}

// The live task `tid`, its history begun in `initial` state if this is its first mention.
Utid Engine::Touch(uint16_t host, int32_t tid, int64_t ts, SegmentKind initial) {
  const Utid u = tasks_.GetOrCreate(host, tid, ts);
  Begin(u, ts, initial);
  return u;
}

void Engine::ResolveWait(Utid u, int64_t ts, const WaitLink& link, SegmentKind next) {
  const int64_t start = histories_[u].back().start;
  const StateVec cum_start = histories_[u].back().cum;
  StateVec origin;
  const StateVec delta = resolver_.ResolveWait(link, start, ts, &origin);
  histories_.Resolve(u, ts, link, delta, origin, next);
  ++counters_.waits;
  if (listener_ && ts > start) listener_->OnWait(ResolvedWait{u, start, ts, link, delta, cum_start});
}

void Engine::FramePushed(CpuContext& cpu, int64_t ts) {
  if (cpu.frames.size() != 1 || cpu.current == kNoTask) return;
  if (histories_[cpu.current].back().kind == SegmentKind::kRunning) {
    histories_.Switch(cpu.current, ts, SegmentKind::kInterrupted);
  }
}

void Engine::FramePopped(CpuContext& cpu, int64_t ts) {
  if (!cpu.frames.empty() || cpu.current == kNoTask) return;
  if (histories_[cpu.current].back().kind == SegmentKind::kInterrupted) {
    histories_.Switch(cpu.current, ts, SegmentKind::kRunning);
  }
}

void Engine::Push(const Batch& batch) {
  for (const Event& e : batch.events) Process(e, batch);
}

void Engine::Process(const Event& e, const Batch& batch) {
  const uint16_t host = batch.host;
  HostState& hs = Host(host);
  // Kernels with sched_waking also emit sched_wakeup on the target CPU: only the former
  // runs in the waker's context.
  hs.has_waking = batch.counters.dialect & kDialectHasWaking;
  hs.now = e.ts;
  // History before the horizon may be evicted at the next pass on any host: a wait that
  // resolves now reads none of it (docs/architecture.md, "Eviction").
  if (e.ts > std::numeric_limits<int64_t>::min() + options_.retention_ns) {
    resolver_.SetHorizon(e.ts - options_.retention_ns);
  }
  ++counters_.events;
  CpuContext& cpu = hs.cpus.cpu(e.cpu);
  // perf names the current task in every event (LTTng with the tid context), and every
  // sched_switch names the task leaving: that fills in CPUs not yet seen switching, and
  // overrides a current task whose switch was lost.
  const int32_t named = e.kind == EventKind::kSchedSwitch ? AsSchedSwitch(e).prev_tid() : e.cur_tid;
  if (named >= 0) {
    if (!cpu.known && e.kind != EventKind::kSchedSwitch) {
      cpu.known = true;
      cpu.current = named == 0 ? kNoTask : Touch(host, named, e.ts, SegmentKind::kRunning);
      NoteIrqThread(cpu);
    } else if (cpu.known && (cpu.current == kNoTask ? 0 : tasks_[cpu.current].tid) != named) {
      InferSwitch(host, cpu, named, e.ts);
    }
  }
  cpu.last_ts = e.ts;
  if (cpu.current != kNoTask && e.cur_pid > 0 && tasks_[cpu.current].pid < 0 &&
      tasks_[cpu.current].tid == e.cur_tid) {
    tasks_[cpu.current].pid = e.cur_pid;
  }
  switch (e.kind) {
    case EventKind::kSchedSwitch: OnSwitch(host, e); break;
    case EventKind::kSchedWaking:
    case EventKind::kSchedTtwu: OnWaking(host, e); break;
    case EventKind::kSchedWakeup:
      if (!hs.has_waking) OnWaking(host, e);
      break;
    case EventKind::kSchedWakeupNew: {
      const Utid u = Touch(host, AsWake(e).tid(), e.ts, SegmentKind::kPreempted);
      SetComm(u, AsWake(e).comm());
      break;
    }
    case EventKind::kProcessFork: OnFork(host, e); break;
    case EventKind::kProcessExit: {
      const Utid u = tasks_.Find(host, AsProcessEnd(e).tid());
      if (u != kNoTask && tasks_[u].exit_ts == kNever) tasks_[u].exit_ts = e.ts;
      break;
    }
    case EventKind::kProcessFree: {
      const Utid u = tasks_.Find(host, AsProcessEnd(e).tid());
      if (u != kNoTask && tasks_[u].exit_ts != kNever) tasks_.Retire(u);
      break;
    }
    case EventKind::kIrqEntry:
      cpu.frames.push_back(IrqFrame{IrqFrame::Type::kHardIrq, AsIrqEntry(e).irq(),
                                    static_cast<uint32_t>(std::max(AsIrqEntry(e).name(), 0))});
      FramePushed(cpu, e.ts);
      break;
    case EventKind::kSoftirqEntry:
      cpu.frames.push_back(IrqFrame{IrqFrame::Type::kSoftIrq, AsSoftirq(e).vec(), 0});
      FramePushed(cpu, e.ts);
      break;
    case EventKind::kHrtimerEntry:
      cpu.frames.push_back(IrqFrame{IrqFrame::Type::kTimer, 0, 0});
      FramePushed(cpu, e.ts);
      break;
    case EventKind::kIpiEntry:
      cpu.frames.push_back(IrqFrame{IrqFrame::Type::kIpi, AsIpi(e).type(), 0});
      FramePushed(cpu, e.ts);
      break;
    case EventKind::kIrqExit:
    case EventKind::kSoftirqExit:
    case EventKind::kHrtimerExit:
    case EventKind::kIpiExit:
      // An exit without its entry (trace start, loss) closes nothing.
      if (!cpu.frames.empty()) {
        const bool timer_done = cpu.frames.back().type == IrqFrame::Type::kTimer;
        cpu.frames.pop_back();
        // The enclosing context (e.g. the local timer interrupt) ran that timer.
        if (timer_done && !cpu.frames.empty()) cpu.frames.back().timer = true;
        FramePopped(cpu, e.ts);
      }
      break;
    case EventKind::kPacketOut: OnPacketOut(host, e, batch); break;
    case EventKind::kPacketIn: OnPacketIn(host, e, batch); break;
    case EventKind::kBlockComplete:
      if (!cpu.frames.empty()) {
        cpu.frames.back().disk = true;
      } else if (cpu.in_irq_thread) {
        cpu.irq_thread.disk = true;
      }
      break;
    case EventKind::kStatedumpProcess: {
      // LTTng's state dump lists the tasks that exist; one in state WAIT is asleep, so
      // its history starts blocked (its waker will say on what).
      const auto dump = AsStatedumpProcess(e);
      const Utid u = tasks_.GetOrCreate(host, dump.tid(), e.ts);
      histories_.Add(u);
      SetComm(u, dump.name());
      if (dump.pid() > 0) tasks_[u].pid = dump.pid();
      if (dump.status() == kStatedumpWait) Begin(u, e.ts, SegmentKind::kBlocked);
      break;
    }
    case EventKind::kLost: OnLost(host, e); break;
    default: break;
  }
  if (hs.last_evict == std::numeric_limits<int64_t>::min()) hs.last_evict = e.ts;
  // A pass every kEvictEvery events, or at least every quarter of the retention at a low
  // event rate, so that a quiet host's history is bounded by time too.
  if (++hs.events_since_evict >= kEvictEvery || e.ts - hs.last_evict >= options_.retention_ns / 4) {
    hs.events_since_evict = 0;
    hs.last_evict = e.ts;
    Evict(host);
  }
}

void Engine::OnSwitch(uint16_t host, const Event& e) {
  HostState& hs = hosts_[host];
  CpuContext& cpu = hs.cpus.cpu(e.cpu);
  // A switch runs in task context: contexts whose exit we did not see are over.
  cpu.frames.clear();
  const auto sw = AsSchedSwitch(e);
  if (sw.prev_tid() > 0) {
    const Utid p = Touch(host, sw.prev_tid(), e.ts, SegmentKind::kRunning);
    SetComm(p, sw.prev_comm());
    if (histories_[p].blocked()) {
      // We thought it blocked, yet it ran: its wake-up and switch-in were lost.
      ++counters_.missed_wakeups;
      ResolveWait(p, e.ts, WaitLink{WaitLink::Type::kUnknown}, SegmentKind::kRunning);
    }
    // prev_state: runnable (preempted) iff its low byte is 0 (kernel >= 4.14 marks
    // preemption with a high bit; 0x80 is TASK_IDLE, a sleep).
    const bool preempted = (sw.prev_state() & 0xff) == 0;
    histories_.Switch(p, e.ts, preempted ? SegmentKind::kPreempted : SegmentKind::kBlocked);
    // After sched_process_exit a task may still sleep (closing files, freeing memory) and
    // run again; its final switch-out is the one in a dead state, neither runnable nor a
    // sleep (EXIT_ZOMBIE/EXIT_DEAD since 4.14, TASK_DEAD before).
    if (tasks_[p].exit_ts != kNever && tasks_[p].end_ts == kNever && !preempted &&
        (sw.prev_state() & 0x3) == 0) {
      tasks_[p].end_ts = e.ts;
      ended_.push_back(p);
    }
  }
  if (sw.next_tid() > 0) {
    const Utid n = Touch(host, sw.next_tid(), e.ts, SegmentKind::kRunning);
    SetComm(n, sw.next_comm());
    tasks_[n].ran = true;
    if (histories_[n].blocked()) {
      // Switched in without a wake-up we saw: after lost events the cause is unknown,
      // otherwise the waker was not traced (e.g. sched_wakeup not enabled): blocked.
      ++counters_.missed_wakeups;
      const bool lost = hs.last_loss >= histories_[n].back().start;
      ResolveWait(n, e.ts, WaitLink{lost ? WaitLink::Type::kUnknown : WaitLink::Type::kNone},
                  SegmentKind::kRunning);
    } else {
      histories_.Switch(n, e.ts, SegmentKind::kRunning);
    }
    cpu.current = n;
  } else {
    cpu.current = kNoTask;
  }
  cpu.known = true;
  NoteIrqThread(cpu);
}

void Engine::NoteIrqThread(CpuContext& cpu) {
  cpu.in_irq_thread = false;
  if (cpu.current == kNoTask) return;
  std::string_view name;
  if (!IrqThreadFrame(StringTable::Global().Get(tasks_[cpu.current].comm), &cpu.irq_thread, &name)) return;
  cpu.in_irq_thread = true;
  cpu.irq_thread.name = name.empty() ? 0 : StringTable::Global().Intern(name);
}

// An event names its CPU's current task (`tid`) and it is not the one tracked: a
// sched_switch was lost (perf drops the events of idle CPUs on some machines, LTTng
// discards under load). The event is trusted: `tid` is current from now on (a wake-up from
// its context has it as waker), and since the CPU's previous event neither it nor the task
// we thought current is known to have run: that time is unknown for both.
void Engine::InferSwitch(uint16_t host, CpuContext& cpu, int32_t tid, int64_t ts) {
  ++counters_.inferred_switches;
  const int64_t since = std::min(cpu.last_ts, ts);
  if (cpu.current != kNoTask) {
    const TaskHistory& h = histories_[cpu.current];
    if (!h.blocked()) {
      histories_.Switch(cpu.current, std::max(since, h.back().start), SegmentKind::kUnknown);
    }
  }
  cpu.current = kNoTask;
  cpu.in_irq_thread = false;
  if (tid == 0) return;
  const SegmentKind own = cpu.frames.empty() ? SegmentKind::kRunning : SegmentKind::kInterrupted;
  const Utid n = Touch(host, tid, since, SegmentKind::kUnknown);
  tasks_[n].ran = true;
  cpu.current = n;
  const TaskHistory& h = histories_[n];
  if (h.blocked()) {
    // Its wake-up was lost with the switch.
    ++counters_.missed_wakeups;
    ResolveWait(n, std::max(since, h.back().start), WaitLink{WaitLink::Type::kUnknown}, SegmentKind::kUnknown);
  } else {
    histories_.Switch(n, std::max(since, h.back().start), SegmentKind::kUnknown);
  }
  histories_.Switch(n, ts, own);
  NoteIrqThread(cpu);
}

WaitLink Engine::WakerLink(uint16_t host, const Event& e) {
  CpuContext& cpu = hosts_[host].cpus.cpu(e.cpu);
  if (!cpu.frames.empty()) {
    const IrqFrame& f = cpu.frames.back();
    const Leaf leaf = ClassifyInterrupt(f, f.name ? StringTable::Global().Get(f.name) : std::string_view());
    if (leaf == Leaf::kNetwork && f.sender_known) return WaitLink{WaitLink::Type::kPacket, leaf, f.sender, f.send_ts};
    return WaitLink{WaitLink::Type::kLeaf, leaf};
  }
  // perf marks interrupt context in every event even when entry events are missing.
  if ((e.ctx & kCtxKnown) && (e.ctx & (kCtxHardirq | kCtxSoftirq | kCtxNmi))) {
    return WaitLink{WaitLink::Type::kLeaf, Leaf::kIrq};
  }
  if (cpu.in_irq_thread && cpu.current != kNoTask) {
    // An interrupt thread's wake-up is the interrupt's (the packet it received...), not
    // the thread's own work.
    const IrqFrame& f = cpu.irq_thread;
    const Leaf leaf = ClassifyInterrupt(f, f.name ? StringTable::Global().Get(f.name) : std::string_view());
    if (leaf == Leaf::kNetwork && f.sender_known) return WaitLink{WaitLink::Type::kPacket, leaf, f.sender, f.send_ts};
    return WaitLink{WaitLink::Type::kLeaf, leaf};
  }
  if (!cpu.known) {
    ++counters_.unknown_wakers;
    return WaitLink{WaitLink::Type::kUnknown};
  }
  // The idle task only wakes others from interrupts whose events were not traced.
  if (cpu.current == kNoTask) return WaitLink{WaitLink::Type::kLeaf, Leaf::kIrq};
  return WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, cpu.current};
}

void Engine::OnWaking(uint16_t host, const Event& e) {
  const auto wake = AsWake(e);
  if (wake.tid() <= 0) return;
  bool created = false;
  const Utid u = tasks_.GetOrCreate(host, wake.tid(), e.ts, &created);
  SetComm(u, wake.comm());
  histories_.Add(u);
  if (histories_[u].empty()) {
    Begin(u, e.ts, SegmentKind::kPreempted);
    return;
  }
  if (!histories_[u].blocked()) return;
  ResolveWait(u, e.ts, WakerLink(host, e), SegmentKind::kPreempted);
}

void Engine::OnFork(uint16_t host, const Event& e) {
  const auto fork = AsFork(e);
  const Utid parent = Touch(host, fork.parent_tid(), e.ts, SegmentKind::kRunning);
  const Utid child = tasks_.CreateFresh(host, fork.child_tid(), e.ts);
  Task& c = tasks_[child];
  c.parent = parent;
  c.birth = e.ts;
  c.comm = fork.child_comm() >= 0 ? static_cast<uint32_t>(fork.child_comm()) : tasks_[parent].comm;
  c.pid = fork.child_pid() > 0 ? fork.child_pid() : -1;
  c.parent_origin = resolver_.Cum(parent, e.ts);
  Begin(child, e.ts, SegmentKind::kPreempted);
}

void Engine::OnLost(uint16_t host, const Event& e) {
  HostState& hs = hosts_[host];
  ++counters_.loss_markers;
  CpuContext& cpu = hs.cpus.cpu(e.cpu);
  // Whatever ran on this CPU since the loss began is unknown until its next sched_switch.
  if (cpu.current != kNoTask) {
    const TaskHistory& h = histories_[cpu.current];
    if (!h.blocked()) {
      histories_.Switch(cpu.current, std::max(AsLost(e).begin(), h.back().start),
                        SegmentKind::kUnknown);
    }
  }
  cpu.current = kNoTask;
  cpu.known = false;
  cpu.in_irq_thread = false;
  cpu.frames.clear();
  hs.last_loss = e.ts;
}

void Engine::OnPacketOut(uint16_t host, const Event& e, const Batch& batch) {
  CpuContext& cpu = hosts_[host].cpus.cpu(e.cpu);
  // perf's softirq bit means "serving a softirq" (an ACK sent by the stack), not merely
  // bottom halves disabled (0x80 on recent kernels), so it also rules out a task sender.
  const bool task_context =
      cpu.frames.empty() && !((e.ctx & kCtxKnown) && (e.ctx & (kCtxHardirq | kCtxSoftirq | kCtxNmi)));
  const PacketKey* key = PacketKeyOf(e, batch);
  const Utid sender = task_context && cpu.known ? cpu.current : kNoTask;
  packets_.OnSend(host, e.ts, static_cast<uint64_t>(AsPacket(e).skbaddr()), key, sender,
                  sender != kNoTask ? tasks_[sender].generation : 0);
}

void Engine::OnPacketIn(uint16_t host, const Event& e, const Batch& batch) {
  CpuContext& cpu = hosts_[host].cpus.cpu(e.cpu);
  const auto send =
      packets_.OnReceive(host, static_cast<uint64_t>(AsPacket(e).skbaddr()), PacketKeyOf(e, batch));
  if (cpu.frames.empty() && !cpu.in_irq_thread) return;
  IrqFrame& f = cpu.frames.empty() ? cpu.irq_thread : cpu.frames.back();
  f.packet = true;
  // A sender on another host is followed only when all timestamps are in one clock.
  // A sender released since (its Utid reused) is as unknown as one in interrupt context.
  f.sender_known = send && send->sender != kNoTask && (send->host == host || synchronized_) &&
                   send->generation == static_cast<uint16_t>(tasks_[send->sender].generation);
  if (f.sender_known) {
    f.sender = send->sender;
    f.send_ts = send->ts;
  }
}

void Engine::Evict(uint16_t host) {
  const int64_t now = hosts_[host].now;
  packets_.ExpireBefore(now - options_.packet_expiry_ns);
  // History before the horizon is never read again, whichever host it is on: the horizon is
  // one for all hosts (ActivePathResolver::SetHorizon), and so is the cutoff.
  int64_t cutoff = resolver_.horizon();
  // Over the byte cap, keep less time than the retention window: full sweeps.
  for (int64_t keep = options_.retention_ns; history_bytes() > options_.max_history_bytes && keep > 1; keep /= 2) {
    cutoff = std::max(cutoff, now - keep / 2);
    resolver_.SetHorizon(cutoff);
    for (Utid u = 0; u < histories_.size(); ++u) EvictTask(u, cutoff);
    swept_horizon_ = std::max(swept_horizon_, cutoff);
    ReclaimEndedTasks();  // ended tasks' histories are most of it when threads are short-lived
  }
  // A slice of tasks per pass keeps each pass cheap; all are visited within a few passes.
  const size_t slice = std::max<size_t>(1024, histories_.size() / 8);
  for (size_t i = 0; i < slice && histories_.size() != 0; ++i) {
    if (++evict_cursor_ >= histories_.size()) {
      evict_cursor_ = 0;
      swept_horizon_ = std::max(swept_horizon_, sweep_start_horizon_);
      sweep_start_horizon_ = cutoff;
    }
    EvictTask(static_cast<Utid>(evict_cursor_), cutoff);
  }
  ReclaimEndedTasks();
}

void Engine::EvictTask(Utid u, int64_t cutoff) {
  if (tasks_[u].in_use) histories_.EvictBefore(u, cutoff);
}

// An ended task's history is needed until its end falls behind the horizon (reads of it
// come from waits it ended, at times up to its end); its Utid until the links to it are
// evicted too. Both steps tell the listener first, so that a task's life can be accounted
// to its end and references to it resolved before they would dangle.
void Engine::ReclaimEndedTasks() {
  const int64_t horizon = resolver_.horizon();
  while (!ended_.empty() && tasks_[ended_.front()].end_ts < horizon) {
    const Utid u = ended_.front();
    ended_.pop_front();
    if (listener_) listener_->OnTaskEnded(u);
    histories_.Drop(u);
    ++counters_.tasks_ended;
    dropped_.push_back(u);
  }
  while (!dropped_.empty() && tasks_[dropped_.front()].end_ts < swept_horizon_) {
    const Utid u = dropped_.front();
    dropped_.pop_front();
    if (listener_) listener_->OnTaskReleased(u);
    tasks_.Release(u);
    ++counters_.tasks_released;
  }
}

}  // namespace waitpath
