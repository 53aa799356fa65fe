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

// The CPU enters an interrupt context: a task it interrupts stops running its own code.
void Engine::EnterInterrupt(HostState& hs, const Event& e, const IrqFrame& frame) {
  const Utid u = hs.cpus.EnterInterrupt(e.cpu, frame);
  if (u != kNoTask && histories_[u].back().kind == SegmentKind::kRunning) {
    histories_.Switch(u, e.ts, SegmentKind::kInterrupted);
  }
}

void Engine::ExitInterrupt(HostState& hs, const Event& e) {
  const Utid u = hs.cpus.ExitInterrupt(e.cpu);
  if (u != kNoTask && histories_[u].back().kind == SegmentKind::kInterrupted) {
    histories_.Switch(u, e.ts, SegmentKind::kRunning);
  }
}

std::string_view Engine::Comm(Utid u) const {
  return u == kNoTask ? std::string_view() : StringTable::Global().Get(tasks_[u].comm);
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
  const CpuContext& cpu = hs.cpus.cpu(e.cpu);
  // perf names the current task in every event (LTTng with the tid context), and every
  // sched_switch names the task leaving: that fills in CPUs not yet seen switching, and
  // overrides a current task whose switch was lost.
  const int32_t named = e.kind == EventKind::kSchedSwitch ? AsSchedSwitch(e).prev_tid() : e.cur_tid;
  if (named >= 0) {
    if (!cpu.known && e.kind != EventKind::kSchedSwitch) {
      const Utid u = named == 0 ? kNoTask : Touch(host, named, e.ts, SegmentKind::kRunning);
      hs.cpus.SetCurrent(e.cpu, u, Comm(u));
    } else if (cpu.known && (cpu.current == kNoTask ? 0 : tasks_[cpu.current].tid) != named) {
      InferSwitch(host, e.cpu, named, e.ts);
    }
  }
  hs.cpus.Seen(e.cpu, e.ts);
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
      EnterInterrupt(hs, e,
                     IrqFrame{IrqFrame::Type::kHardIrq, AsIrqEntry(e).irq(),
                              static_cast<uint32_t>(std::max(AsIrqEntry(e).name(), 0))});
      break;
    case EventKind::kSoftirqEntry:
      EnterInterrupt(hs, e, IrqFrame{IrqFrame::Type::kSoftIrq, AsSoftirq(e).vec(), 0});
      break;
    case EventKind::kHrtimerEntry:
      EnterInterrupt(hs, e, IrqFrame{IrqFrame::Type::kTimer, 0, 0});
      break;
    case EventKind::kIpiEntry:
      EnterInterrupt(hs, e, IrqFrame{IrqFrame::Type::kIpi, AsIpi(e).type(), 0});
      break;
    case EventKind::kIrqExit:
    case EventKind::kSoftirqExit:
    case EventKind::kHrtimerExit:
    case EventKind::kIpiExit:
      ExitInterrupt(hs, e);
      break;
    case EventKind::kPacketOut: OnPacketOut(host, e, batch); break;
    case EventKind::kPacketIn: OnPacketIn(host, e, batch); break;
    case EventKind::kBlockComplete:
      hs.cpus.DiskCompleted(e.cpu);
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
  hs.cpus.LeaveInterrupts(e.cpu);
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
    hs.cpus.SetCurrent(e.cpu, n, Comm(n));
  } else {
    hs.cpus.SetCurrent(e.cpu, kNoTask, {});
  }
}

// An event names its CPU's current task (`tid`) and it is not the one tracked: a
// sched_switch was lost (perf drops the events of idle CPUs on some machines, LTTng
// discards under load). The event is trusted: `tid` is current from now on (a wake-up from
// its context has it as waker), and since the CPU's previous event neither it nor the task
// we thought current is known to have run: that time is unknown for both.
void Engine::InferSwitch(uint16_t host, uint16_t cpu_id, int32_t tid, int64_t ts) {
  ++counters_.inferred_switches;
  CpuContextTracker& cpus = hosts_[host].cpus;
  const Utid was = cpus.cpu(cpu_id).current;
  const int64_t since = std::min(cpus.cpu(cpu_id).last_ts, ts);
  if (was != kNoTask) {
    const TaskHistory& h = histories_[was];
    if (!h.blocked()) {
      histories_.Switch(was, std::max(since, h.back().start), SegmentKind::kUnknown);
    }
  }
  if (tid == 0) {
    cpus.SetCurrent(cpu_id, kNoTask, {});
    return;
  }
  const SegmentKind own =
      cpus.InInterrupt(cpu_id) ? SegmentKind::kInterrupted : SegmentKind::kRunning;
  const Utid n = Touch(host, tid, since, SegmentKind::kUnknown);
  tasks_[n].ran = true;
  const TaskHistory& h = histories_[n];
  if (h.blocked()) {
    // Its wake-up was lost with the switch.
    ++counters_.missed_wakeups;
    ResolveWait(n, std::max(since, h.back().start), WaitLink{WaitLink::Type::kUnknown}, SegmentKind::kUnknown);
  } else {
    histories_.Switch(n, std::max(since, h.back().start), SegmentKind::kUnknown);
  }
  histories_.Switch(n, ts, own);
  cpus.SetCurrent(cpu_id, n, Comm(n));
}

WaitLink Engine::WakerLink(uint16_t host, const Event& e) {
  const WaitLink link = hosts_[host].cpus.Waker(e.cpu, e.ctx);
  if (link.type == WaitLink::Type::kUnknown) ++counters_.unknown_wakers;
  return link;
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
  // Whatever ran on this CPU since the loss began is unknown until its next sched_switch.
  if (const Utid u = hs.cpus.cpu(e.cpu).current; u != kNoTask) {
    const TaskHistory& h = histories_[u];
    if (!h.blocked()) {
      histories_.Switch(u, std::max(AsLost(e).begin(), h.back().start), SegmentKind::kUnknown);
    }
  }
  hs.cpus.Lost(e.cpu);
  hs.last_loss = e.ts;
}

void Engine::OnPacketOut(uint16_t host, const Event& e, const Batch& batch) {
  const PacketKey* key = PacketKeyOf(e, batch);
  const Utid sender = hosts_[host].cpus.PacketSender(e.cpu, e.ctx);
  packets_.OnSend(host, e.ts, static_cast<uint64_t>(AsPacket(e).skbaddr()), key, sender,
                  sender != kNoTask ? tasks_[sender].generation : 0);
}

void Engine::OnPacketIn(uint16_t host, const Event& e, const Batch& batch) {
  const auto send =
      packets_.OnReceive(host, static_cast<uint64_t>(AsPacket(e).skbaddr()), PacketKeyOf(e, batch));
  // A sender on another host is followed only when all timestamps are in one clock.
  // A sender released since (its Utid reused) is as unknown as one in interrupt context.
  const bool known = send && send->sender != kNoTask && (send->host == host || synchronized_) &&
                     send->generation == static_cast<uint16_t>(tasks_[send->sender].generation);
  hosts_[host].cpus.PacketReceived(e.cpu, known ? send->sender : kNoTask, known ? send->ts : 0);
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
