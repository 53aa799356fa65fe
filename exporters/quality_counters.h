// The data-quality counters: one table of every figure that says how complete and how healthy
// an analysis' input and pipeline are (what was read, lost, clamped, inferred, dropped,
// evicted...). It drives `waitpath stats` (text and --json), the pipeline-health Prometheus
// families (exporters/metrics_health.h) and their documentation (docs/metrics.md and
// docs/reading.md hold tables generated from it; a test checks they are current).
//
// Like Perfetto's stats table (src/trace_processor/storage/stats.h): one X-macro row per
// counter, and everything else derived from it. A row is
//
//   X(id, stats_key, unit, metric, type, labels, scope, severity, source, help, doc)
//
//   id         QualityCounter enumerator
//   stats_key  its key in `waitpath stats --json` (and row name in the text form); "" if
//              `stats` does not report it (it reads, it does not analyse)
//   unit       what follows the number in `stats`' text form ("" for nothing)
//   metric     its Prometheus family; "" if it is not exported
//   type       kCounter, kGauge, or kNone (not exported)
//   labels     the family's label names, comma-separated, in exposition order
//   scope      kGlobal, kHost (one series per host), kRelayd (per relay daemon) or kShard (only a
//              shard of a fleet serves it, `live --shard`: its series are labelled `shard`, added
//              to every series a shard serves, docs/scale.md)
//   severity   kInfo (a figure of the input), kDataLoss (input lost or damaged: results may be
//              incomplete), kError (something failed)
//   source     the part of waitpath that counts it
//   help       the family's HELP text (what a scrape shows)
//   doc        what it means, for the documentation (Markdown)
//
// Adding a counter: a row here (the docs test then asks for the regenerated tables), its
// value in stats_report.cc (StatsValue) if it has a stats key, and in metrics_health.cc if it
// has a metric (a setter for other components, or the engine snapshot).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <iterator>
#include <optional>
#include <string_view>

