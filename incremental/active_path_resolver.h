// Computes active-path breakdowns from task histories (bottom-up: each wait is resolved once,
// at its wake-up, from cumulative vectors) and expands paths on demand.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "incremental/task_history.h"
#include "incremental/task_table.h"

namespace waitpath {

// One piece of an expanded path: during [start, end) the watched task's active path was at
// `task` in state `leaf` (for timer, disk, network... the task whose wait it is).
struct PathSegment {
  Utid task;
  Leaf leaf;
  int64_t start, end;
  uint16_t depth;  // wake-up links followed from the watched task to get here
};

struct ResolverCounters {
  uint64_t depth_limited = 0;  // chains cut at max_depth (counted as unknown)
  uint64_t evicted_reads = 0;  // reads reaching into evicted history (counted as unknown)
};

class ActivePathResolver {
 public:
  ActivePathResolver(const TaskTable& tasks, const std::vector<TaskHistory>& histories,
                     int max_depth)
      : tasks_(tasks), histories_(histories), max_depth_(max_depth) {}

  // Time per leaf of AP(x, t) for t in [a, b); time before the horizon is unknown.
  StateVec Delta(Utid x, int64_t a, int64_t b) const;
  // The breakdown of a wait [a, b) ended through `link`; `origin` receives what the
  // history stores to answer later queries inside the wait in one chain (see NeedsOrigin).
  // The part of the wait that would read another task's history before the horizon is
  // unknown (docs/architecture.md, "Eviction").
  StateVec ResolveWait(const WaitLink& link, int64_t a, int64_t b, StateVec* origin) const;
  // The same without keeping the origin.
  StateVec LinkDelta(Utid waiter, const WaitLink& link, int64_t a, int64_t b) const {
    (void)waiter;
    StateVec origin;
    return ResolveWait(link, a, b, &origin);
  }
  // x's cumulative vector F_x(t), extended before its history through its fork link (its
  // parent's path) or as unknown. Only differences of it are meaningful, and only values
  // that cannot change are: t at or after the horizon, a segment's start (its stored
  // vector), or t inside one of x's own (running, preempted...) segments. Before the
  // horizon, a wait's value would read histories that may have been evicted since.
  StateVec Cum(Utid x, int64_t t, int depth = 0) const;

  // Appends the path of x over [a, b) to `out`, adjacent pieces of the same task and leaf
  // merged. The pieces cover [a, b) exactly. x's own retained history is read as it is;
  // another task's (through a wake-up, packet or fork link) only from the horizon on, the
  // time before it being unknown at that task, as ResolveWait counts it.
  void Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out, int depth = 0) const;

  // History before `horizon` may be evicted, on any host: reads of other tasks' histories
  // there answer unknown. One horizon for all hosts, the latest any host set, because a
  // path crosses hosts: a read at t on one host may continue on another whose history at t
  // is gone. Never moves back.
  void SetHorizon(int64_t horizon) { horizon_ = std::max(horizon_, horizon); }
  int64_t horizon() const { return horizon_; }

  const ResolverCounters& counters() const { return counters_; }

 private:
  StateVec LinkValue(const WaitLink& link, int64_t start, int64_t t, int depth) const;
  StateVec CumInside(const TaskHistory& h, int64_t t, int depth) const;
  static StateVec RemotePrefix(const StateVec& part, int64_t d);
  void ExpandRemote(Utid waiter, const WaitLink& link, int64_t start, const StateVec& part,
                    int64_t a, int64_t b, std::vector<PathSegment>* out, int depth) const;
  void ExpandLink(Utid waiter, const WaitLink& link, int64_t a, int64_t b,
                  std::vector<PathSegment>* out, int depth) const;
  static void Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a, int64_t b,
                   int depth);

  const TaskTable& tasks_;
  const std::vector<TaskHistory>& histories_;
  const int max_depth_;
  int64_t horizon_ = std::numeric_limits<int64_t>::min();
  // Statistics of the reads, counted by const queries too (the accounting's): not state.
  mutable ResolverCounters counters_;
};

}  // namespace waitpath
