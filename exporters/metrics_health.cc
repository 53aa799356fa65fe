#include "exporters/metrics_health.h"

#include <algorithm>
#include <utility>

namespace waitpath {
namespace {

std::vector<std::string> LabelNames(std::string_view labels) {
  std::vector<std::string> out;
  while (!labels.empty()) {
    const size_t comma = labels.find(',');
    out.emplace_back(labels.substr(0, comma));
    labels = comma == std::string_view::npos ? std::string_view() : labels.substr(comma + 1);
  }
  return out;
}

prometheus::MetricType Type(QualityMetricType type) {
  return type == QualityMetricType::kGauge ? prometheus::MetricType::Gauge
                                           : prometheus::MetricType::Counter;
}

}  // namespace

PipelineHealthMetrics::PipelineHealthMetrics() {
  // Global series exist from the start (at 0), as the first scrape should show them.
  for (const QualityCounterInfo& c : kQualityCounters) {
    if (c.exported() && c.scope == QualityScope::kGlobal) At(c.id, {});
  }
}

double& PipelineHealthMetrics::At(QualityCounter counter, std::vector<std::string> labels) {
  std::vector<Series>& series = values_[static_cast<size_t>(counter)];
  for (Series& s : series) {
    if (s.labels == labels) return s.value;
  }
  return series.emplace_back(Series{std::move(labels), 0}).value;
}

void PipelineHealthMetrics::Add(QualityCounter counter, std::vector<std::string> labels, double n) {
  std::lock_guard lock(mutex_);
  At(counter, std::move(labels)) += n;
}

void PipelineHealthMetrics::Set(QualityCounter counter, std::vector<std::string> labels,
                                double value) {
  std::lock_guard lock(mutex_);
  At(counter, std::move(labels)) = value;
}

void PipelineHealthMetrics::ObserveReader(const std::string& host, const ReaderCounters& c) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = readers_.try_emplace(host);
  ReaderCounters& last = it->second;
  // A host's figures across all its readers (Pipeline::Arrive): they only grow. One that fell
  // anyway counts from zero.
  auto follow = [&](QualityCounter counter, uint64_t now, uint64_t& before) {
    At(counter, {host}) += static_cast<double>(now >= before ? now - before : now);
    before = now;
  };
  follow(QualityCounter::kEvents, c.events, last.events);
  follow(QualityCounter::kDiscarded, c.discarded, last.discarded);
  follow(QualityCounter::kRegressions, c.regressions, last.regressions);
}

void PipelineHealthMetrics::SetStreamLag(const std::string& host, double seconds) {
  Set(QualityCounter::kStreamLag, {host}, seconds);
}

void PipelineHealthMetrics::AddRelayd(const std::string& relayd) {
  Add(QualityCounter::kRelaydReconnects, {relayd}, 0);
  Add(QualityCounter::kRelaydReconnectFailures, {relayd}, 0);
}

void PipelineHealthMetrics::AddRelaydReconnect(const std::string& relayd) {
  Add(QualityCounter::kRelaydReconnects, {relayd}, 1);
}

void PipelineHealthMetrics::AddRelaydReconnectFailures(const std::string& relayd, uint64_t n) {
  Add(QualityCounter::kRelaydReconnectFailures, {relayd}, static_cast<double>(n));
}

void PipelineHealthMetrics::SetClockSync(const std::string& host, std::string_view quality,
                                         std::optional<double> accuracy_seconds) {
  if (std::find(std::begin(kSyncQualities), std::end(kSyncQualities), quality) ==
      std::end(kSyncQualities)) {
    return;
  }
  std::lock_guard lock(mutex_);
  for (std::string_view q : kSyncQualities) {
    At(QualityCounter::kClockSyncQuality, {host, std::string(q)}) = q == quality ? 1 : 0;
  }
  if (accuracy_seconds) At(QualityCounter::kClockSyncAccuracy, {host}) = *accuracy_seconds;
}

void PipelineHealthMetrics::AddPacketsMatched(const std::string& host, const std::string& peer,
                                              uint64_t n) {
  Add(QualityCounter::kPacketsMatched, {host, peer}, static_cast<double>(n));
}

void PipelineHealthMetrics::AddPacketsExpired(const std::string& host, uint64_t n) {
  Add(QualityCounter::kPacketsExpired, {host}, static_cast<double>(n));
}

void PipelineHealthMetrics::SetPendingCrossHostWaits(double n) {
  Set(QualityCounter::kPendingCrossHostWaits, {}, n);
}

void PipelineHealthMetrics::SetHistoryBytes(double bytes) {
  Set(QualityCounter::kHistoryBytes, {}, bytes);
}

void PipelineHealthMetrics::AddHistoryEvictions(uint64_t segments) {
  Add(QualityCounter::kHistoryEvictions, {}, static_cast<double>(segments));
}

void PipelineHealthMetrics::AddHistoryEvictedReads(uint64_t reads) {
  Add(QualityCounter::kHistoryEvictedReads, {}, static_cast<double>(reads));
}