namespace waitpath {

enum class QualityScope { kGlobal, kHost, kRelayd, kShard };
enum class QualitySeverity { kInfo, kDataLoss, kError };
enum class QualitySource {
  kReader,         // live/: the host's reader thread (Batch::counters)
  kMerger,         // stream/time_merger: hosts merged in reference time (live)
  kRelayd,         // live/relayd_link: the reader's relay-daemon connection
  kClockSync,      // clock synchronization from packets
  kEngine,         // incremental/engine
  kPacketMatcher,  // incremental/packet_matcher
  kResolver,       // incremental/active_path_resolver
  kHistory,        // incremental/history_store
  kShard,          // fleet/shard_peers: one shard of a fleet and its bus (docs/scale.md)
};
enum class QualityMetricType { kNone, kCounter, kGauge };

// clang-format off
#define WAITPATH_QUALITY_COUNTERS(X)                                                              \
  X(kEvents, "events", "", "waitpath_events_total", kCounter, "host", kHost, kInfo, kReader,     \
    "Trace events read per host, of every class",                                                \
    "events read, of every class")                                                               \
  X(kUnknown, "unknown", "of classes the analysis does not use, skipped", "", kNone, "", kHost,  \
    kInfo, kReader, "",                                                                          \
    "events of classes the analysis does not use, skipped after one pointer comparison")         \
  X(kRegressions, "regressions", "timestamps clamped", "waitpath_timestamp_regressions_total",   \
    kCounter, "host", kHost, kDataLoss, kReader,                                                 \
    "Event timestamps that went backwards and were clamped",                                     \
    "timestamps that went backwards and were clamped")                                           \
  X(kInferredSwitches, "inferred_switches",                                                      \
    "switches (events naming another current task than the last switch)",                        \
    "waitpath_inferred_switches_total", kCounter, "host", kHost, kDataLoss, kEngine,             \
    "Events naming another current task than the last sched_switch: a lost switch inferred",     \
    "events that named another current task than the last `sched_switch` on their CPU: a lost "  \
    "switch inferred (docs/reading.md)")                                                         \
  X(kDamaged, "damaged", "holes skipped in damaged streams (each a loss on its CPU)", "", kNone,  \
    "", kHost, kDataLoss, kReader, "",                                                           \
    "holes in damaged trace files skipped (a bad packet, a truncated or garbled stream): each is "\
    "a `lost` marker on its CPU (docs/reading.md, hostile input)")                              \
  X(kDiscarded, "discarded", "", "waitpath_events_discarded_total", kCounter, "host", kHost,     \
    kDataLoss, kReader,                                                                          \
    "Events the tracer reported as lost per host",                                               \
    "events the tracer reported as lost (ring buffers full): the CPU's state is unknown until "  \
    "its next switch; `stats --json` also has them per CPU (`discarded_by_cpu`)")                \
  X(kStreamLag, "", "", "waitpath_stream_lag_seconds", kGauge, "host", kHost, kInfo, kEngine,    \
    "How far the host's analysed stream is behind (live: the wall clock; offline: the most "     \
    "advanced host)",                                                                            \
    "live: how far the host's analysed stream is behind the wall clock (a replayed host, as in " \
    "the demo: behind when its events were emitted); offline: behind the most advanced host of " \
    "the merge; 0 once a host's input ended")                                                    \
  X(kRelaydReconnects, "", "", "waitpath_relayd_reconnects_total", kCounter, "relayd", kRelayd,  \
    kDataLoss, kRelayd,                                                                          \
    "Relay daemon connections reattached after they were lost",                                  \
    "live: relay-daemon connections reattached after they were lost (one per reader and "        \
    "outage, however many attempts it took); 0 from the start, as "                              \
    "`waitpath_relayd_reconnect_failures_total`, so that alert rules have a series")             \
  X(kRelaydReconnectFailures, "", "", "waitpath_relayd_reconnect_failures_total", kCounter,      \
    "relayd", kRelayd, kError, kRelayd,                                                          \
    "Attempts to reattach a lost relay daemon connection that failed",                           \
    "live: attempts to reattach a lost relay-daemon connection that failed (they grow while "    \
    "the relayd stays away: 250 ms after the loss, then doubling to one every 5 s)")             \
  X(kClockSyncQuality, "", "", "waitpath_clock_sync_quality", kGauge, "host,quality", kHost,     \
    kInfo, kClockSync,                                                                           \
    "1 for the host's current clock synchronization quality, else 0",                            \
    "1 for the host's current quality (`incomplete`, `approximate`, `accurate`, `fail`; "        \
    "`reference` for the host the others are mapped to, accuracy 0), 0 for the four others")     \
  X(kClockSyncAccuracy, "", "", "waitpath_clock_sync_accuracy_seconds", kGauge, "host", kHost,   \
    kInfo, kClockSync,                                                                           \
    "Accuracy bound of the host's clock transform",                                              \
    "accuracy bound of the host's clock transform")                                              \
  X(kPacketsMatched, "", "", "waitpath_packets_matched_total", kCounter, "host,peer", kHost,     \
    kInfo, kPacketMatcher,                                                                       \
    "Received packets matched with their send, by receiving host and sender host (peer)",        \
    "received packets matched with their send (`host` received, `peer` sent)")                   \
  X(kPacketsExpired, "", "", "waitpath_packets_expired_total", kCounter, "host", kHost, kInfo,   \
    kPacketMatcher,                                                                              \
    "Sent packets never matched with a receive, dropped after the expiry",                       \
    "sends never matched, dropped after the expiry (10 s)")                                      \
  X(kPendingCrossHostWaits, "", "", "waitpath_pending_cross_host_waits", kGauge, "", kGlobal,    \
    kInfo, kEngine,                                                                              \
    "Cross-host waits waiting for their sender's host to progress",                              \
    "cross-host waits waiting for the sender's host to progress")                                \
  X(kHistoryBytes, "", "", "waitpath_history_bytes", kGauge, "", kGlobal, kInfo, kHistory,       \
    "Memory held by retained task histories",                                                    \
    "memory held by retained task histories (whole allocated chunks, what `--max-history-mb` "   \
    "bounds)")                                                                                   \
  X(kHistoryEvictions, "", "", "waitpath_history_evictions_total", kCounter, "", kGlobal, kInfo, \
    kHistory,                                                                                    \
    "History segments evicted (retention window or byte cap)",                                   \
    "history segments evicted (retention window or byte cap)")                                   \
  X(kTasksReleased, "", "", "waitpath_tasks_released_total", kCounter, "", kGlobal, kInfo,       \
    kEngine,                                                                                     \
    "Ended tasks whose memory was reclaimed and id reused",                                      \
    "ended tasks whose memory was reclaimed and id reused (docs/architecture.md)")               \
  X(kLateEventsDropped, "", "", "waitpath_late_events_dropped_total", kCounter, "host", kHost,   \
    kDataLoss, kMerger,                                                                          \
    "Live: events of a host lagging more than --max-lag behind the others, dropped as lost",     \
    "live: events of a host lagging more than `--max-lag` behind the others, dropped as lost")   \
  X(kHostLagging, "", "", "waitpath_host_lagging", kGauge, "host", kHost, kDataLoss, kMerger,    \
    "Live: 1 while the host lags more than --max-lag behind the others",                         \
    "live: 1 while the host lags more than `--max-lag` behind the others (its late events are "  \
    "dropped)")                                                                                  \
  X(kHistoryEvictedReads, "", "", "waitpath_history_evicted_reads_total", kCounter, "", kGlobal, \
    kDataLoss, kResolver,                                                                        \
    "Path queries that reached into evicted history (counted unknown)",                          \
    "path queries that reached evicted history (that part counted `unknown`)")                   \
  X(kWaitsResolved, "", "", "waitpath_waits_resolved_total", kCounter, "host", kHost, kInfo,     \
    kEngine,                                                                                     \
    "Waits resolved per host (every task, watched or not)",                                      \
    "waits resolved, every task (watched or not)")                                               \
  X(kSpanInputErrors, "", "", "waitpath_span_input_errors_total", kCounter, "", kGlobal,        \
    kDataLoss, kEngine,                                                                          \
    "Application span events that could not be used (unmatched, reused ids, dropped)",           \
    "application span events that could not be used (docs/requests.md, bad span input): ends "   \
    "and handoffs without a begin, reused ids, begins over the cap, spans of threads that "      \
    "ended, events without a thread context; each reason is in the `span_input` record")        \
  X(kShardEdges, "", "", "waitpath_shard_edges_total", kCounter, "shard,kind", kShard,           \
    kDataLoss, kShard, "Edge records of this shard, by what became of them",                     \
    "shards: edge records (docs/scale.md) by `kind`: `published` (this shard's sends to other "   \
    "shards), `received`, `matched` with a receive; lost: `expired` (never matched), `stale` (the " \
    "same packet key from another time), `bad` (undecodable)")                                    \
  X(kShardReceivesWithoutEdge, "", "", "waitpath_shard_receives_without_edge_total", kCounter,    \
    "shard", kShard, kDataLoss, kShard,                                                          \
    "Receives from a publishing shard's address whose edge did not come (their waits are "      \
    "network)",                                                                                  \
    "shards: receives from an address another shard publishes for whose edge did not come: "     \
    "that shard's progress passed them without it (docs/scale.md, \"Progress\"), or the bus "     \
    "was down: their waits are `network`")                                        \
  X(kShardRemoteWaits, "", "", "waitpath_shard_remote_waits_total", kCounter, "shard,kind",      \
    kShard, kDataLoss, kShard,                                                                   \
    "Waits ended by another shard's sender: resolved from its summary, or not (network)",        \
    "shards: waits ended by another shard's sender, `resolved` from its summary or "              \
    "`unresolved` (the summary did not come: left to `network`)")                                \
  X(kShardQueries, "", "", "waitpath_shard_queries_total", kCounter, "shard,kind", kShard, kInfo, \
    kShard, "Other shards' queries for cumulative vectors",                                      \
    "shards: other shards' queries for a task's cumulative vector, `answered` or `unknown` (not "  \
    "in the retained history, or not processed yet)")                                            \
  X(kShardBusEvents, "", "", "waitpath_shard_bus_events_total", kCounter, "shard,kind", kShard,  \
    kError, kShard, "The bus connection: what happened to it",                                   \
    "shards: the bus connection: `publish_failed`, `disconnect`, `reconnect`, `request_failed`")  \
  X(kShardClockResets, "", "", "waitpath_shard_clock_resets_total", kCounter, "shard", kShard,   \
    kInfo, kShard,                                                                               \
    "Shard pairs whose clock sync started over (a clock went back, a long silence, or no line "  \
    "fit)",                                                                                      \
    "shards: shard pairs whose clock sync started over: a peer's clock went back, a time far "   \
    "past the pair's points, or points no line fits (docs/scale.md)")                            \
  X(kShardPeersStalled, "", "", "waitpath_shard_peers_stalled_total", kCounter, "shard,kind",    \
    kShard, kDataLoss, kShard,                                                                   \
    "Other shards (or their hosts) whose progress stopped while a receive waited for them, and " \
    "the receives left unknown",                                                                 \
    "shards: `peers`: other shards, or other shards' hosts never heard of, whose progress did "  \
    "not advance for `--stall-ms` while a receive waited for it (docs/scale.md, \"Progress\"); " \
    "`receives`: the receives from them whose waits are then `unknown`")
// clang-format on

enum class QualityCounter {
#define WAITPATH_QUALITY_ENUM(id, ...) id,
  WAITPATH_QUALITY_COUNTERS(WAITPATH_QUALITY_ENUM)
#undef WAITPATH_QUALITY_ENUM
};

struct QualityCounterInfo {
  QualityCounter id;
  std::string_view stats_key;
  std::string_view unit;
  std::string_view metric;
  QualityMetricType type;
  std::string_view labels;
  QualityScope scope;
  QualitySeverity severity;
  QualitySource source;
  std::string_view help;
  std::string_view doc;

