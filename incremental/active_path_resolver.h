// Computes active-path breakdowns from task histories (bottom-up: each wait is resolved once,
// at its wake-up, from cumulative vectors) and expands paths on demand.
#pragma once

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
  ActivePathResolver(const TaskTable& tasks, const std::vector<TaskHistory>& histories, int max_depth)
      : tasks_(tasks), histories_(histories), max_depth_(max_depth) {}

  // Time per leaf of AP(x, t) for t in [a, b).
  StateVec Delta(Utid x, int64_t a, int64_t b);
  // The breakdown of a wait [a, b) ended through `link`; `origin` receives what the
  // history stores to answer later queries inside the wait in one chain.
  StateVec ResolveWait(const WaitLink& link, int64_t a, int64_t b, StateVec* origin);
  // The same without keeping the origin.
  StateVec LinkDelta(Utid waiter, const WaitLink& link, int64_t a, int64_t b) {
    (void)waiter;
    StateVec origin;
    return ResolveWait(link, a, b, &origin);
  }
  // x's cumulative vector F_x(t), extended before its history through its fork link (its
  // parent's path) or as unknown. Only differences of it are meaningful.
  StateVec Cum(Utid x, int64_t t, int depth = 0);

  // Appends the path of x over [a, b) to `out`, adjacent pieces of the same task and leaf
  // merged. The pieces cover [a, b) exactly.
  void Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out, int depth = 0);

  // History before `horizon` on `host` may be evicted: queries there answer unknown.
  void SetHorizon(uint16_t host, int64_t horizon);
  int64_t horizon(uint16_t host) const {
    return host < horizons_.size() ? horizons_[host] : std::numeric_limits<int64_t>::min();
  }

  const ResolverCounters& counters() const { return counters_; }

 private:
  StateVec LinkValue(const WaitLink& link, int64_t start, int64_t t, int depth);
  StateVec CumInside(const TaskHistory& h, int64_t t, int depth);
  void ExpandLink(Utid waiter, const WaitLink& link, int64_t a, int64_t b, std::vector<PathSegment>* out,
                  int depth);
  static void Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a, int64_t b, int depth);

  const TaskTable& tasks_;
  const std::vector<TaskHistory>& histories_;
  const int max_depth_;
  std::vector<int64_t> horizons_;
  ResolverCounters counters_;
};

}  // namespace waitpath
