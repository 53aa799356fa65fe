#include "exporters/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>

namespace waitpath {

MetricsExporter::MetricsExporter(Engine& engine, WatchedAccounting& accounting,
                                 MetricsOptions options)
    : engine_(engine),
      accounting_(accounting),
      registry_(std::make_shared<prometheus::Registry>()),
      health_(*registry_),
      active_path_(*registry_, accounting, options.max_processes, options.label_by_cgroup) {
  for (const std::string& name : accounting.hosts()) AddHost(name);
}

void MetricsExporter::AddHost(const std::string& name) {
  waits_by_host_.push_back(&health_.WaitsResolved(name));
  lag_by_host_.push_back(&health_.StreamLag(name));
  ended_.push_back(false);
}

void MetricsExporter::OnWait(const ResolvedWait& wait) {
  const uint16_t host = engine_.tasks()[wait.task].host;
  if (host < waits_by_host_.size()) waits_by_host_[host]->Increment();
}

void MetricsExporter::ObserveBatch(const Batch& batch) {
  if (batch.host >= ended_.size()) return;
  health_.ObserveReader(HostName(batch.host), batch.counters);
  if (batch.last) ended_[batch.host] = true;
}

void MetricsExporter::ObserveEngine(std::optional<int64_t> wall_now_ns) {
  health_.SetHistoryBytes(static_cast<double>(engine_.history_bytes()));
  const uint64_t evicted = engine_.counters().evicted_segments;
  health_.AddHistoryEvictions(evicted - evicted_segments_);
  evicted_segments_ = evicted;
  const uint64_t reads = engine_.resolver().counters().evicted_reads;
  health_.AddHistoryEvictedReads(reads - evicted_reads_);
  evicted_reads_ = reads;
  const EngineCounters& c = engine_.counters();
  health_.AddInferredSwitches(c.inferred_switches - inferred_switches_);
  inferred_switches_ = c.inferred_switches;
  health_.AddTasksReleased(c.tasks_released - tasks_released_);
  tasks_released_ = c.tasks_released;

  // The engine counts packets for all hosts together: only a single host can be labelled.
  // Per-host (and per-peer) counts come with clock sync (issue 5), through health().
  const PacketMatcherCounters& packets = engine_.packets().counters();
  const std::vector<std::string>& hosts = accounting_.hosts();
  if (hosts.size() == 1) {
    health_.AddPacketsMatched(hosts[0], hosts[0], packets.matched - matched_);
    health_.AddPacketsExpired(hosts[0], packets.expired - expired_);
  }
  matched_ = packets.matched;
  expired_ = packets.expired;

  int64_t reference = std::numeric_limits<int64_t>::min();
  if (wall_now_ns) {
    reference = *wall_now_ns;
  } else {
    for (uint16_t h = 0; h < lag_by_host_.size(); ++h)
      reference = std::max(reference, engine_.host_now(h));
  }
  for (uint16_t h = 0; h < lag_by_host_.size(); ++h) {
    const int64_t now = engine_.host_now(h);
    // A host whose input ended was read completely: nothing of it is behind.
    const bool behind = !ended_[h] && now != std::numeric_limits<int64_t>::min();
    lag_by_host_[h]->Set(behind ? static_cast<double>(std::max<int64_t>(0, reference - now)) * 1e-9
                                : 0.0);
  }
}

void MetricsExporter::Finish() {
  ObserveEngine();
}

void MetricsExporter::WriteText(std::ostream& out) const {
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
}

}  // namespace waitpath
