// A timeline of watched tasks in the Chrome trace-event JSON format, which ui.perfetto.dev and
// chrome://tracing open (docs/timeline.md): per host a process; per CPU a track of the tasks
// that ran and one of the interrupts; per watched task a track of its accounted states, each
// slice naming the task its active path was at; each reported wait (at least --min-wait) a
// slice over its states, with flow arrows for the wake-ups and packets on its path. Every
// time is in the reference clock, as the accounting's.
//
// Bounded: only what overlaps the window is kept, and past `max_bytes` (estimated while
// recording, checked exactly while writing) Write() refuses with an error instead.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/cpu_activity.h"
#include "exporters/watched_accounting.h"

namespace waitpath {

struct TimelineOptions {
  TimelineWindow window;
  int64_t min_wait_ns = 0;  // waits at least this long are drawn as reported waits
  size_t max_bytes = 64u << 20;
};

class TimelineWriter : public AccountingSink {
 public:
  // Registers itself with `accounting`.
  TimelineWriter(WatchedAccounting& accounting, TimelineOptions options);

  // The host whose clock the times are in (default: the first).
  void SetReference(std::string host) { reference_ = std::move(host); }
  // The per-CPU recorder the pipeline's sink must feed every event (app/engine_feed.h).
  CpuActivity& cpus() { return cpus_; }

  void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) override;
  void OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                   std::span<const PathSegment> path) override;

  // After the input ended and the accounting finished. False, with `error` (one line naming
  // the size and what to do), when the timeline is larger than max_bytes; nothing is written
  // then.
  bool Write(std::ostream& out, std::string* error);

  // Figures for the documentation and tests.
  size_t state_slices() const { return states_.size(); }
  size_t flows() const { return flows_.size(); }

 private:
  // Who a slice names, resolved when it is recorded: Utids are reused later.
  struct Who {
    uint16_t host;
    int32_t tid;
    uint32_t comm;
  };
  struct StateSlice {
    int64_t start, end;
    Who track;  // the watched task
    Who on;     // the task its path was at
    Leaf leaf;
  };
  struct WaitSlice {
    int64_t start, end;  // clipped
    int64_t duration;    // not clipped
    Who track;
    Who waker;  // tid -1: none
    std::string cause;
  };
  struct Flow {
    uint16_t from_host;
    int32_t from_tid;  // the task that woke or sent; placed on the CPU it ran on; -1: an
                       // interrupt (timer, disk...) woke it: placed on the interrupt's track
    int64_t from_ts;
    Who to;  // the watched task's track
    int64_t to_ts;
    bool packet;
  };

  struct Output;  // what Write() builds (timeline_writer.cc)

  Who WhoIs(Utid u) const;
  int64_t Origin() const;
  void DrawTracks(Output& o) const;
  void DrawCpus(Output& o) const;
  void DrawWatched(Output& o) const;  // the watched tasks' states and reported waits
  void DrawFlows(Output& o) const;
  void NoteThread(const Who& w);
  bool Reserve(size_t bytes);  // false (and overflowed_) past the cap

  WatchedAccounting& accounting_;
  const Engine& engine_;
  TimelineOptions options_;
  CpuActivity cpus_;
  std::vector<StateSlice> states_;
  std::vector<WaitSlice> waits_;
  std::vector<Flow> flows_;
  std::vector<Who> threads_;                             // watched tasks with a track (latest name)
  std::unordered_map<uint64_t, uint32_t> thread_index_;  // (host << 32 | tid) -> threads_
  std::string reference_;
  size_t estimated_bytes_ = 0;
  bool overflowed_ = false;
  int64_t overflow_at_ = 0;  // the time recording stopped at
};

}  // namespace waitpath
