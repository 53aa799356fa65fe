// A task's execution history: append-only segments, each carrying the cumulative cause
// vector F_X(start) (time per leaf state of X's active path since its history began).
#pragma once

#include <algorithm>
#include <array>
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
  // Woken by a packet a client sent to a server's port (RequestToServer, model/event.h): the
  // waiting task is a server awaiting work, not slowed (docs/analyze.md, "Idle waits"). Only
  // on the resolved wait; histories do not keep it.
  bool for_work = false;
};

// How a segment's cumulative vector F_X(start) is kept (TaskHistory::cum).
enum class CumKind : uint8_t {
  kDerived,  // not kept: the previous segment's plus that segment's time in its own leaf
  kOffsets,  // 32-bit offsets from its group's base, in a side queue (TaskHistory::offsets_)
  kWhole,    // whole, in a side queue: an offset did not fit (TaskHistory::wides_)
};

// One segment of a history: 16 bytes. Most segments follow one of the task's own states
// (running, preempted, interrupted): their vector is the previous one plus one leaf's time, so
// it is not kept but derived on reading, from the nearest segment before it whose vector is
// known, in its group of kGroup: the group's first (its base) or one after a resolved wait
// (which added the wait's breakdown: kept as offsets from the base, or whole when one does not
// fit in 32 bits). A group's evicted segments stay until all of it is evicted (they share one
// chunk). A resolved wait that follows a task (NeedsOrigin: a waker, a known sender) keeps
// that task, a packet's send time and its origin apart, with its other origins: every other
// link is its type and leaf. 64 bytes per segment before, every
// vector kept as offsets and the link's task in each; 120 before that (docs/bench.md, "The
// history's size" and "The engine's memory").
struct Segment {
  int64_t start;
  // The sequence number of its kept vector (cum_kind() kOffsets, kWhole), or of its origin
  // (has_origin(): a resolved wait following a task keeps the link's cumulative value at
  // `start`, e.g. F_W(start) for a waker W, so that F_X(t) = cum + F_W(t) - origin follows one
  // chain, not two; read it with TaskHistory::origin). A segment with both keeps its vector
  // whole, the origin's number with it (TaskHistory::Resolve).
  uint32_t seq;
  SegmentKind kind;
  WaitLink::Type link_type;  // blocked segments only
  Leaf link_leaf;            // blocked segments only
  uint8_t bits;              // the CumKind in the low two bits, then kHasOrigin
  static constexpr uint8_t kCumKindBits = 3, kHasOrigin = 4;
  constexpr CumKind cum_kind() const { return static_cast<CumKind>(bits & kCumKindBits); }
  constexpr bool has_origin() const { return (bits & kHasOrigin) != 0; }
};
static_assert(sizeof(Segment) == 16);