  bool exported() const { return type != QualityMetricType::kNone; }
  bool in_stats() const { return !stats_key.empty(); }
};

inline constexpr QualityCounterInfo kQualityCounters[] = {
#define WAITPATH_QUALITY_INFO(id, stats_key, unit, metric, type, labels, scope, severity, source, \
                              help, doc)                                                          \
  {QualityCounter::id,                                                                            \
   stats_key,                                                                                     \
   unit,                                                                                          \
   metric,                                                                                        \
   QualityMetricType::type,                                                                       \
   labels,                                                                                        \
   QualityScope::scope,                                                                           \
   QualitySeverity::severity,                                                                     \
   QualitySource::source,                                                                         \
   help,                                                                                          \
   doc},
    WAITPATH_QUALITY_COUNTERS(WAITPATH_QUALITY_INFO)
#undef WAITPATH_QUALITY_INFO
};

inline constexpr size_t kQualityCounterCount = std::size(kQualityCounters);

constexpr const QualityCounterInfo& Info(QualityCounter id) {
  return kQualityCounters[static_cast<size_t>(id)];
}

std::string_view QualityScopeName(QualityScope scope);
std::string_view QualitySeverityName(QualitySeverity severity);
std::string_view QualitySourceName(QualitySource source);
std::string_view QualityMetricTypeName(QualityMetricType type);

// The documentation's tables (Markdown, one row per counter):
// the pipeline-health families (docs/metrics.md): those with a metric, in table order;
void WriteHealthMetricsMarkdown(std::ostream& out);
// the figures of `waitpath stats` (docs/reading.md): those with a stats key.
void WriteStatsCountersMarkdown(std::ostream& out);

}  // namespace waitpath
