// Pipeline-health gauges and counters: what was read and lost per host, stream lag, relayd
// reconnections, clock synchronization, packet matching, engine memory. Every method may be
// called from any thread (reader, live session, sync and engine threads alike): prometheus-cpp
// series are atomic and Family::Add (which returns the existing series for known labels) locks
// its family.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "live/batch.h"

namespace waitpath {

class PipelineHealthMetrics {
 public:
  // The values of waitpath_clock_sync_quality's `quality` label (DESIGN.md, clock sync).
  static constexpr std::string_view kSyncQualities[] = {"incomplete", "approximate", "accurate",
                                                        "fail"};

  explicit PipelineHealthMetrics(prometheus::Registry& registry);

  // Reader figures are cumulative (live/batch.h): the counters follow them by difference.
  void ObserveReader(const std::string& host, const ReaderCounters& counters);
  // How far the host's analysed stream is behind (live: the wall clock; offline: the most
  // advanced host of the merge).
  void SetStreamLag(const std::string& host, double seconds) { StreamLag(host).Set(seconds); }
  prometheus::Gauge& StreamLag(const std::string& host);
  // A relayd connection reattached after it was lost.
  void AddRelaydReconnect(const std::string& relayd);
  // Attempts to reattach a lost relayd connection that failed.
  void AddRelaydReconnectFailures(const std::string& relayd, uint64_t n);
  // `quality` is one of kSyncQualities (others are ignored): that series is 1, the other
  // three 0. Accuracy is the bound of the host's transform, when there is one.
  void SetClockSync(const std::string& host, std::string_view quality,
                    std::optional<double> accuracy_seconds);
  void AddPacketsMatched(const std::string& host, const std::string& peer, uint64_t n);
  void AddPacketsExpired(const std::string& host, uint64_t n);
  void SetPendingCrossHostWaits(double n) { pending_cross_host_.Set(n); }
  void SetHistoryBytes(double bytes) { history_bytes_.Set(bytes); }
  void AddHistoryEvictions(uint64_t segments) { history_evictions_.Increment(segments); }
  void AddHistoryEvictedReads(uint64_t reads) { evicted_reads_.Increment(reads); }
  // Lost sched_switches inferred from events' own current task; ended tasks whose ids were
  // reused (docs/architecture.md, "Task lifecycle").
  void AddInferredSwitches(uint64_t n) { inferred_switches_.Increment(static_cast<double>(n)); }
  void AddTasksReleased(uint64_t n) { tasks_released_.Increment(static_cast<double>(n)); }
  // Live: a host more than --max-lag behind the others; its events dropped for it.
  void AddLateEventsDropped(const std::string& host, uint64_t n);
  void SetHostLagging(const std::string& host, bool lagging);
  // Resolved waits of a host, every task (not only watched ones).
  prometheus::Counter& WaitsResolved(const std::string& host);

 private:
  struct HostReader {
    prometheus::Counter *events, *discarded, *regressions;
    ReaderCounters last;
  };

  prometheus::Family<prometheus::Counter>& events_;
  prometheus::Family<prometheus::Counter>& discarded_;
  prometheus::Family<prometheus::Counter>& regressions_;
  prometheus::Family<prometheus::Gauge>& lag_;
  prometheus::Family<prometheus::Counter>& reconnects_;
  prometheus::Family<prometheus::Counter>& reconnect_failures_;
  prometheus::Family<prometheus::Gauge>& sync_quality_;
  prometheus::Family<prometheus::Gauge>& sync_accuracy_;
  prometheus::Family<prometheus::Counter>& matched_;
  prometheus::Family<prometheus::Counter>& expired_;
  prometheus::Family<prometheus::Counter>& waits_;
  prometheus::Gauge& pending_cross_host_;
  prometheus::Gauge& history_bytes_;
  prometheus::Counter& history_evictions_;
  prometheus::Counter& evicted_reads_;
  prometheus::Counter& inferred_switches_;
  prometheus::Counter& tasks_released_;
  prometheus::Family<prometheus::Counter>& late_dropped_;
  prometheus::Family<prometheus::Gauge>& lagging_;

  // Only this object's own bookkeeping (last cumulative values); a scrape never takes it.
  std::mutex mutex_;
  std::map<std::string, HostReader, std::less<>> readers_;
};

}  // namespace waitpath
