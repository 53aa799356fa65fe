// A task's execution history: append-only segments, each carrying the cumulative cause
// vector F_X(start) (time per leaf state of X's active path since its history began).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <vector>
#include <limits>

#include "incremental/leaf_state.h"
#include "incremental/task_table.h"

namespace waitpath {

enum class SegmentKind : uint8_t { kRunning, kInterrupted, kPreempted, kBlocked, kUnknown };

// Why a blocked segment ended, i.e. where its active path goes.
struct WaitLink {
  enum class Type : uint8_t {
    kPending,  // still blocked
    kTask,     // woken by `task` from task context: follow it
    kPacket,   // woken by a received packet that `task` sent at `ts` (kNoTask: sender unknown)
    kLeaf,     // woken by a timer, disk, irq, ...: the wait is `leaf`
    kNone,     // never woken, or the waker is unknown: `blocked`
    kUnknown,  // events were lost during the wait: `unknown`
  };
  Type type = Type::kPending;
  Leaf leaf = Leaf::kBlocked;
  Utid task = kNoTask;
  int64_t ts = 0;
};

struct Segment {
  int64_t start;
  SegmentKind kind;
  WaitLink link;    // blocked segments only
  StateVec cum;     // F_X(start)
  // Resolved blocked segments: the link's cumulative value at `start` (e.g. F_W(start) for
  // a waker W), so F_X(t) = cum + F_W(t) - origin follows one chain, not two.
  StateVec origin;
};

// The leaf a task's own (non-blocked) segment counts as.
constexpr Leaf OwnLeaf(SegmentKind kind) {
  switch (kind) {
    case SegmentKind::kRunning: return Leaf::kRunning;
    case SegmentKind::kInterrupted: return Leaf::kInterrupted;
    case SegmentKind::kPreempted: return Leaf::kPreempted;
    case SegmentKind::kUnknown: return Leaf::kUnknown;
    case SegmentKind::kBlocked: return Leaf::kBlocked;
  }
  return Leaf::kUnknown;
}

class TaskHistory {
 public:
  bool empty() const { return segments_.size() == first_; }
  size_t size() const { return segments_.size() - first_; }
  const Segment& at(size_t i) const { return segments_[first_ + i]; }
  const Segment& back() const { return segments_.back(); }
  // Start of the retained history (what came before was evicted or never seen).
  int64_t start() const { return empty() ? std::numeric_limits<int64_t>::max() : segments_[first_].start; }
  int64_t evicted_until() const { return evicted_until_; }
  bool blocked() const { return !empty() && back().kind == SegmentKind::kBlocked; }

  void Begin(int64_t ts, SegmentKind kind) {
    segments_.push_back(Segment{ts, kind, {}, {}, {}});
  }

  // Closes the open own-state segment at `ts` and continues as `kind`.
  void Switch(int64_t ts, SegmentKind kind) {
    const Segment& open = segments_.back();
    if (open.kind == kind) return;
    Append(ts, kind, open.cum + StateVec::Of(OwnLeaf(open.kind), ts - open.start));
  }

  // Closes the open blocked segment at `ts`: `delta` is its active path's breakdown and
  // `origin` the link's cumulative value at the segment's start.
  void Resolve(int64_t ts, const WaitLink& link, const StateVec& delta, const StateVec& origin,
               SegmentKind next) {
    Segment& open = segments_.back();
    open.link = link;
    open.origin = origin;
    Append(ts, next, open.cum + delta);
  }

  // Index of the segment holding time t; t must be >= start().
  size_t Find(int64_t t) const {
    const auto begin = segments_.begin() + static_cast<std::ptrdiff_t>(first_);
    auto it = std::upper_bound(begin, segments_.end(), t, [](int64_t v, const Segment& s) { return v < s.start; });
    return static_cast<size_t>(it - begin) - 1;
  }
  // End of segment i: the next one's start, or `open_end` for the last, open segment.
  int64_t EndOf(size_t i, int64_t open_end) const {
    return i + 1 < size() ? at(i + 1).start : open_end;
  }

  // Drops segments that ended before `t`, keeping the open one. Returns segments dropped.
  size_t EvictBefore(int64_t t) {
    size_t n = 0;
    while (size() > 1 && at(1).start <= t) {
      evicted_until_ = at(1).start;
      ++first_;
      ++n;
    }
    // Compact once the dead front outweighs the live part: amortized O(1) per segment.
    if (first_ >= 64 && first_ * 2 >= segments_.size()) {
      segments_.erase(segments_.begin(), segments_.begin() + static_cast<std::ptrdiff_t>(first_));
      first_ = 0;
      if (segments_.capacity() > 4 * segments_.size() + 64) segments_.shrink_to_fit();
    }
    return n;
  }

  static constexpr size_t kSegmentBytes = sizeof(Segment);

 private:
  void Append(int64_t ts, SegmentKind kind, const StateVec& cum) {
    Segment& open = segments_.back();
    if (ts <= open.start) {
      // Zero-length: replace rather than keep an empty segment (same F at the same instant).
      open.kind = kind;
      open.link = {};
      return;
    }
    segments_.push_back(Segment{ts, kind, {}, cum, {}});
  }

  // Contiguous (a deque of 208-byte segments allocated every second append, which profiling
  // showed as a third of analysis time); evicted ones are skipped by `first_` until compacted.
  std::vector<Segment> segments_;
  size_t first_ = 0;
  int64_t evicted_until_ = std::numeric_limits<int64_t>::min();
};

}  // namespace waitpath
