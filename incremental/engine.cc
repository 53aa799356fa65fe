#include "incremental/engine.h"

#include <algorithm>

#include "model/dialect.h"
#include "model/event_views.h"
#include "model/string_table.h"

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
    : options_(options),
      resolver_(tasks_, histories_.all(), options.max_depth),
      spans_(tasks_, resolver_) {}

Engine::HostState& Engine::Host(uint16_t host) {
  if (host >= hosts_.size()) {
    const size_t old = hosts_.size();
    hosts_.resize(host + 1u);
    for (size_t h = old; h < hosts_.size(); ++h) hosts_[h].id = static_cast<uint16_t>(h);
  }
  return hosts_[host];
}

// The host of a batch, with what the engine reads of its dialect decoded when its flags
// change (they only grow, as the decoder meets the host's event classes: rarely).
Engine::HostState& Engine::HostOf(const Batch& batch) {
  HostState& hs = Host(batch.host);
  if (batch.counters.dialect != hs.dialect) [[unlikely]] {
    hs.dialect = batch.counters.dialect;
    hs.has_waking = hs.dialect & kDialectHasWaking;
  }
  return hs;
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

bool Engine::Begin(Utid u, int64_t ts, SegmentKind kind) {
  if (!histories_.Begin(u, ts, kind)) return false;
  tasks_[u].first_ts = ts;
  return true;
}

// The live task `tid`, its history begun in `initial` state if this is its first mention.
Utid Engine::Touch(uint16_t host, int32_t tid, int64_t ts, SegmentKind initial) {
  const Utid u = tasks_.GetOrCreate(host, tid, ts);
  Begin(u, ts, initial);
  return u;
}

std::string_view Engine::Comm(Utid u) const {
  return u == kNoTask ? std::string_view() : StringTable::Global().Get(tasks_[u].comm);
}

Utid Engine::RemoteTask(uint16_t host, int32_t tid, int32_t pid, uint32_t comm, int64_t ts) {
  const Utid u = tasks_.GetOrCreate(host, tid, ts);
  histories_.Add(u);
  Task& t = tasks_[u];
  t.remote = true;
  t.comm = comm;
  if (pid > 0) t.pid = pid;
  return u;
}

void Engine::ResolveWait(Utid u, int64_t ts, const WaitLink& given, SegmentKind next) {
  const int64_t start = histories_[u].back().start;
  const StateVec cum_start = histories_[u].back_cum();
  StateVec origin;
  WaitLink link = given;
  StateVec delta;
  if (link.type == WaitLink::Type::kPacket && link.task != kNoTask && tasks_[link.task].remote) {
    // Woken by another shard's host: the sender's part comes from its shard, summarized; the
    // origin kept is that part, relative to the send as for a local packet wait.
    const int64_t send = std::clamp(link.ts, start, ts);
    const std::optional<StateVec> part =
        peers_ ? peers_->RemoteBreakdown(RemoteSend{link.task, link.ts}, start) : std::nullopt;
    if (part) {
      ++counters_.remote_waits;
      origin = *part;
      delta = *part + StateVec::Of(Leaf::kNetwork, ts - send);
    } else {
      ++counters_.remote_unresolved;
      link.task = kNoTask;
      delta = resolver_.ResolveWait(link, start, ts, &origin);
    }
  } else {
    delta = resolver_.ResolveWait(link, start, ts, &origin);
  }
  histories_.Resolve(u, ts, link, delta, origin, next);
  ++counters_.waits;
  if (listener_ && ts > start)
    listener_->OnWait(ResolvedWait{u, start, ts, link, delta, cum_start});
}

void Engine::Push(const Batch& batch) {
  HostState& hs = HostOf(batch);
  for (const Event& e : batch.events) Handle(hs, e, batch);
}

void Engine::Process(const Event& e, const Batch& batch) {
  Handle(HostOf(batch), e, batch);
}

void Engine::Handle(HostState& hs, const Event& e, const Batch& batch) {
  hs.now = e.ts;
  // History before the horizon may be evicted at the next pass on any host: a wait that
  // resolves now reads none of it (docs/architecture.md, "Eviction").
  if (e.ts > std::numeric_limits<int64_t>::min() + options_.retention_ns) {
    resolver_.SetHorizon(e.ts - options_.retention_ns);
  }
  ++counters_.events;
  FollowCurrentTask(hs, e);
  // One line a kind.
  // clang-format off
  switch (e.kind) {
    case EventKind::kSchedSwitch: OnSchedSwitch(hs, e); break;
    case EventKind::kSchedWaking:
    case EventKind::kSchedTtwu: OnWaking(hs, e); break;
    case EventKind::kSchedWakeup: OnWakeup(hs, e); break;
    case EventKind::kSchedWakeupNew: OnWakeupNew(hs, e); break;
    case EventKind::kProcessFork: OnFork(hs, e); break;
    case EventKind::kProcessExit: OnExit(hs, e); break;
    case EventKind::kProcessFree: OnFree(hs, e); break;
    case EventKind::kIrqEntry: OnIrqEntry(hs, e); break;
    case EventKind::kSoftirqEntry: OnSoftirqEntry(hs, e); break;
    case EventKind::kHrtimerEntry: OnHrtimerEntry(hs, e); break;
    case EventKind::kIpiEntry: OnIpiEntry(hs, e); break;
    case EventKind::kIrqExit: OnInterruptExit(hs, e, IrqFrame::Kind::kHardIrq); break;
    case EventKind::kSoftirqExit: OnInterruptExit(hs, e, IrqFrame::Kind::kSoftIrq); break;
    case EventKind::kHrtimerExit: OnInterruptExit(hs, e, IrqFrame::Kind::kTimer); break;
    case EventKind::kIpiExit: OnInterruptExit(hs, e, IrqFrame::Kind::kIpi); break;
    case EventKind::kPacketOut: OnPacketOut(hs, e, batch); break;
    case EventKind::kPacketIn: OnPacketIn(hs, e, batch); break;
    case EventKind::kBlockComplete: OnBlockComplete(hs, e); break;
    case EventKind::kStatedumpProcess: OnStatedumpProcess(hs, e); break;
    case EventKind::kLost: OnLost(hs, e); break;
    case EventKind::kCgroup: OnCgroup(hs, e); break;
    case EventKind::kSpanBegin:
    case EventKind::kSpanEnd:
    case EventKind::kSpanHandoff: OnSpan(hs, e, batch); break;
    case EventKind::kSoftirqRaise:
    case EventKind::kBlockIssue:
    case EventKind::kCount: break;
  }
  // clang-format on
  if (hs.last_evict == std::numeric_limits<int64_t>::min()) hs.last_evict = e.ts;
  // A pass every kEvictEvery events, or at least every quarter of the retention at a low
  // event rate, so that a quiet host's history is bounded by time too.
  if (++hs.events_since_evict >= kEvictEvery || e.ts - hs.last_evict >= options_.retention_ns / 4) {
    hs.events_since_evict = 0;
    hs.last_evict = e.ts;
    Evict(hs);
  }
}

// perf names the current task in every event (LTTng with the tid context), and every
// sched_switch names the task leaving: that fills in CPUs not yet seen switching, and
// overrides a current task whose switch was lost.
void Engine::FollowCurrentTask(HostState& hs, const Event& e) {
  const CpuContext& cpu = hs.cpus.cpu(e.cpu);
  const bool is_switch = e.kind == EventKind::kSchedSwitch;
  const int32_t named = is_switch ? AsSchedSwitch(e).prev_tid() : e.cur_tid;
  if (named >= 0) {
    if (!cpu.known && !is_switch) {
      const Utid u = named == 0 ? kNoTask : Touch(hs.id, named, e.ts, OnCpu(hs));
      hs.cpus.SetCurrent(e.cpu, u, Comm(u));
    } else if (cpu.known && (cpu.current == kNoTask ? 0 : tasks_[cpu.current].tid) != named) {
      InferSwitch(hs, e.cpu, named, e.ts);
    }
  }
  hs.cpus.Seen(e.cpu, e.ts);
  if (cpu.current != kNoTask && e.cur_pid > 0 && tasks_[cpu.current].pid < 0 &&
      tasks_[cpu.current].tid == e.cur_tid) {
    tasks_[cpu.current].pid = e.cur_pid;
  }
}

// An event names its CPU's current task (`tid`) and it is not the one tracked: a
// sched_switch was lost (perf drops the events of idle CPUs on some machines, LTTng
// discards under load). The event is trusted: `tid` is current from now on (a wake-up from
// its context has it as waker), and since the CPU's previous event neither it nor the task
// we thought current is known to have run: that time is unknown for both.
void Engine::InferSwitch(HostState& hs, uint16_t cpu, int32_t tid, int64_t ts) {
  ++counters_.inferred_switches;
  if (counters_.inferred_switches_by_host.size() <= hs.id)
    counters_.inferred_switches_by_host.resize(hs.id + 1u, 0);
  ++counters_.inferred_switches_by_host[hs.id];
  const Utid was = hs.cpus.cpu(cpu).current;
  const int64_t since = std::min(hs.cpus.cpu(cpu).last_ts, ts);
  if (was != kNoTask) {
    const TaskHistory& h = histories_[was];
    if (!h.blocked()) {
      histories_.Switch(was, std::max(since, h.back().start), SegmentKind::kUnknown);
    }
  }
  if (tid == 0) {
    hs.cpus.SetCurrent(cpu, kNoTask, {});
    return;
  }
  const SegmentKind own = hs.cpus.InInterrupt(cpu) ? SegmentKind::kInterrupted : OnCpu(hs);
  const Utid n = Touch(hs.id, tid, since, SegmentKind::kUnknown);
  tasks_[n].ran = true;
  const TaskHistory& h = histories_[n];
  if (h.blocked()) {
    // Its wake-up was lost with the switch.
    ++counters_.missed_wakeups;
    ResolveWait(n, std::max(since, h.back().start), WaitLink{WaitLink::Type::kUnknown},
                SegmentKind::kUnknown);
  } else {
    histories_.Switch(n, std::max(since, h.back().start), SegmentKind::kUnknown);
  }
  histories_.Switch(n, ts, own);
  hs.cpus.SetCurrent(cpu, n, Comm(n));
}

void Engine::OnSchedSwitch(HostState& hs, const Event& e) {
  // A switch runs in task context: contexts whose exit we did not see are over.
  hs.cpus.LeaveInterrupts(e.cpu);
  const auto sw = AsSchedSwitch(e);
  if (sw.prev_tid() > 0) SwitchOut(hs, e);
  const Utid next = sw.next_tid() > 0 ? SwitchIn(hs, e) : kNoTask;
  hs.cpus.SetCurrent(e.cpu, next, Comm(next));
}

void Engine::SwitchOut(HostState& hs, const Event& e) {
  const auto sw = AsSchedSwitch(e);
  const Utid p = Touch(hs.id, sw.prev_tid(), e.ts, SegmentKind::kRunning);
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
  Task& t = tasks_[p];
  if (t.exit_ts != kNever && t.end_ts == kNever && !preempted && (sw.prev_state() & 0x3) == 0) {
    t.end_ts = e.ts;
    ended_.push_back(p);
  }
}

Utid Engine::SwitchIn(HostState& hs, const Event& e) {
  const auto sw = AsSchedSwitch(e);
  const Utid n = Touch(hs.id, sw.next_tid(), e.ts, SegmentKind::kRunning);
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
  return n;
}

// A wake-up in the waker's context: a blocked task's wait ends, caused by that context.
void Engine::OnWaking(HostState& hs, const Event& e) {
  const auto wake = AsWake(e);
  if (wake.tid() <= 0) return;
  const Utid u = tasks_.GetOrCreate(hs.id, wake.tid(), e.ts);
  SetComm(u, wake.comm());
  // First seen now: it was runnable from here, its earlier life unknown.
  if (Begin(u, e.ts, SegmentKind::kPreempted) || !histories_[u].blocked()) return;
  const WaitLink link = hs.cpus.Waker(e.cpu, e.ctx);
  if (link.type == WaitLink::Type::kUnknown) ++counters_.unknown_wakers;
  ResolveWait(u, e.ts, link, SegmentKind::kPreempted);
}

// Kernels with sched_waking also emit sched_wakeup on the target CPU: only the former runs
// in the waker's context.
void Engine::OnWakeup(HostState& hs, const Event& e) {
  if (!hs.has_waking) OnWaking(hs, e);
}

void Engine::OnWakeupNew(HostState& hs, const Event& e) {
  const Utid u = Touch(hs.id, AsWake(e).tid(), e.ts, SegmentKind::kPreempted);
  SetComm(u, AsWake(e).comm());
}

void Engine::OnFork(HostState& hs, const Event& e) {
  const auto fork = AsFork(e);
  const Utid parent = Touch(hs.id, fork.parent_tid(), e.ts, SegmentKind::kRunning);
  const Utid child = tasks_.CreateFresh(hs.id, fork.child_tid(), e.ts);
  Task& c = tasks_[child];
  c.parent = parent;
  c.birth = e.ts;
  c.comm = fork.child_comm() >= 0 ? static_cast<uint32_t>(fork.child_comm()) : tasks_[parent].comm;
  c.pid = fork.child_pid() > 0 ? fork.child_pid() : -1;
  c.cgroup = tasks_[parent].cgroup;  // a child starts in its parent's cgroup
  c.parent_origin = resolver_.Cum(parent, e.ts);
  Begin(child, e.ts, SegmentKind::kPreempted);
}

// The task still runs (and may sleep) until its final switch-out (SwitchOut).
void Engine::OnExit(HostState& hs, const Event& e) {
  const Utid u = tasks_.Find(hs.id, AsProcessEnd(e).tid());
  if (u != kNoTask && tasks_[u].exit_ts == kNever) tasks_[u].exit_ts = e.ts;
}

// Its tid may name a new task from now on.
void Engine::OnFree(HostState& hs, const Event& e) {
  const Utid u = tasks_.Find(hs.id, AsProcessEnd(e).tid());
  if (u != kNoTask && tasks_[u].exit_ts != kNever) tasks_.Retire(u);
}

void Engine::OnIrqEntry(HostState& hs, const Event& e) {
  const auto irq = AsIrqEntry(e);
  EnterInterrupt(hs, e,
                 IrqFrame{IrqFrame::Kind::kHardIrq, irq.irq(),
                          static_cast<uint32_t>(std::max(irq.name(), 0))});
}

void Engine::OnSoftirqEntry(HostState& hs, const Event& e) {
  EnterInterrupt(hs, e, IrqFrame{IrqFrame::Kind::kSoftIrq, AsSoftirq(e).vec(), 0});
}

void Engine::OnHrtimerEntry(HostState& hs, const Event& e) {
  EnterInterrupt(hs, e, IrqFrame{IrqFrame::Kind::kTimer, 0, 0});
}

void Engine::OnIpiEntry(HostState& hs, const Event& e) {
  EnterInterrupt(hs, e, IrqFrame{IrqFrame::Kind::kIpi, AsIpi(e).type(), 0});
}

// Whether the CPU's current task `u` has a history to continue. Damaged input (a flipped bit
// in a tid) can leave a CPU's current task ended and its history dropped: its interrupts then
// change nothing rather than read an empty history (found by tools/fuzz, seed 2 case 304).
bool Engine::Current(Utid u) const {
  return u != kNoTask && u < histories_.size() && !histories_[u].empty();
}

// The CPU enters an interrupt context: a task it interrupts stops running its own code.
void Engine::EnterInterrupt(HostState& hs, const Event& e, const IrqFrame& frame) {
  const Utid u = hs.cpus.EnterInterrupt(e.cpu, frame);
  if (Current(u) && histories_[u].back().kind == SegmentKind::kRunning) {
    histories_.Switch(u, e.ts, SegmentKind::kInterrupted);
  }
}

// irq, softirq, hrtimer and IPI exits, each closing a context of its `kind`: the task resumes
// when the last context is left.
void Engine::OnInterruptExit(HostState& hs, const Event& e, IrqFrame::Kind kind) {
  const Utid u = hs.cpus.ExitInterrupt(e.cpu, kind);
  if (Current(u) && histories_[u].back().kind == SegmentKind::kInterrupted) {
    histories_.Switch(u, e.ts, SegmentKind::kRunning);
  }
}

void Engine::OnBlockComplete(HostState& hs, const Event& e) {
  hs.cpus.DiskCompleted(e.cpu);
}

void Engine::OnPacketOut(HostState& hs, const Event& e, const Batch& batch) {
  const Utid sender = hs.cpus.PacketSender(e.cpu, e.ctx);
  const PacketKey* key = PacketKeyOf(e, batch);
  packets_.OnSend(hs.id, e.ts, static_cast<uint64_t>(AsPacket(e).skbaddr()), key, sender,
                  sender != kNoTask ? tasks_[sender].generation : 0);
  if (peers_ && key && key->has_addresses && key->has_tcp && peers_->Remote(*key)) {
    // The sender runs now: its cumulative vector here is exact (inside its own segment).
    peers_->OnSend(hs.id, e.ts, *key, sender,
                   sender != kNoTask ? resolver_.Cum(sender, e.ts) : StateVec{});
  }
}

void Engine::OnPacketIn(HostState& hs, const Event& e, const Batch& batch) {
  const PacketKey* key = PacketKeyOf(e, batch);
  const auto send =
      packets_.OnReceive(hs.id, e.ts, static_cast<uint64_t>(AsPacket(e).skbaddr()), key);
  if (!send && peers_ && key && key->has_addresses && key->has_tcp) {
    if (const auto remote = peers_->OnReceive(hs.id, e.ts, *key)) {
      if (remote->unknown) {
        hs.cpus.PacketReceivedUnknown(e.cpu);
        return;
      }
      hs.cpus.PacketReceived(e.cpu, remote->sender, remote->ts, RequestToServer(*key));
      return;
    }
  }
  // A sender on another host is followed only when all timestamps are in one clock.
  // A sender released since (its Utid reused) is as unknown as one in interrupt context.
  const bool known = send && send->sender != kNoTask && (send->host == hs.id || synchronized_) &&
                     send->generation == static_cast<uint16_t>(tasks_[send->sender].generation);
  hs.cpus.PacketReceived(e.cpu, known ? send->sender : kNoTask, known ? send->ts : 0,
                         key && RequestToServer(*key));
}

// LTTng's state dump lists the tasks that exist; one in state WAIT is asleep, so its history
// starts blocked (its waker will say on what).
void Engine::OnStatedumpProcess(HostState& hs, const Event& e) {
  const auto dump = AsStatedumpProcess(e);
  const Utid u = tasks_.GetOrCreate(hs.id, dump.tid(), e.ts);
  histories_.Add(u);
  SetComm(u, dump.name());
  if (dump.pid() > 0) tasks_[u].pid = dump.pid();
  if (dump.status() == kStatedumpWait) Begin(u, e.ts, SegmentKind::kBlocked);
}

// Only the default (v2) hierarchy's path names a task's cgroup.
void Engine::OnCgroup(HostState& hs, const Event& e) {
  const auto cg = AsCgroup(e);
  if (cg.hierarchy() != 0 || cg.path() < 0 || cg.tid() <= 0) return;
  const auto path = static_cast<uint32_t>(cg.path());
  const Utid u = tasks_.GetOrCreate(hs.id, cg.tid(), e.ts);
  histories_.Add(u);
  tasks_[u].cgroup = path;
  if (cg.pid() > 0) tasks_[u].pid = cg.pid();
  if (cg.threadgroup() != 1 || cg.pid() <= 0) return;
  // The whole thread group moved: every live thread of the process (attaches are rare).
  for (Utid t = 0; t < tasks_.size(); ++t) {
    Task& task = tasks_[t];
    if (task.in_use && task.host == hs.id && task.pid == cg.pid() && task.end_ts == kNever) {
      task.cgroup = path;
    }
  }
}

void Engine::OnLost(HostState& hs, const Event& e) {
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

// A span event runs in its thread, on the CPU it names: the thread is running there now.
void Engine::OnSpan(HostState& hs, const Event& e, const Batch& batch) {
  const auto span = AsSpan(e);
  if (span.tid() <= 0) {
    spans_.CountWithoutThread();
    return;
  }
  const Utid u = Touch(hs.id, span.tid(), e.ts, OnCpu(hs));
  if (span.pid() > 0 && tasks_[u].pid < 0) tasks_[u].pid = span.pid();
  const auto id = static_cast<uint64_t>(span.span_id());
  switch (e.kind) {
    case EventKind::kSpanBegin: {
      const int32_t ids = span.ids();
      const bool has_ids = ids >= 0 && static_cast<size_t>(ids) < batch.spans.size();
      spans_.PushBegin(hs.id, u, e.ts, id, span.name() >= 0 ? uint32_t(span.name()) : ~0u,
                       has_ids ? batch.spans[static_cast<size_t>(ids)] : SpanIds{});
      break;
    }
    case EventKind::kSpanEnd:
      spans_.PushEnd(hs.id, u, e.ts, id);
      break;
    default:
      spans_.PushHandoff(hs.id, u, e.ts, id);
      break;
  }
}

void Engine::Evict(const HostState& hs) {
  const int64_t now = hs.now;
  packets_.ExpireBefore(now - options_.packet_expiry_ns);
  // History before the horizon is never read again, whichever host it is on: the horizon is
  // one for all hosts (ActivePathResolver::SetHorizon), and so is the cutoff.
  int64_t cutoff = resolver_.horizon();
  // Over the byte cap, keep less time than the retention window: full sweeps.
  for (int64_t keep = options_.retention_ns;
       history_bytes() > options_.max_history_bytes && keep > 1; keep /= 2) {
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
    spans_.OnTaskEnded(u);
    histories_.Drop(u);
    ++counters_.tasks_ended;
    dropped_.push_back(u);
  }
  while (!dropped_.empty() && tasks_[dropped_.front()].end_ts < swept_horizon_) {
    const Utid u = dropped_.front();
    dropped_.pop_front();
    if (listener_) listener_->OnTaskReleased(u);
    spans_.OnTaskReleased(u);
    tasks_.Release(u);
    ++counters_.tasks_released;
  }
}

}  // namespace waitpath
