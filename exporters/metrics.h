// The Prometheus exporter: a registry holding the active-path counters and the pipeline-health
// metrics, fed on the engine thread (waits, batches, engine figures) and by other components
// through health(); scraped by a prometheus::Exposer or written once as text.
//
// Scrapes never block the engine: a scrape reads atomics through prometheus-cpp's registry
// and family locks, which the engine thread takes only to create a new series (a bounded
// number of times: labels are bounded). The engine figures are copied into gauges on the
// engine thread (ObserveEngine), so a scrape never reads engine state, and this exporter's own
// bookkeeping is never locked by a scrape. A scrape sees each series atomically, not all
// series at one instant: a scrape during a wait's accounting may see some states of it.
#pragma once

#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "exporters/metrics_active_path.h"
#include "exporters/metrics_health.h"
#include "exporters/watched_accounting.h"
#include "incremental/engine.h"
#include "live/batch.h"

namespace waitpath {

struct MetricsOptions {
  size_t max_processes = 50;  // process label values per family; later ones count as `other`
  // The active-path families label watched tasks (and who their path went through) by their
  // cgroup (`cgroup`, `blamed_cgroup`: kmod/ events) instead of their process name.
  bool label_by_cgroup = false;
};

class MetricsExporter : public WaitListener {
 public:
  // The active-path counters are a sink of `accounting` (whose host names label them).
  MetricsExporter(Engine& engine, WatchedAccounting& accounting, MetricsOptions options);

  // Engine thread.
  void OnWait(const ResolvedWait& wait) override;
  void ObserveBatch(const Batch& batch);
  // Copies the engine's figures (memory, evictions, packets, lag). `wall_now_ns` is the
  // reference for stream lag in live mode; offline, lag is behind the most advanced host.
  void ObserveEngine(std::optional<int64_t> wall_now_ns = std::nullopt);
  // After the input ended (and the accounting finished): the final figures.
  void Finish();

  // A host of the accounting not known yet (ids follow the engine's).
  void AddHost(const std::string& name);

  // Any thread.
  PipelineHealthMetrics& health() { return health_; }
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }
  // The text exposition format (what /metrics serves).
  void WriteText(std::ostream& out) const;

 private:
  const std::string& HostName(uint16_t host) const { return accounting_.hosts()[host]; }

  Engine& engine_;
  WatchedAccounting& accounting_;
  std::shared_ptr<prometheus::Registry> registry_;
  PipelineHealthMetrics health_;
  ActivePathMetrics active_path_;
  // Series of each host resolved once: the per-wait and per-batch paths take no lock.
  std::vector<prometheus::Counter*> waits_by_host_;
  std::vector<prometheus::Gauge*> lag_by_host_;
  std::vector<bool> ended_;
  uint64_t evicted_segments_ = 0, evicted_reads_ = 0, matched_ = 0, expired_ = 0;
  uint64_t inferred_switches_ = 0, tasks_released_ = 0;
};

}  // namespace waitpath