// Whether a resolved wait needs its origin kept: a leaf's (timer, disk, unknown, a packet
// from an unknown sender...) is just that leaf's time at the segment's start.
constexpr bool NeedsOrigin(WaitLink::Type type, Utid task) {
  return (type == WaitLink::Type::kTask || type == WaitLink::Type::kPacket) && task != kNoTask;
}
constexpr bool NeedsOrigin(const WaitLink& link) {
  return NeedsOrigin(link.type, link.task);
}
constexpr bool NeedsOrigin(const Segment& s) {
  return s.has_origin();
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
  bool empty() const { return size() == 0; }
  size_t size() const { return segments_.size() - Dropped(); }
  const Segment& at(size_t i) const { return segments_[Dropped() + i]; }
  const Segment& back() const { return segments_.back(); }
  // Start of the retained history (what came before was evicted or never seen).
  int64_t start() const { return empty() ? std::numeric_limits<int64_t>::max() : at(0).start; }
  int64_t evicted_until() const { return evicted_until_; }
  bool blocked() const { return !empty() && back().kind == SegmentKind::kBlocked; }

  // F_X(start) of segment i: the nearest known vector at or before it, in its group (at most
  // kGroup - 1 segments back, evicted ones of the group included), plus the own states' time
  // since.
  StateVec cum(size_t i) const {
    const size_t to = Dropped() + i;  // in segments_
    size_t j = to;
    while (j % kGroup != 0 && segments_[j].cum_kind() == CumKind::kDerived) --j;
    StateVec v = KnownCum(j);
    for (; j < to; ++j) {
      const Segment& s = segments_[j];
      v.ns[static_cast<size_t>(OwnLeaf(s.kind))] += segments_[j + 1].start - s.start;
    }
    return v;
  }
  // F_X(start) of the open segment (kept whole: every new segment starts from it).
  const StateVec& back_cum() const { return open_cum_; }
  // Segment i's link, whole (a packet's send time is kept with the origin).
  WaitLink link(size_t i) const { return link(at(i)); }
  WaitLink link(const Segment& s) const {
    WaitLink l{s.link_type, s.link_leaf, kNoTask, 0};
    if (s.has_origin()) {
      const KeptOrigin& o = Origin(s);
      l.task = o.task;
      if (s.link_type == WaitLink::Type::kPacket) l.ts = o.send;
    }
    return l;
  }
  // The origin kept for a resolved blocked segment with NeedsOrigin(s).
  const StateVec& origin(const Segment& s) const { return Origin(s).value; }
  // A packet's send time, for a resolved packet wait with NeedsOrigin(s).
  int64_t send_ts(const Segment& s) const { return Origin(s).send; }
  size_t origins() const { return origins_.size(); }

  void Begin(int64_t ts, SegmentKind kind) {
    NewSegment(ts, kind);
    open_cum_ = StateVec{};
    bases_.push_back(StateVec{});  // a fresh history's first segment starts a group
  }

  // Closes the open own-state segment at `ts` and continues as `kind`. Returns whether that
  // added a segment (not when in `kind` already, nor at the open segment's start).
  bool Switch(int64_t ts, SegmentKind kind) {
    const Segment& open = segments_.back();
    if (open.kind == kind) return false;
    if (ts <= open.start) {
      ReplaceOpen(kind);
      return false;
    }
    open_cum_.ns[static_cast<size_t>(OwnLeaf(open.kind))] += ts - open.start;
    NewSegment(ts, kind);
    if (StartsGroup(size() - 1)) bases_.push_back(open_cum_);
    return true;
  }

  // Closes the open blocked segment at `ts`: `delta` is its active path's breakdown and
  // `origin` the link's cumulative value at the segment's start (kept if NeedsOrigin).
  void Resolve(int64_t ts, const WaitLink& link, const StateVec& delta, const StateVec& origin,
               SegmentKind next) {
    Segment& open = segments_.back();
    if (ts <= open.start) {
      ReplaceOpen(next);  // a zero-length wait keeps no link and no origin
      return;
    }
    open.link_type = link.type;
    open.link_leaf = link.leaf;
    if (NeedsOrigin(link)) {
      const uint32_t seq = origins_front_seq_ + static_cast<uint32_t>(origins_.size());
      origins_.push_back(KeptOrigin{origin, link.ts, link.task});
      // A wait that began right after another resolved wait (no engine makes one: a woken
      // task is runnable) has its vector kept too; it moves whole, its origin's number with it.
      if (open.cum_kind() == CumKind::kOffsets) {
        const StateVec v = KnownCum(segments_.size() - 1);
        offsets_.pop_back();
        open.seq = wides_front_seq_ + static_cast<uint32_t>(wides_.size());
        wides_.push_back(Whole{v, 0});
        open.bits = static_cast<uint8_t>((open.bits & ~Segment::kCumKindBits) |
                                         static_cast<uint8_t>(CumKind::kWhole));
      }
      if (open.cum_kind() == CumKind::kWhole) {
        wides_.back().origin_seq = seq;  // the open segment's vector is the newest kept
      } else {
        open.seq = seq;
      }
      open.bits |= Segment::kHasOrigin;
    }
    open_cum_ += delta;
    Keep(NewSegment(ts, next), open_cum_);
  }

  // Index of the segment holding time t; t must be >= start().
  size_t Find(int64_t t) const {
    // Most times looked up are recent (a waker's history at the wait's end, a task's since its
    // previous wait): the last few segments are tried before the whole history is searched.
    if (empty()) return 0;
    size_t last = size() - 1;
    for (int tried = 0; tried < kRecentSegments && last > 0; ++tried, --last) {
      if (at(last).start <= t) return last;
    }
    size_t lo = 0, n = last + 1;  // the answer is in [lo, lo + n)
    while (n > 1) {
      const size_t half = n / 2;
      if (at(lo + half).start <= t) {
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
      if (NeedsOrigin(at(0))) {
        origins_.pop_front();
        ++origins_front_seq_;
        ++n.origins;
      }
      ++front_;
      ++n.segments;
      // A group's segments (and their kept vectors) stay until its last one is evicted: the
      // vectors of the group's later segments may derive from them.
      if (front_ % kGroup == 0) DropGroup();
    }
    return n;
  }

  static constexpr size_t kSegmentBytes = sizeof(Segment);

 private:
  static constexpr int kRecentSegments = 8;
  // Segments per base of the cumulative offsets (a chunk of segments_), and so the most a
  // derived vector is read back over.
  static constexpr size_t kGroup = 16;
  // segments_ begins at its front group's first segment: the evicted ones of that group are
  // kept until the whole group goes (DropGroup).
  size_t Dropped() const { return front_ % kGroup; }
  void DropGroup() {
    for (size_t k = 0; k < kGroup; ++k) {
      const CumKind kind = segments_[0].cum_kind();
      if (kind == CumKind::kOffsets) {
        offsets_.pop_front();
        ++offsets_front_seq_;
      } else if (kind == CumKind::kWhole) {
        wides_.pop_front();
        ++wides_front_seq_;
      }
      segments_.pop_front();
    }
    bases_.pop_front();
  }

  struct KeptOrigin {
    StateVec value;
    int64_t send;  // the link's ts (a packet's send time)
    Utid task;     // the link's task
  };
  struct Whole {
    StateVec value;
    uint32_t origin_seq;  // with has_origin(): the segment's origin (its seq numbers this Whole)
  };
  using Offsets = std::array<uint32_t, kLeafCount>;  // F_X(start) - the group's base
  // Whether segment i is the first of its group (its vector is the group's base).
  bool StartsGroup(size_t i) const { return (front_ + i) % kGroup == 0; }
  const KeptOrigin& Origin(const Segment& s) const {
    const uint32_t seq = s.cum_kind() == CumKind::kWhole ? WholeOf(s).origin_seq : s.seq;
    return origins_[static_cast<uint32_t>(seq - origins_front_seq_)];
  }
  const Whole& WholeOf(const Segment& s) const {
    return wides_[static_cast<uint32_t>(s.seq - wides_front_seq_)];
  }
  // The vector of segments_[j], kept or (the first of its group) its group's base.
  StateVec KnownCum(size_t j) const {
    const Segment& s = segments_[j];
    if (s.cum_kind() == CumKind::kWhole) return WholeOf(s).value;
    StateVec v = bases_[j / kGroup];
    if (s.cum_kind() == CumKind::kOffsets) {
      const Offsets& off = offsets_[static_cast<uint32_t>(s.seq - offsets_front_seq_)];
      for (int k = 0; k < kLeafCount; ++k) v.ns[k] += off[k];
    }
    return v;
  }

  // Opens a segment at `ts` in `kind` (ts after the open segment's start, or the first), its
  // vector derived; the open segment stays where it is (chunks do not move).
  [[gnu::always_inline]] Segment& NewSegment(int64_t ts, SegmentKind kind) {
    Segment& s = segments_.append();
    s.start = ts;
    s.seq = 0;
    s.kind = kind;
    s.link_type = WaitLink::Type::kPending;
    s.link_leaf = Leaf::kBlocked;
    s.bits = static_cast<uint8_t>(CumKind::kDerived);
    return s;
  }
  // Zero-length: replace rather than keep an empty segment (same F at the same instant).
  void ReplaceOpen(SegmentKind kind) {
    Segment& open = segments_.back();
    open.kind = kind;
    open.link_type = WaitLink::Type::kPending;
    open.link_leaf = Leaf::kBlocked;
  }
  // Keeps the vector `v` of the newest segment `s`, which its predecessor's does not
  // give: the base of a new group, offsets from its group's base, or whole when an offset
  // does not fit in 32 bits.
  void Keep(Segment& s, const StateVec& v) {
    if (StartsGroup(size() - 1)) {
      bases_.push_back(v);
      return;
    }
    const StateVec& base = bases_.back();
    Offsets off;
    uint64_t high = 0;  // a negative offset has its high bits set too
    for (int k = 0; k < kLeafCount; ++k) {
      const int64_t d = v.ns[k] - base.ns[k];
      high |= static_cast<uint64_t>(d) >> 32;
      off[k] = static_cast<uint32_t>(d);
    }
    if (high == 0) {
      s.bits = static_cast<uint8_t>(CumKind::kOffsets);
      s.seq = offsets_front_seq_ + static_cast<uint32_t>(offsets_.size());
      offsets_.push_back(off);
    } else {
      s.bits = static_cast<uint8_t>(CumKind::kWhole);
      s.seq = wides_front_seq_ + static_cast<uint32_t>(wides_.size());
      wides_.push_back(Whole{v, 0});
    }
  }
  // Chunked rather than one vector (whose growth copied every segment, a fifth of analysis
  // time in a profile) or a std::deque (a 512-byte node allocated every two segments).
  ChunkedQueue<Segment, kGroup> segments_;
  ChunkedQueue<StateVec, 4> bases_;      // one per group of segments_
  ChunkedQueue<Offsets, 16> offsets_;    // the kOffsets vectors, in their segments' order
  ChunkedQueue<Whole, 4> wides_;         // the kWhole vectors, in their segments' order
  ChunkedQueue<KeptOrigin, 4> origins_;  // in the order of their segments (most have few)
  size_t front_ = 0;                     // segments ever dropped from the front
  uint32_t origins_front_seq_ = 0;       // sequence number of origins_[0] (wraps harmlessly)
  uint32_t offsets_front_seq_ = 0;       // seq of offsets_[0]'s segment (wraps harmlessly)
  uint32_t wides_front_seq_ = 0;         // seq of wides_[0]'s segment (wraps harmlessly)
  StateVec open_cum_;                    // F_X(start) of the open segment
  int64_t evicted_until_ = std::numeric_limits<int64_t>::min();
};

}  // namespace waitpath