void PipelineHealthMetrics::AddInferredSwitches(const std::string& host, uint64_t n) {
  Add(QualityCounter::kInferredSwitches, {host}, static_cast<double>(n));
}

void PipelineHealthMetrics::AddTasksReleased(uint64_t n) {
  Add(QualityCounter::kTasksReleased, {}, static_cast<double>(n));
}

void PipelineHealthMetrics::AddLateEventsDropped(const std::string& host, uint64_t n) {
  Add(QualityCounter::kLateEventsDropped, {host}, static_cast<double>(n));
}

void PipelineHealthMetrics::SetHostLagging(const std::string& host, bool lagging) {
  Set(QualityCounter::kHostLagging, {host}, lagging ? 1 : 0);
}

void PipelineHealthMetrics::AddWaitsResolved(const std::string& host, uint64_t n) {
  Add(QualityCounter::kWaitsResolved, {host}, static_cast<double>(n));
}

void PipelineHealthMetrics::Publish(const EngineHealthSnapshot& snapshot) {
  std::lock_guard lock(mutex_);
  snapshot_ = snapshot;  // reuses the previous copy's buffers
  published_ = true;
}

void PipelineHealthMetrics::AddSnapshot(const EngineHealthSnapshot& s, Values& values) {
  // Merges one series into what the setters reported: counters add up, gauges are replaced.
  auto put = [&](QualityCounter counter, std::vector<std::string> labels, double value) {
    std::vector<Series>& series = values[static_cast<size_t>(counter)];
    const bool gauge = Info(counter).type == QualityMetricType::kGauge;
    for (Series& existing : series) {
      if (existing.labels == labels) {
        existing.value = gauge ? value : existing.value + value;
        return;
      }
    }
    series.push_back(Series{std::move(labels), value});
  };
  for (size_t h = 0; h < s.hosts.size(); ++h) {
    if (h < s.stream_lag_seconds.size())
      put(QualityCounter::kStreamLag, {s.hosts[h]}, s.stream_lag_seconds[h]);
    if (h < s.waits_resolved.size())
      put(QualityCounter::kWaitsResolved, {s.hosts[h]}, static_cast<double>(s.waits_resolved[h]));
  }
  for (size_t h = 0; h < s.hosts.size(); ++h) {
    // Every host's series from the start (rate() then sees zeros rather than nothing).
    put(QualityCounter::kPacketsExpired, {s.hosts[h]},
        h < s.packets_expired.size() ? static_cast<double>(s.packets_expired[h]) : 0.0);
    put(QualityCounter::kInferredSwitches, {s.hosts[h]},
        h < s.inferred_switches.size() ? static_cast<double>(s.inferred_switches[h]) : 0.0);
    if (h >= s.packets_matched.size()) continue;
    for (size_t peer = 0; peer < s.packets_matched[h].size() && peer < s.hosts.size(); ++peer) {
      if (s.packets_matched[h][peer] == 0) continue;
      put(QualityCounter::kPacketsMatched, {s.hosts[h], s.hosts[peer]},
          static_cast<double>(s.packets_matched[h][peer]));
    }
  }
  put(QualityCounter::kHistoryBytes, {}, static_cast<double>(s.history_bytes));
  put(QualityCounter::kHistoryEvictions, {}, static_cast<double>(s.history_evictions));
  put(QualityCounter::kHistoryEvictedReads, {}, static_cast<double>(s.history_evicted_reads));
  put(QualityCounter::kTasksReleased, {}, static_cast<double>(s.tasks_released));
  put(QualityCounter::kSpanInputErrors, {}, static_cast<double>(s.span_input_errors));
}

std::vector<prometheus::MetricFamily> PipelineHealthMetrics::Collect() const {
  Values values;
  std::optional<EngineHealthSnapshot> snapshot;
  {
    std::lock_guard lock(mutex_);
    values = values_;
    if (published_) snapshot = snapshot_;
  }
  if (snapshot) AddSnapshot(*snapshot, values);
  std::vector<prometheus::MetricFamily> families;
  for (const QualityCounterInfo& c : kQualityCounters) {
    const std::vector<Series>& series = values[static_cast<size_t>(c.id)];
    if (!c.exported() || series.empty()) continue;  // as prometheus-cpp: no empty families
    prometheus::MetricFamily& family = families.emplace_back();
    family.name = c.metric;
    family.help = c.help;
    family.type = Type(c.type);
    const std::vector<std::string> names = LabelNames(c.labels);
    for (const Series& s : series) {
      prometheus::ClientMetric& metric = family.metric.emplace_back();
      for (size_t i = 0; i < names.size() && i < s.labels.size(); ++i) {
        metric.label.push_back({names[i], s.labels[i]});
      }
      std::sort(metric.label.begin(), metric.label.end());  // as prometheus-cpp's Labels
      if (c.type == QualityMetricType::kGauge) {
        metric.gauge.value = s.value;
      } else {
        metric.counter.value = s.value;
      }
    }
  }
  return families;
}

}  // namespace waitpath
