// Just-in-time capture of slow waits and requests (`live --capture-dir`, docs/capture.md): when
// a watched wait lasts at least --capture-min-wait, or a request (an application span, docs/
// requests.md) at least --capture-min-request, the trace of every host on its path over
// [start - margin, end + margin] is cut from the relayd's stored trace files (whole CTF
// packets, ctf/ctf_cut.h) into a capture directory, with `wait.json` (the wait or span record,
// the hosts, their clock transforms). Captures are bounded in number per hour and in bytes on
// disk (the oldest go first); every capture, skip and removal is counted.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "exporters/watched_accounting.h"
#include "stream/clock_sync.h"

namespace waitpath {

struct CaptureOptions {
  std::string dir;                    // where capture directories go
  int64_t min_wait_ns = 0;            // waits at least this long are captured
  int64_t margin_ns = 1'000'000'000;  // of trace kept before and after the wait
  size_t max_bytes = 1024u << 20;     // all captures together; the oldest go first
  uint32_t max_per_hour = 60;         // more in the last hour are skipped
  int64_t min_request_ns = -1;        // spans at least this long are captured; -1: none
  // Instead (when > 0): spans slower than this quantile of their operation's recent durations
  // (after 100 of them), e.g. 0.99 for --capture-min-request p99.
  double request_quantile = 0;
};

// The CTF trace directories where a host's trace is stored (the relayd's output), empty when
// not found.
using TraceLocator = std::function<std::vector<std::string>(const std::string& host)>;

struct CaptureCounters {
  uint64_t written = 0;
  uint64_t skipped_rate = 0;         // over --capture-max-per-hour
  uint64_t skipped_no_trace = 0;     // a host's stored trace not found
  uint64_t skipped_failed = 0;       // cutting or writing failed (said on stderr)
  uint64_t skipped_too_big = 0;      // one capture larger than --capture-max-mb
  uint64_t skipped_overwritten = 0;  // the window's start no longer stored (rotated away)
  uint64_t removed = 0;              // old captures removed under --capture-max-mb
};

// A capture made: its directory and window (reference clock), for its timeline.
struct CaptureMade {
  std::string dir;
  int64_t from_ns, to_ns;
};

class WaitCapture : public AccountingSink, public SpanListener {
 public:
  // Registers itself with `accounting`. `warn`: one line per failure (stderr by default).
  WaitCapture(WatchedAccounting& accounting, CaptureOptions options, TraceLocator locate,
              std::function<void(const std::string&)> warn = {});

  // Called on each capture once its traces and wait.json are written, before it is put in
  // place (the timeline, app/capture_flags.h): what it adds counts towards the caps.
  void SetFinisher(std::function<void(const CaptureMade& capture)> finish) {
    finish_ = std::move(finish);
  }

  // The hosts' current transforms to the reference clock (by host name).
  void SetClocks(const std::vector<HostClock>& clocks) { clocks_ = clocks; }

  // A host's trace clock minus its event times at `ts` (Batch::clock_offset_ns): where they
  // differ (a replayed host), windows are mapped through the nearest sample before cutting.
  void ObserveClockOffset(uint16_t host, int64_t ts, int64_t offset_ns);

  void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) override;
  void OnAccounted(Utid, int64_t, int64_t, const StateVec&, std::span<const PathSegment>) override {
  }
  // Register with the engine's span listeners for request captures.
  void OnSpan(const ResolvedSpan& span) override;

  // Cuts the pending captures whose window ended before `now_ns` (reference clock: the
  // engine's newest time) by `settle_ns` (the time the relayd needs to store it); all of them
  // when `now_ns` is INT64_MAX (at the end). `wall_ns`: the time now (rate limit, names).
  std::vector<CaptureMade> Poll(int64_t now_ns, int64_t settle_ns, int64_t wall_ns);

  const CaptureCounters& counters() const { return counters_; }
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::string kind;    // "wait" or "span": the record's key in wait.json
    std::string record;  // the wait or span record (JSON, as `--json` writes it)
    std::string task;    // host-tid (a span: host-operation-id), for the directory's name
    std::vector<uint16_t> hosts;
    int64_t from_ns, to_ns;  // reference clock
  };

  // The last 1,000 span durations of one (host, operation), in arrival order and sorted (a
  // few microseconds per span to keep sorted, which requests can afford).
  struct RecentDurations {
    std::deque<int64_t> arrival;
    std::vector<int64_t> sorted;
  };

  // True when `ns` is above the quantile of the operation's recent spans (after 100 of them).
  bool SlowerThanUsual(uint16_t host, uint32_t operation, int64_t ns);
  void Queue(Pending p);
  // Hosts of the path's segments not in `hosts` yet, in order.
  void AddPathHosts(std::span<const PathSegment> path, std::vector<uint16_t>* hosts) const;
  bool Cut(const Pending& p, const std::string& out, uint64_t* bytes);
  void Trim();  // removes the oldest captures past max_bytes

  WatchedAccounting& accounting_;
  const Engine& engine_;
  CaptureOptions options_;
  TraceLocator locate_;
  std::function<void(const std::string&)> warn_;
  std::function<void(const CaptureMade&)> finish_;
  std::vector<HostClock> clocks_;
  // Per host: (event time, clock offset) samples where the offset changed, oldest first.
  std::vector<std::deque<std::pair<int64_t, int64_t>>> offsets_;
  std::map<std::pair<uint16_t, uint32_t>, RecentDurations> request_durations_;
  std::deque<Pending> pending_;
  std::deque<int64_t> recent_;  // wall times of the captures of the last hour
  uint64_t sequence_ = 0;
  CaptureCounters counters_;
};

}  // namespace waitpath
