// The incremental engine: consumes decoded batches host by host, keeps kernel state and task
// histories within bounded memory, and resolves every wait at its wake-up.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "incremental/active_path_resolver.h"
#include "incremental/cpu_context_tracker.h"
#include "incremental/history_store.h"
#include "incremental/packet_matcher.h"
#include "incremental/remote_peers.h"
#include "incremental/span_tracker.h"
#include "incremental/task_history.h"
#include "incremental/task_table.h"
#include "model/batch.h"
#include "model/dialect.h"

namespace waitpath {

struct EngineOptions {
  int64_t retention_ns = 30'000'000'000;      // history kept behind each host's newest event
  size_t max_history_bytes = 256u << 20;      // and at most this much of it
  int max_depth = 256;                        // longest wake-up chain followed
  int64_t packet_expiry_ns = 10'000'000'000;  // unmatched sends are dropped after this
};

// A wait of `task` over [start, end), resolved at its wake-up `end`.
struct ResolvedWait {
  Utid task;
  int64_t start, end;
  WaitLink link;
  StateVec breakdown;  // sums to end - start
  StateVec cum_start;  // the task's cumulative vector at `start` (its value at `end` is
                       // cum_start + breakdown): accounting from one wait to the next
                       // needs no read of history that may be evicted
};

// Told, on the engine thread, about every resolved wait while the histories it reaches are
// still retained, and about the two steps by which an ended task's memory is reclaimed.
class WaitListener {
 public:
  virtual ~WaitListener() = default;
  virtual void OnWait(const ResolvedWait& wait) = 0;
  // u ended before the horizon: its history is dropped right after this call (read what is
  // needed of it now: TaskEnd, Cumulative at the end). Its Task record stays for now.
  virtual void OnTaskEnded(Utid u) { (void)u; }
  // Nothing retained refers to u any more: its Utid names a later task after this call.
  virtual void OnTaskReleased(Utid u) { (void)u; }
};

struct EngineCounters {
  uint64_t events = 0;
  uint64_t waits = 0;
  uint64_t unknown_wakers = 0;     // wake-ups from a CPU whose context was not known
  uint64_t missed_wakeups = 0;     // tasks switched in while we thought them blocked
  uint64_t inferred_switches = 0;  // events whose own current task was not the tracked one
  std::vector<uint64_t> inferred_switches_by_host;  // the same per host id (a metric's `host`)
  uint64_t loss_markers = 0;
  uint64_t evicted_segments = 0;   // (the three history counts are HistoryStore's)
  uint64_t history_segments = 0;   // retained now
  uint64_t history_origins = 0;    // retained now (resolved waits that follow a task)
  uint64_t tasks_ended = 0;        // histories of ended tasks dropped
  uint64_t tasks_released = 0;     // Utids given back for reuse
  uint64_t remote_waits = 0;       // waits ended by a packet from another shard, resolved
  uint64_t remote_unresolved = 0;  // the same whose sender's summary did not come: network
};

class Engine {
 public:
  explicit Engine(EngineOptions options = {});

  void SetListener(WaitListener* listener) { listener_ = listener; }
  // Told every application span as it ends (docs/requests.md).
  void SetSpanListener(SpanListener* listener) { spans_.SetListener(listener); }
  // A whole batch of one host, in order (single host, or timestamps already synchronized).
  void Push(const Batch& batch);
  // One event of `batch` (for merged multi-host input: `e.ts` in the reference clock).
  void Process(const Event& e, const Batch& batch);
  // Cross-host packet links are followed only when every host's timestamps are in one
  // reference clock; otherwise such waits count as network.
  void SetSynchronized(bool synchronized) { synchronized_ = synchronized; }
  // A shard of a fleet: packets to and from the other shards' hosts (docs/scale.md).
  void SetRemotePeers(RemotePeers* peers) { peers_ = peers; }
  // The stand-in of a sender on another shard's `host` (an id above every local host's).
  Utid RemoteTask(uint16_t host, int32_t tid, int32_t pid, uint32_t comm, int64_t ts);

  const TaskTable& tasks() const { return tasks_; }
  const TaskHistory& history(Utid u) const { return histories_[u]; }
  ActivePathResolver& resolver() { return resolver_; }
  const ActivePathResolver& resolver() const { return resolver_; }  // its counters, horizon
  const PacketMatcher& packets() const { return packets_; }
  const SpanTracker& spans() const { return spans_; }
  EngineCounters counters() const;

