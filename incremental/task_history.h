// A task's execution history: append-only segments, each carrying the cumulative cause
// vector F_X(start) (time per leaf state of X's active path since its history began).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "incremental/chunked_queue.h"
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
  WaitLink link;  // blocked segments only
  StateVec cum;   // F_X(start)
  SegmentKind kind;
  // Resolved blocked segments following a task (see NeedsOrigin): where the history keeps
  // the link's cumulative value at `start` (e.g. F_W(start) for a waker W), so F_X(t) =
  // cum + F_W(t) - origin follows one chain, not two. Read it with TaskHistory::origin.
  uint32_t origin_seq;
};

// Whether a resolved wait needs its origin kept: a leaf's (timer, disk, unknown, a packet
// from an unknown sender...) is just that leaf's time at the segment's start.
constexpr bool NeedsOrigin(const WaitLink& link) {
  return (link.type == WaitLink::Type::kTask || link.type == WaitLink::Type::kPacket) &&
         link.task != kNoTask;
}

// The leaf a task's own (non-blocked) segment counts as.
constexpr Leaf OwnLeaf(SegmentKind kind) {
  switch (kind) {
    case SegmentKind::kRunning:
      return Leaf::kRunning;
    case SegmentKind::kInterrupted:
      return Leaf::kInterrupted;
    case SegmentKind::kPreempted:
      return Leaf::kPreempted;
    case SegmentKind::kUnknown:
      return Leaf::kUnknown;
    case SegmentKind::kBlocked:
      return Leaf::kBlocked;
  }
  return Leaf::kUnknown;
}

class TaskHistory {
 public:
  bool empty() const { return segments_.empty(); }
  size_t size() const { return segments_.size(); }
  const Segment& at(size_t i) const { return segments_[i]; }
  const Segment& back() const { return segments_.back(); }
  // Start of the retained history (what came before was evicted or never seen).
  int64_t start() const {
    return empty() ? std::numeric_limits<int64_t>::max() : segments_[0].start;
  }
  int64_t evicted_until() const { return evicted_until_; }
  bool blocked() const { return !empty() && back().kind == SegmentKind::kBlocked; }
  // The origin kept for a resolved blocked segment with NeedsOrigin(s.link).
  const StateVec& origin(const Segment& s) const {
    return origins_[static_cast<uint32_t>(s.origin_seq - origins_front_seq_)];
  }
  size_t origins() const { return origins_.size(); }

  void Begin(int64_t ts, SegmentKind kind) { segments_.push_back(Segment{ts, {}, {}, kind, 0}); }

  // Closes the open own-state segment at `ts` and continues as `kind`. Returns whether that
  // added a segment (not when in `kind` already, nor at the open segment's start).
  bool Switch(int64_t ts, SegmentKind kind) {
    const Segment& open = segments_.back();
    if (open.kind == kind) return false;
    const Leaf leaf = OwnLeaf(open.kind);
    const int64_t ns = ts - open.start;
    Segment* next = Append(ts, kind);
    if (!next) return false;
    // open.cum plus one leaf's time, without a whole vector built and added.
    next->cum = open.cum;
    next->cum[leaf] += ns;
    return true;
  }

  // Closes the open blocked segment at `ts`: `delta` is its active path's breakdown and
  // `origin` the link's cumulative value at the segment's start (kept if NeedsOrigin).
  void Resolve(int64_t ts, const WaitLink& link, const StateVec& delta, const StateVec& origin,
               SegmentKind next) {
    Segment& open = segments_.back();
    open.link = link;
    if (ts > open.start && NeedsOrigin(link)) {
      open.origin_seq = origins_front_seq_ + static_cast<uint32_t>(origins_.size());
      origins_.push_back(origin);
    }
    if (Segment* s = Append(ts, next)) s->cum = open.cum + delta;
  }

  // Index of the segment holding time t; t must be >= start().
  size_t Find(int64_t t) const {
    // Most times looked up are recent (a waker's history at the wait's end, a task's since its
    // previous wait): the last few segments are tried before the whole history is searched.
    if (segments_.empty()) return 0;
    size_t last = segments_.size() - 1;
    for (int tried = 0; tried < kRecentSegments && last > 0; ++tried, --last) {
      if (segments_[last].start <= t) return last;
    }
    size_t lo = 0, n = last + 1;  // the answer is in [lo, lo + n)
    while (n > 1) {
      const size_t half = n / 2;
      if (segments_[lo + half].start <= t) {
        lo += half;
        n -= half;
      } else {
        n = half;
      }
    }
    return lo;
  }
  // End of segment i: the next one's start, or `open_end` for the last, open segment.
  int64_t EndOf(size_t i, int64_t open_end) const {
    return i + 1 < size() ? at(i + 1).start : open_end;
  }

  // Drops segments that ended before `t`, keeping the open one.
  struct Evicted {
    size_t segments = 0;
    size_t origins = 0;
  };
  Evicted EvictBefore(int64_t t) {
    Evicted n;
    while (size() > 1 && at(1).start <= t) {
      evicted_until_ = at(1).start;
      if (at(0).kind == SegmentKind::kBlocked && NeedsOrigin(at(0).link)) {
        origins_.pop_front();
        ++origins_front_seq_;
        ++n.origins;
      }
      segments_.pop_front();
      ++n.segments;
    }
    return n;
  }

  static constexpr size_t kSegmentBytes = sizeof(Segment);
  static constexpr size_t kOriginBytes = sizeof(StateVec);

 private:
  static constexpr int kRecentSegments = 8;

  // Opens a segment at `ts` in `kind` and returns it for its caller to set its cum (the open
  // segment, which the caller reads, stays where it is: chunks do not move); null when `ts` is
  // at the open segment's start.
  Segment* Append(int64_t ts, SegmentKind kind) {
    Segment& open = segments_.back();
    if (ts <= open.start) {
      // Zero-length: replace rather than keep an empty segment (same F at the same instant).
      // A zero-length wait kept no origin (Resolve).
      open.kind = kind;
      open.link = {};
      return nullptr;
    }
    Segment& s = segments_.append();
    s.start = ts;
    s.link = {};
    s.kind = kind;
    s.origin_seq = 0;
    return &s;
  }

  // Chunked rather than one vector (whose growth copied every segment, a fifth of analysis
  // time in a profile) or a std::deque (a 512-byte node allocated every two segments).
  ChunkedQueue<Segment> segments_;
  ChunkedQueue<StateVec, 8> origins_;  // in the order of their segments (most tasks have few)
  uint32_t origins_front_seq_ = 0;     // origin_seq of origins_[0] (wraps harmlessly)
  int64_t evicted_until_ = std::numeric_limits<int64_t>::min();
};

}  // namespace waitpath
