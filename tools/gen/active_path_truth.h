// Ground truth: the pointwise active path (docs/architecture.md) applied to the simulation's own
// timelines (who ran when, who woke whom, which packet from whom, when).
#pragma once

#include <map>
#include <vector>

#include "tools/gen/task_timeline.h"
#include "tools/gen/trace_record.h"

namespace waitpath::gen {

struct PathBreakdown {
  LeafVector total{};                     // time per leaf state; sums to b - a
  std::map<int32_t, LeafVector> by_task;  // the same time split by the task owning the leaf
};

class ActivePathTruth {
 public:
  // `retention` > 0: the answer of an analysis that keeps that much history. A wait
  // [c, d) woken by a task or a packet is resolved at d, when history before d - retention
  // may be gone: its part before then (before the send, for a packet) is unknown, owned by
  // the waker; the rest follows the waker as usual (docs/architecture.md, "Eviction").
  ActivePathTruth(const std::vector<TaskInfo>& tasks, const std::vector<TaskTimeline>& timelines,
                  Ns retention = 0)
      : tasks_(tasks), timelines_(timelines), retention_(retention) {}

  // Breakdown of AP(task, t) for t in [a, b). The leaf owner is the task itself for
  // running/interrupted/preempted, and the task whose wait produced the leaf for
  // timer/disk/irq/ipi/network/blocked (the deepest task of the chain).
  PathBreakdown Compute(int32_t task, Ns a, Ns b) const;

 private:
  const std::vector<TaskInfo>& tasks_;
  const std::vector<TaskTimeline>& timelines_;
  const Ns retention_;
};

}  // namespace waitpath::gen
