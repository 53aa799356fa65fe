#include "exporters/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace waitpath {
namespace {

// Several collectables served as one: their families in order.
class Concatenation : public prometheus::Collectable {
 public:
  explicit Concatenation(std::vector<std::shared_ptr<prometheus::Collectable>> parts)
      : parts_(std::move(parts)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    for (const auto& part : parts_) {
      std::vector<prometheus::MetricFamily> families = part->Collect();
      std::move(families.begin(), families.end(), std::back_inserter(out));
    }
    return out;
  }

 private:
  std::vector<std::shared_ptr<prometheus::Collectable>> parts_;
};

}  // namespace

MetricsExporter::MetricsExporter(const Engine& engine, WatchedAccounting& accounting,
                                 MetricsOptions options)
    : engine_(engine),
      registry_(std::make_shared<prometheus::Registry>()),
      health_(std::make_shared<PipelineHealthMetrics>()),
      collectable_(std::make_shared<Concatenation>(
          std::vector<std::shared_ptr<prometheus::Collectable>>{health_, registry_})),
      active_path_(*registry_, accounting, options.max_processes, options.label_by_cgroup),
      requests_(*registry_, engine, accounting.hosts(), options.max_processes) {
  for (const std::string& name : accounting.hosts()) {
    names_.push_back(name);
    waits_by_host_.push_back(0);
    ended_.push_back(false);
    emitted_ns_.push_back(0);
  }
  ObserveEngine();  // every host has its series from the start
  prometheus::BuildGauge()
      .Name("waitpath_build_info")
      .Help("The running waitpath's version (value 1)")
      .Register(*registry_)
      .Add({{"version", WAITPATH_VERSION}})
      .Set(1);
}

void MetricsExporter::ObserveCaptures(const CaptureCounters& counts) {
  static constexpr const char* kOutcomes[] = {
      "written",         "skipped_rate", "skipped_no_trace",   "skipped_failed",
      "skipped_too_big", "removed",      "skipped_overwritten"};
  if (capture_series_.empty()) {
    auto& family = prometheus::BuildCounter()
                       .Name("waitpath_captures_total")
                       .Help(
                           "Just-in-time captures of slow waits: written, skipped (by reason), "
                           "and old ones removed under --capture-max-mb")
                       .Register(*registry_);
    for (const char* outcome : kOutcomes)
      capture_series_.push_back(&family.Add({{"outcome", outcome}}));
  }
  const uint64_t now[] = {
      counts.written,         counts.skipped_rate, counts.skipped_no_trace,   counts.skipped_failed,
      counts.skipped_too_big, counts.removed,      counts.skipped_overwritten};
  const uint64_t seen[] = {captures_seen_.written,
                           captures_seen_.skipped_rate,
                           captures_seen_.skipped_no_trace,
                           captures_seen_.skipped_failed,
                           captures_seen_.skipped_too_big,
                           captures_seen_.removed,
                           captures_seen_.skipped_overwritten};
  for (size_t i = 0; i < std::size(kOutcomes); ++i) {
    if (now[i] > seen[i]) capture_series_[i]->Increment(static_cast<double>(now[i] - seen[i]));
  }
  captures_seen_ = counts;
}

void MetricsExporter::AddHost(const std::string& name) {
  names_.push_back(name);
  waits_by_host_.push_back(0);
  ended_.push_back(false);
  emitted_ns_.push_back(0);
  ObserveEngine();
}

void MetricsExporter::OnWait(const ResolvedWait& wait) {
  const uint16_t host = engine_.tasks()[wait.task].host;
  if (host < waits_by_host_.size()) ++waits_by_host_[host];
}

void MetricsExporter::ObserveBatch(const Batch& batch) {
  if (batch.host >= ended_.size()) return;
  health_->ObserveReader(names_[batch.host], batch.counters);
  if (batch.counters.emitted_ns != 0) emitted_ns_[batch.host] = batch.counters.emitted_ns;
  if (batch.last) ended_[batch.host] = true;
}

void MetricsExporter::ObserveEngine(std::optional<int64_t> wall_now_ns) {
  EngineHealthSnapshot& s = snapshot_;
  const size_t hosts = names_.size();
  s.hosts = names_;
  s.waits_resolved = waits_by_host_;

  const EngineCounters c = engine_.counters();
  s.history_bytes = engine_.history_bytes();
  s.history_evictions = c.evicted_segments;
  s.history_evicted_reads = engine_.resolver().counters().evicted_reads;
  s.inferred_switches = c.inferred_switches_by_host;
  s.tasks_released = c.tasks_released;
  const SpanCounters& spans = engine_.spans().counters();
  s.span_input_errors = spans.unmatched_ends + spans.unmatched_handoffs + spans.reused_ids +
                        spans.dropped_full + spans.thread_ended + spans.without_thread;

  const PacketMatcherCounters& packets = engine_.packets().counters();
  s.packets_matched = packets.matched_by_pair;
  s.packets_expired = packets.expired_by_host;

  int64_t reference = std::numeric_limits<int64_t>::min();
  if (wall_now_ns) {
    reference = *wall_now_ns;
  } else {
    for (uint16_t h = 0; h < hosts; ++h) reference = std::max(reference, engine_.host_now(h));
  }
  s.stream_lag_seconds.resize(hosts);
  for (uint16_t h = 0; h < hosts; ++h) {
    // A replayed host is as far behind as the emission of its last analysed event.
    const int64_t now = wall_now_ns && emitted_ns_[h] != 0 ? emitted_ns_[h] : engine_.host_now(h);
    // A host whose input ended was read completely: nothing of it is behind.
    const bool behind = !ended_[h] && now != std::numeric_limits<int64_t>::min();
    s.stream_lag_seconds[h] =
        behind ? static_cast<double>(std::max<int64_t>(0, reference - now)) * 1e-9 : 0.0;
  }
  health_->Publish(s);
}

void MetricsExporter::Finish() {
  ObserveEngine();
}

void MetricsExporter::WriteText(std::ostream& out) const {
  prometheus::TextSerializer().Serialize(out, collectable_->Collect());
}

}  // namespace waitpath
