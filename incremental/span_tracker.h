// Follows application spans (requests) over the threads that carry them and resolves each one,
// when it ends, into the active path over its interval (docs/requests.md).
//
// A span is a list of pieces tiling [begin, end). Each piece ends at a span event (handoff or
// end) and follows the active path of the thread that emitted it, from the previous span event
// on: the thread that takes a request over at a handoff is where the request was waiting
// before (it was queued for that thread), and the thread that ends it carries it since the last
// handoff. Without a handoff the one piece is the span's own thread over [begin, end). Pieces
// are expanded when the span ends, from the retained histories: exact for a span shorter than
// the retention, the evicted part of a longer one unknown (as for any wait).
//
// A thread "holds" a span from its begin (or a handoff to it) to its end (or a handoff away).
// Path time spent in a thread while it held another span is blamed on that span (blocked_by),
// the innermost one when several are held. A thread that held spans and holds none is idle:
// that time is told apart (OnIdle) and is no request's.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "incremental/active_path_resolver.h"
#include "incremental/task_table.h"
#include "model/event.h"

namespace waitpath {

struct SpanTrackerOptions {
  size_t max_open = 1u << 16;  // open spans kept; begins beyond are dropped (counted)
};

// What identifies a span to people: its ids and operation, and where it began.
struct SpanIdentity {
  uint64_t span_id = 0;
  SpanIds ids;          // trace id, parent span id
  uint32_t name = ~0u;  // interned operation name, ~0u: none
  uint16_t host = 0;
};

// Another span the path went through (its thread held it then), and for how long.
struct SpanBlocker {
  SpanIdentity span;
  int64_t ns = 0;
};

// A span resolved at its end.
struct ResolvedSpan {
  SpanIdentity span;
  Utid task = kNoTask;  // the thread that began it
  Utid end_task = kNoTask;
  int64_t start = 0, end = 0;
  uint32_t handoffs = 0;
  StateVec breakdown;                       // sums to end - start
  std::span<const PathSegment> path;        // tiles [start, end), in order
  std::span<const SpanBlocker> blocked_by;  // by time, longest first
};

struct SpanCounters {
  uint64_t begun = 0;
  uint64_t ended = 0;           // resolved and told
  uint64_t unmatched_ends = 0;  // end of a span id not open (never begun, dropped, ended twice)
  uint64_t unmatched_handoffs = 0;
  uint64_t reused_ids = 0;      // begin of an id still open: the older span is dropped
  uint64_t dropped_full = 0;    // begins dropped because max_open spans were open
  uint64_t thread_ended = 0;    // open spans dropped: the thread holding them ended
  uint64_t without_thread = 0;  // span events without a vtid/tid context
};

class SpanListener {
 public:
  virtual ~SpanListener() = default;
  virtual void OnSpan(const ResolvedSpan& span) = 0;
  // Thread u held spans before and none over [from, to): `states` is its path then.
  virtual void OnIdle(Utid u, int64_t from, int64_t to, const StateVec& states) {
    (void)u, (void)from, (void)to, (void)states;
  }
};

class SpanTracker {
 public:
  SpanTracker(const TaskTable& tasks, const ActivePathResolver& resolver,
              SpanTrackerOptions options = {})
      : tasks_(tasks), resolver_(resolver), options_(options) {}

  void SetListener(SpanListener* listener) { listener_ = listener; }

  // Span events of thread u (running at ts) on `host`.
  void PushBegin(uint16_t host, Utid u, int64_t ts, uint64_t span_id, uint32_t name,
                 const SpanIds& ids);
  void PushEnd(uint16_t host, Utid u, int64_t ts, uint64_t span_id);
  void PushHandoff(uint16_t host, Utid u, int64_t ts, uint64_t span_id);
  void CountWithoutThread() { ++counters_.without_thread; }

  // u's history is about to be dropped: the spans it holds can no longer be resolved.
  void OnTaskEnded(Utid u);
  // u's Utid is about to name another task.
  void OnTaskReleased(Utid u);

  size_t open() const { return by_id_.size(); }
  const SpanCounters& counters() const { return counters_; }
  // Bytes an open span without handoffs holds: its slot, its index entry (an unordered_map
  // node, about 32 bytes) and its held interval (docs/requests.md, "Memory").
  static size_t BytesPerOpenSpan();

 private:
  static constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
  struct Piece {
    Utid task;
    int64_t start, end;
  };
  struct OpenSpan {
    SpanIdentity id;
    Utid task = kNoTask;    // began it
    Utid holder = kNoTask;  // holds it now
    int64_t start = 0;
    int64_t mark = 0;  // the last span event: the next piece starts here
    uint32_t handoffs = 0;
    std::vector<Piece> pieces;  // before `mark` (handoffs only: empty without one)
  };
  // [start, end) during which a thread held a span (kept while the path may reach it).
  struct Held {
    SpanIdentity span;
    int64_t start, end;
  };
  struct ThreadState {
    // Open ones (end kOpen: as deep as spans nest) and closed ones in order of their ends (they
    // close in time order), from the horizon on: a path piece [a, b) meets the closed ones
    // ending after a, found by a binary search, and no older one.
    std::vector<Held> open;
    std::deque<Held> closed;
    uint32_t holding = 0;  // open spans held now
    int64_t idle_since = kOpen;
  };
  struct Key {
    uint64_t span_id;
    uint16_t host;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>{}(k.span_id * 0x9e3779b97f4a7c15ULL ^ k.host);
    }
  };

  ThreadState& Thread(Utid u);
  void Hold(Utid u, const SpanIdentity& span, int64_t ts);
  void Release(Utid u, const SpanIdentity& span, int64_t ts);
  void Drop(uint32_t slot);
  void Blame(const OpenSpan& s);

  const TaskTable& tasks_;
  const ActivePathResolver& resolver_;
  const SpanTrackerOptions options_;
  SpanListener* listener_ = nullptr;
  SpanCounters counters_;
  std::unordered_map<Key, uint32_t, KeyHash> by_id_;  // open spans' slots
  std::vector<OpenSpan> slots_;
  std::vector<uint32_t> free_;
  std::vector<ThreadState> threads_;  // by Utid
  // Scratch of one resolution, reused.
  std::vector<PathSegment> path_;
  std::vector<SpanBlocker> blockers_;
  std::vector<const Held*> candidates_;
  std::vector<int64_t> cuts_;
};

}  // namespace waitpath
