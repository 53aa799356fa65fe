// The request metrics: time of application spans by process, operation and active-path leaf
// state, and their durations (docs/requests.md, docs/metrics.md). Listens to the engine's spans,
// on its thread; labels are bounded like the active-path families' (the first N process and
// operation names keep their own value, later ones count as `other`).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/metrics_labels.h"
#include "incremental/engine.h"

namespace waitpath {

class RequestMetrics : public SpanListener {
 public:
  RequestMetrics(prometheus::Registry& registry, const Engine& engine,
                 const std::vector<std::string>& host_names, size_t max_names);

  // Each ended span: its breakdown into waitpath_request_seconds_total, its duration into
  // waitpath_request_duration_seconds. Idle time is no request's: not counted.
  void OnSpan(const ResolvedSpan& span) override;

 private:
  struct Series {
    std::array<prometheus::Counter*, kLeafCount> seconds{};
    prometheus::Histogram* duration = nullptr;
  };
  Series& SeriesOf(uint16_t host, uint32_t process, uint32_t operation);
  std::string HostName(uint16_t host) const;

  const Engine& engine_;
  const std::vector<std::string>& hosts_;
  ProcessLabels processes_;
  ProcessLabels operations_;
  prometheus::Family<prometheus::Counter>& seconds_;
  prometheus::Family<prometheus::Histogram>& duration_;
  std::unordered_map<uint64_t, Series> series_;  // host << 48 | process << 24 | operation
};

}  // namespace waitpath