  // The newest timestamp seen on `host` (the end of its input once it has ended).
  int64_t host_now(uint16_t host) const;
  // A task's observed lifetime [start, end): from its fork or first event to its final
  // switch-out after sched_process_exit (the exit itself if that switch is not in the trace),
  // or to the end of its host's input.
  int64_t TaskStart(Utid u) const { return tasks_[u].first_ts; }
  int64_t TaskEnd(Utid u) const;
  // Breakdown of the task's active path over [a, b); before the horizon, unknown.
  StateVec Breakdown(Utid u, int64_t a, int64_t b) { return resolver_.Delta(u, a, b); }
  // The task's cumulative vector: zero at TaskStart, F(b) - F(a) its breakdown over [a, b)
  // as resolved when each wait ended (the part of a wait that reached into evicted history
  // counted unknown then). Exact for t at a segment's start (every wait's start and end, the
  // task's end), inside a segment of its own, or at or after the horizon.
  StateVec Cumulative(Utid u, int64_t t) const { return resolver_.Cum(u, t); }
  // Memory the retained histories hold: whole chunks (docs/analyze.md, "Memory").
  size_t history_bytes() const { return ChunksInUseBytes().load(std::memory_order_relaxed); }

 private:
  struct HostState {
    uint16_t id = 0;
    CpuContextTracker cpus;
    int64_t now = std::numeric_limits<int64_t>::min();
    int64_t last_loss = std::numeric_limits<int64_t>::min();
    uint32_t dialect = 0;     // DialectFlags, as of the host's latest batch
    bool has_waking = false;  // kDialectHasWaking: sched_wakeup is not the waker's context
    uint64_t events_since_evict = 0;
    int64_t last_evict = std::numeric_limits<int64_t>::min();
  };

  HostState& Host(uint16_t host);
  HostState& HostOf(const Batch& batch);
  void Handle(HostState& hs, const Event& e, const Batch& batch);

  Utid Touch(uint16_t host, int32_t tid, int64_t ts, SegmentKind initial);
  // What a task that an event shows on a CPU is doing there: running, unless the host's
  // traces have no scheduler events (user space only, or a kernel session without
  // sched_switch), where nothing says when it ran, waited or was preempted: unknown.
  static SegmentKind OnCpu(const HostState& hs) {
    return (hs.dialect & kDialectHasSwitch) ? SegmentKind::kRunning : SegmentKind::kUnknown;
  }
  bool Begin(Utid u, int64_t ts, SegmentKind kind);
  void SetComm(Utid u, int32_t comm) {
    if (comm >= 0) tasks_[u].comm = static_cast<uint32_t>(comm);
  }
  std::string_view Comm(Utid u) const;
  void ResolveWait(Utid u, int64_t ts, const WaitLink& link, SegmentKind next);
  void FollowCurrentTask(HostState& hs, const Event& e);
  void InferSwitch(HostState& hs, uint16_t cpu, int32_t tid, int64_t ts);
  bool Current(Utid u) const;
  void EnterInterrupt(HostState& hs, const Event& e, const IrqFrame& frame);

  // One handler per kind of event, reading it through its view (model/event_views.h).
  void OnSchedSwitch(HostState& hs, const Event& e);
  void SwitchOut(HostState& hs, const Event& e);
  Utid SwitchIn(HostState& hs, const Event& e);
  void OnWaking(HostState& hs, const Event& e);
  void OnWakeup(HostState& hs, const Event& e);
  void OnWakeupNew(HostState& hs, const Event& e);
  void OnFork(HostState& hs, const Event& e);
  void OnExit(HostState& hs, const Event& e);
  void OnFree(HostState& hs, const Event& e);
  void OnIrqEntry(HostState& hs, const Event& e);
  void OnSoftirqEntry(HostState& hs, const Event& e);
  void OnHrtimerEntry(HostState& hs, const Event& e);
  void OnIpiEntry(HostState& hs, const Event& e);
  void OnInterruptExit(HostState& hs, const Event& e, IrqFrame::Kind kind);
  void OnBlockComplete(HostState& hs, const Event& e);
  void OnPacketOut(HostState& hs, const Event& e, const Batch& batch);
  void OnPacketIn(HostState& hs, const Event& e, const Batch& batch);
  void OnStatedumpProcess(HostState& hs, const Event& e);
  void OnCgroup(HostState& hs, const Event& e);
  void OnLost(HostState& hs, const Event& e);
  void OnSpan(HostState& hs, const Event& e, const Batch& batch);

  void Evict(const HostState& hs);
  void EvictTask(Utid u, int64_t cutoff);
  void ReclaimEndedTasks();

  const EngineOptions options_;
  TaskTable tasks_;
  HistoryStore histories_;
  std::vector<HostState> hosts_;
  PacketMatcher packets_;
  ActivePathResolver resolver_;
  SpanTracker spans_;
  WaitListener* listener_ = nullptr;
  EngineCounters counters_;
  size_t evict_cursor_ = 0;
  // Eviction sweeps every task's history in slices; once a sweep that began with the horizon
  // at H has visited every task, no retained segment ends before H, so none links to a task
  // that ended before H (a link is made while its task lives).
  int64_t sweep_start_horizon_ = std::numeric_limits<int64_t>::min();
  int64_t swept_horizon_ = std::numeric_limits<int64_t>::min();
  std::deque<Utid> ended_;    // end_ts set, history still kept; in order of their ends
  std::deque<Utid> dropped_;  // history dropped, Utid not yet released
  bool synchronized_ = false;
  RemotePeers* peers_ = nullptr;
};

}  // namespace waitpath
