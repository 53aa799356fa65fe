// Computes active-path breakdowns from task histories (bottom-up: each wait is resolved once,
// at its wake-up, from cumulative vectors) and expands paths on demand.
#pragma once

#include <cstdint>
#include <vector>

#include "incremental/task_history.h"
#include "incremental/task_table.h"

namespace waitpath {

// One piece of an expanded path: during [start, end) the watched task's active path was at
// `task` (kNoTask for a packet in flight) in state `leaf`.
struct PathSegment {
  Utid task;
  Leaf leaf;
  int64_t start, end;
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
  StateVec Delta(Utid x, int64_t a, int64_t b, int depth = 0);
  // The same for a blocked interval [a, b) ended through `link`.
  StateVec LinkDelta(Utid waiter, const WaitLink& link, int64_t a, int64_t b, int depth = 0);

  // Appends the path of x over [a, b) to `out`, adjacent pieces of the same task and leaf
  // merged. The pieces cover [a, b) exactly.
  void Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out, int depth = 0);

  const ResolverCounters& counters() const { return counters_; }

 private:
  StateVec CumAt(Utid x, const TaskHistory& h, int64_t t, int depth);
  void ExpandLink(Utid waiter, const WaitLink& link, int64_t a, int64_t b, std::vector<PathSegment>* out,
                  int depth);
  static void Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a, int64_t b);

  const TaskTable& tasks_;
  const std::vector<TaskHistory>& histories_;
  const int max_depth_;
  ResolverCounters counters_;
};

}  // namespace waitpath
