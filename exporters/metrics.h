// The Prometheus exporter: the active-path counters (a prometheus::Registry) and the
// pipeline-health metrics (a Collectable over the data-quality table), fed on the engine thread
// (waits, batches, engine figures) and by other components through health(); scraped through
// collectable() by a MetricsServer, or written once as text.
//
// Scrapes never block the engine for long and never read engine state:
// - the active-path series are atomics, incremented on the engine thread as the accounting
//   hands out each piece; prometheus-cpp's family lock is taken by the engine only to create
//   a series (a bounded number of times: labels are bounded);
// - the engine's figures are copied on the engine thread (ObserveEngine) into a snapshot, read
//   from the engine through const accessors only; a scrape builds the health families from
//   the latest snapshot. The engine holds the snapshot's lock only to copy a few numbers in.
// A scrape sees each series atomically, not all series at one instant: a scrape during a
// wait's accounting may see some states of it.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "exporters/metrics_active_path.h"
#include "exporters/metrics_health.h"
#include "exporters/metrics_requests.h"
#include "exporters/wait_capture.h"
#include "exporters/watched_accounting.h"
#include "incremental/engine.h"
#include "model/batch.h"

namespace waitpath {

struct MetricsOptions {
  size_t max_processes = 50;  // process label values per family; later ones count as `other`
  // The active-path families label watched tasks (and who their path went through) by their
  // cgroup (`cgroup`, `blamed_cgroup`: kmod/ events) instead of their process name.
  bool label_by_cgroup = false;
};

class MetricsExporter : public WaitListener {
 public:
  // The active-path counters are a sink of `accounting` (whose host names label them). The
  // engine is only read, through its const accessors.
  MetricsExporter(const Engine& engine, WatchedAccounting& accounting, MetricsOptions options);

  // Engine thread.
  void OnWait(const ResolvedWait& wait) override;
  void ObserveBatch(const Batch& batch);
  // Snapshots the engine's figures (memory, evictions, packets, waits, lag) for the next
  // scrapes. `wall_now_ns` is the reference for stream lag in live mode; offline, lag is
  // behind the most advanced host.
  void ObserveEngine(std::optional<int64_t> wall_now_ns = std::nullopt);
  // After the input ended (and the accounting finished): the final figures.
  void Finish();

  // A host of the accounting not known yet (ids follow the engine's).
  void AddHost(const std::string& name);
  // The just-in-time captures' counts (live --capture-dir): waitpath_captures_total{outcome}.
  void ObserveCaptures(const CaptureCounters& counts);

  // The request metrics: give them the engine's spans (SpanFanout).
  SpanListener* requests() { return &requests_; }

  // Any thread.
  PipelineHealthMetrics& health() { return *health_; }
  // Everything /metrics serves (the health families, then the active-path ones): give it to
  // MetricsServer::Start.
  const std::shared_ptr<prometheus::Collectable>& collectable() const { return collectable_; }
  // The text exposition format (what /metrics serves).
  void WriteText(std::ostream& out) const;

 private:
  const Engine& engine_;
  std::shared_ptr<prometheus::Registry> registry_;  // the active-path families
  std::shared_ptr<PipelineHealthMetrics> health_;
  std::shared_ptr<prometheus::Collectable> collectable_;  // both
  ActivePathMetrics active_path_;
  RequestMetrics requests_;
  // Engine thread only: host names (by engine id), waits per host (counted as they resolve),
  // whether each host's input ended, and the snapshot being filled (its buffers reused from one
  // call to the next).
  std::vector<std::string> names_;
  std::vector<uint64_t> waits_by_host_;
  std::vector<bool> ended_;
  // Per host: when its last analysed replayed event was emitted (ReaderCounters::emitted_ns;
  // 0: not a replayed host). A replay's events carry their original times, years before now.
  std::vector<int64_t> emitted_ns_;
  CaptureCounters captures_seen_;
  std::vector<prometheus::Counter*> capture_series_;  // in CaptureCounters' order
  EngineHealthSnapshot snapshot_;
};

}  // namespace waitpath
