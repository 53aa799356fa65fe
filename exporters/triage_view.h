// What the terminal view of `tail`, `live` and `demo` shows (exporters/terminal_screen.h),
// kept as waits resolve: the slowest recent requests (root spans, when the traces carry
// application spans) and waits with their headlines, each watched
// process's time by state over the recent window and since the start, and idle waits apart:
// waits on untraced peers, and servers' waits for a request (a client's packet to their port
// woke them); they are idle, not slow (docs/analyze.md, "Idle waits"). Bounded: per second of
// stream time only the slowest waits are kept, for a window of seconds; processes beyond a cap
// share a row.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/wait_headline.h"
#include "exporters/watched_accounting.h"
#include "incremental/span_tracker.h"

namespace waitpath {

struct TriageOptions {
  int64_t window_ns = 10'000'000'000;  // "recent": ended in the last 10 s of stream time
  int64_t min_wait_ns = 0;             // --min-wait
  uint32_t states = 0;                 // --state: headline states shown (bit per Leaf; 0: all)
  size_t slowest_per_second = 64;      // waits kept per second (the screen shows fewer)
  size_t max_processes = 200;          // rows; the rest are summed as "other"
};

struct TriageWait {
  int64_t end = 0, duration = 0;
  Leaf leaf = Leaf::kUnknown;  // the headline's state
  std::string who;             // "client/wrk 1000" (host/comm tid)
  std::string where;           // "db/postgres": who holds most of the headline's state
  std::string headline;        // "disk 55% on db/postgres (network 15%)"
  // Slowest(): waits of the same task, state and place folded into the slowest of them.
  uint32_t count = 1;
};

// A request: a span without a parent (its children are pieces of it, in its path).
struct TriageRequest {
  int64_t end = 0, duration = 0;
  std::string operation;  // "client:checkout" (host:name)
  std::string headline;   // "disk 52% on db/postgres (network 20%)", across hosts
};

// A process's time by state (what its watched threads' paths spent), its waits, and its waits
// on untraced peers (part of `states[network]`).
struct TriageProcess {
  std::string name;  // "host/comm"
  StateVec states;
  uint64_t waits = 0;
  int64_t waited_ns = 0;
  uint64_t untraced_waits = 0;
  int64_t untraced_ns = 0;
  uint64_t for_work_waits = 0;  // a server's waits for its next request (WaitLink::for_work)
  int64_t for_work_ns = 0;

  void Add(const TriageProcess& other);
};

class TriageView : public AccountingSink, public SpanListener {
 public:
  // Registers itself with `accounting`.
  TriageView(WatchedAccounting& accounting, TriageOptions options);

  void OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                   std::span<const PathSegment> path) override;
  void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) override;
  void OnSpan(const ResolvedSpan& span) override;

  // The newest wait end seen (stream time): where the window ends.
  int64_t now() const { return now_; }
  const TriageOptions& options() const { return options_; }
  // The slowest waits that ended in the window (recent) or since the start, slowest first
  // (ties in time order); repeats of one path (the same task, headline state and place) are
  // one row, the slowest, with their count.
  std::vector<TriageWait> Slowest(size_t n, bool recent) const;
  // Each process over the window or since the start, most time first.
  std::vector<TriageProcess> Processes(bool recent) const;
  uint64_t waits_seen() const { return waits_seen_; }
  uint64_t waits_shown() const { return waits_shown_; }
  // The slowest requests that ended in the window (recent) or since the start, slowest first.
  std::vector<TriageRequest> SlowestRequests(size_t n, bool recent) const;
  uint64_t requests_seen() const { return requests_seen_; }

 private:
  static constexpr size_t kSeconds = 64;  // ring of per-second buckets (>= the window)
  struct Second {
    int64_t index = INT64_MIN;             // stream-time second this bucket holds
    std::vector<TriageWait> slowest;       // a min-heap by duration, at most slowest_per_second
    std::vector<TriageProcess> processes;  // by row
    std::vector<TriageRequest> requests;   // a min-heap by duration, like `slowest`
  };

  Second& BucketOf(int64_t ts);
  uint32_t RowOf(Utid u);
  bool InWindow(const Second& s) const;

  WatchedAccounting& accounting_;
  const Engine& engine_;
  TriageOptions options_;
  int64_t now_ = INT64_MIN;
  std::array<Second, kSeconds> seconds_;
  std::vector<TriageWait> slowest_ever_;         // min-heap
  std::vector<TriageRequest> requests_ever_;     // min-heap
  std::vector<TriageProcess> totals_;            // by row
  std::unordered_map<uint64_t, uint32_t> rows_;  // (host << 32 | comm) -> row
  uint64_t waits_seen_ = 0, waits_shown_ = 0, requests_seen_ = 0;
};

}  // namespace waitpath
