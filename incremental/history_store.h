// Every task's history, indexed by Utid, and the counts of what they retain: each change to a
// history goes through here, so the counts (segments, origins, evicted segments) stay exact.
#pragma once

#include <cstdint>
#include <vector>

#include "incremental/task_history.h"
#include "incremental/task_table.h"

namespace waitpath {

class HistoryStore {
 public:
  // u's history: empty until begun, and again once dropped.
  const TaskHistory& operator[](Utid u) const { return histories_[u]; }
  size_t size() const { return histories_.size(); }
  // All of them, indexed by Utid (the resolver reads them).
  const std::vector<TaskHistory>& all() const { return histories_; }

  // Makes room for u's history (a new task: its slot exists before its history begins).
  void Add(Utid u) {
    if (u >= histories_.size()) histories_.resize(u + 1u);
  }
  // Begins u's history at `ts` in `kind`; false (nothing done) if it has begun already.
  bool Begin(Utid u, int64_t ts, SegmentKind kind) {
    Add(u);
    TaskHistory& h = histories_[u];
    if (!h.empty()) return false;
    h.Begin(ts, kind);
    ++segments_;
    return true;
  }
  // Closes u's open own-state segment at `ts` and continues as `kind` (TaskHistory::Switch).
  void Switch(Utid u, int64_t ts, SegmentKind kind) { segments_ += histories_[u].Switch(ts, kind); }
  // Closes u's open blocked segment at `ts` (TaskHistory::Resolve).
  void Resolve(Utid u, int64_t ts, const WaitLink& link, const StateVec& delta,
               const StateVec& origin, SegmentKind next) {
    TaskHistory& h = histories_[u];
    const size_t before = h.size();
    const size_t origins_before = h.origins();
    h.Resolve(ts, link, delta, origin, next);
    segments_ += h.size() - before;
    origins_ += h.origins() - origins_before;
  }
  // Drops u's segments that ended before `t`, keeping the open one.
  void EvictBefore(Utid u, int64_t t) {
    const TaskHistory::Evicted n = histories_[u].EvictBefore(t);
    evicted_segments_ += n.segments;
    segments_ -= n.segments;
    origins_ -= n.origins;
  }
  // Drops u's whole history (its chunks go back to the pool).
  void Drop(Utid u) {
    TaskHistory& h = histories_[u];
    segments_ -= h.size();
    origins_ -= h.origins();
    h = TaskHistory{};
  }

  uint64_t segments() const { return segments_; }                  // retained now
  uint64_t origins() const { return origins_; }                    // retained now
  uint64_t evicted_segments() const { return evicted_segments_; }  // ever

 private:
  std::vector<TaskHistory> histories_;
  uint64_t segments_ = 0;
  uint64_t origins_ = 0;
  uint64_t evicted_segments_ = 0;
};

}  // namespace waitpath
