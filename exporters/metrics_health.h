// Pipeline-health metrics: the exported rows of the data-quality table
// (exporters/quality_counters.h), whose names, HELP texts, types and labels they take from it.
// A prometheus::Collectable: a scrape builds the families from the latest values.
//
// Two kinds of values, both behind one mutex that is held only to update or copy them:
// - figures other components report (any thread): reader figures, relayd reconnections, clock
//   sync, late events, pending cross-host waits... through the setters below;
// - the engine's figures, as a snapshot taken on the engine thread (Publish): cumulative
//   counts copied from the engine, never diffed into counters by hand.
// A series present in both (a setter used for what the snapshot also reports) is their sum
// for a counter, the snapshot's value for a gauge.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/quality_counters.h"
#include "model/batch.h"

namespace waitpath {

// The engine's figures at one moment, taken on the engine thread (MetricsExporter::
// ObserveEngine). Counts are cumulative since the engine started.
struct EngineHealthSnapshot {
  std::vector<std::string> hosts;          // by engine host id
  std::vector<uint64_t> waits_resolved;    // per host
  std::vector<double> stream_lag_seconds;  // per host
  uint64_t history_bytes = 0;
  uint64_t history_evictions = 0;
  uint64_t history_evicted_reads = 0;
  std::vector<uint64_t> inferred_switches;  // [host]
  uint64_t tasks_released = 0;
  uint64_t span_input_errors = 0;  // incremental/span_tracker.h SpanCounters, all reasons
  // Packets matched by receiving host and sender (peer) host, and sends expired by sender,
  // by engine host id (incremental/packet_matcher.h).
  std::vector<std::vector<uint64_t>> packets_matched;  // [host][peer]
  std::vector<uint64_t> packets_expired;               // [host]
};

class PipelineHealthMetrics : public prometheus::Collectable {
 public:
  // The values of waitpath_clock_sync_quality's `quality` label: the sync's (docs/sync.md),
  // and `reference` for the host whose clock the others are mapped to (what the view says).
  static constexpr std::string_view kSyncQualities[] = {"incomplete", "approximate", "accurate",
                                                        "fail", "reference"};

  PipelineHealthMetrics();

  // Any thread.
  // Reader figures are cumulative (model/batch.h), a host's across its readers
  // (Pipeline::Arrive): the counters follow them by difference.
  void ObserveReader(const std::string& host, const ReaderCounters& counters);
  // How far the host's analysed stream is behind (live: the wall clock; offline: the most
  // advanced host of the merge).
  void SetStreamLag(const std::string& host, double seconds);
  // The relayd's reconnect counters, at 0 until something happens: alert rules over them
  // (rate, increase) need a series from the start.
  void AddRelayd(const std::string& relayd);
  // A relayd connection reattached after it was lost.
  void AddRelaydReconnect(const std::string& relayd);
  // Attempts to reattach a lost relayd connection that failed.
  void AddRelaydReconnectFailures(const std::string& relayd, uint64_t n);
  // `quality` is one of kSyncQualities (others are ignored): that series is 1, the other
  // four 0. Accuracy is the bound of the host's transform, when there is one.
  void SetClockSync(const std::string& host, std::string_view quality,
                    std::optional<double> accuracy_seconds);
  void AddPacketsMatched(const std::string& host, const std::string& peer, uint64_t n);
  void AddPacketsExpired(const std::string& host, uint64_t n);
  void SetPendingCrossHostWaits(double n);
  void SetHistoryBytes(double bytes);
  void AddHistoryEvictions(uint64_t segments);
  void AddHistoryEvictedReads(uint64_t reads);
  // Lost sched_switches inferred from events' own current task, per host; ended tasks whose
  // ids were reused (docs/architecture.md, "Task lifecycle").
  void AddInferredSwitches(const std::string& host, uint64_t n);
  void AddTasksReleased(uint64_t n);
  // Live: a host more than --max-lag behind the others; its events dropped for it.
  void AddLateEventsDropped(const std::string& host, uint64_t n);
  void SetHostLagging(const std::string& host, bool lagging);
  // Resolved waits of a host, every task (not only watched ones).
  void AddWaitsResolved(const std::string& host, uint64_t n);

  // Engine thread: the engine's latest figures, replacing the previous snapshot.
  void Publish(const EngineHealthSnapshot& snapshot);

  // Any thread (a scrape): one family per exported row of the table that has a series, in
  // the table's order.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  // One series: its label values, in the order of the row's `labels`.
  struct Series {
    std::vector<std::string> labels;
    double value = 0;
  };
  using Values = std::array<std::vector<Series>, kQualityCounterCount>;

  // The series of `counter` with these label values, created at 0 (caller holds mutex_).
  double& At(QualityCounter counter, std::vector<std::string> labels);
  void Add(QualityCounter counter, std::vector<std::string> labels, double n);
  void Set(QualityCounter counter, std::vector<std::string> labels, double value);
  // The snapshot's series, as the table's rows.
  static void AddSnapshot(const EngineHealthSnapshot& snapshot, Values& values);

  mutable std::mutex mutex_;
  Values values_;                                  // from the setters
  std::map<std::string, ReaderCounters> readers_;  // last figures per host
  EngineHealthSnapshot snapshot_;
  bool published_ = false;
};

}  // namespace waitpath
