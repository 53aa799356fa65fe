#include "exporters/metrics_requests.h"

#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr double kSecondsPerNs = 1e-9;

// 100 µs to 30 s, about three buckets per decade: request latencies of services.
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30};
}

}  // namespace

RequestMetrics::RequestMetrics(prometheus::Registry& registry, const Engine& engine,
                               const std::vector<std::string>& host_names, size_t max_names)
    : engine_(engine),
      hosts_(host_names),
      processes_(max_names),
      operations_(max_names),
      seconds_(prometheus::BuildCounter()
                   .Name("waitpath_request_seconds_total")
                   .Help("Time of application spans (requests) by operation and active-path leaf "
                         "state, counted as each span ends")
                   .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("waitpath_request_duration_seconds")
                    .Help("Durations of application spans (requests) by operation")
                    .Register(registry)) {}

std::string RequestMetrics::HostName(uint16_t host) const {
  return host < hosts_.size() ? hosts_[host] : "host" + std::to_string(host);
}

RequestMetrics::Series& RequestMetrics::SeriesOf(uint16_t host, uint32_t process,
                                                 uint32_t operation) {
  const uint64_t key = (uint64_t{host} << 48) | (uint64_t{process} << 24) | operation;
  auto [it, inserted] = series_.try_emplace(key);
  if (inserted) {
    const std::string h = HostName(host);
    for (int i = 0; i < kLeafCount; ++i) {
      it->second.seconds[static_cast<size_t>(i)] =
          &seconds_.Add({{"host", h},
                         {"process", processes_.Name(process)},
                         {"operation", operations_.Name(operation)},
                         {"state", std::string(LeafName(static_cast<Leaf>(i)))}});
    }
    it->second.duration = &duration_.Add({{"host", h},
                                          {"process", processes_.Name(process)},
                                          {"operation", operations_.Name(operation)}},
                                         DurationBuckets());
  }
  return it->second;
}

void RequestMetrics::OnSpan(const ResolvedSpan& span) {
  const Task& t = engine_.tasks()[span.task];
  // A span without a name counts under the empty name's label, "_".
  const uint32_t name = span.span.name == ~0u ? StringTable::Global().Intern("") : span.span.name;
  Series& s = SeriesOf(span.span.host, processes_.Slot(t.comm), operations_.Slot(name));
  for (int i = 0; i < kLeafCount; ++i) {
    if (span.breakdown.ns[i] > 0) {
      s.seconds[static_cast<size_t>(i)]->Increment(span.breakdown.ns[i] * kSecondsPerNs);
    }
  }
  s.duration->Observe((span.end - span.start) * kSecondsPerNs);
}

}  // namespace waitpath
