#include "exporters/metrics_active_path.h"

#include <string_view>

#include "exporters/wait_headline.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr double kSecondsPerNs = 1e-9;

// From 100 us (a context switch and a bit) to 10 s (a timeout): where waits people care
// about fall, a bucket per half decade.
const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10};
  return kBuckets;
}

}  // namespace

size_t ActivePathMetrics::BlameKeyHash::operator()(const BlameKey& k) const {
  const uint64_t hosts = (uint64_t{k.host} << 16) | k.blamed_host;
  const uint64_t procs = (uint64_t{k.process} << 32) | k.blamed_process;
  return std::hash<uint64_t>{}(procs ^ (hosts * 0x9e3779b97f4a7c15ULL) ^
                               static_cast<uint64_t>(k.leaf));
}

ActivePathMetrics::ActivePathMetrics(prometheus::Registry& registry, WatchedAccounting& accounting,
                                     size_t max_processes, bool by_cgroup)
    : accounting_(accounting),
      by_cgroup_(by_cgroup),
      label_(by_cgroup ? "cgroup" : "process"),
      blamed_label_(by_cgroup ? "blamed_cgroup" : "blamed_process"),
      processes_(max_processes,
                 by_cgroup ? ProcessLabels::Kind::kCgroup : ProcessLabels::Kind::kProcess),
      blamed_processes_(max_processes,
                        by_cgroup ? ProcessLabels::Kind::kCgroup : ProcessLabels::Kind::kProcess),
      seconds_(prometheus::BuildCounter()
                   .Name("waitpath_active_path_seconds_total")
                   .Help("Observed time of watched processes by active-path leaf state, counted "
                         "as their waits resolve")
                   .Register(registry)),
      blame_(prometheus::BuildCounter()
                 .Name("waitpath_active_path_blame_seconds_total")
                 .Help("Active-path time of watched processes by the process (and host) the "
                       "path went through, and leaf state")
                 .Register(registry)),
      untraced_(prometheus::BuildCounter()
                    .Name("waitpath_untraced_peer_wait_seconds_total")
                    .Help("Time of watched processes in waits whose only cause is a packet from a "
                          "host not traced (part of the network state; idle servers wait so)")
                    .Register(registry)),
      durations_(prometheus::BuildHistogram()
                     .Name("waitpath_wait_duration_seconds")
                     .Help("Resolved waits of watched processes by duration and cause (the "
                           "largest state of the wait's active path, or untraced_peer)")
                     .Register(registry)) {
  accounting_.AddSink(this);
}

const std::string& ActivePathMetrics::HostName(uint16_t host) {
  const std::vector<std::string>& names = accounting_.hosts();
  if (host < names.size()) return names[host];
  if (host >= unnamed_.size()) unnamed_.resize(host + 1u);
  if (unnamed_[host].empty()) unnamed_[host] = "host" + std::to_string(host);
  return unnamed_[host];
}

ActivePathMetrics::StateCounters& ActivePathMetrics::ProcessSeries(uint16_t host,
                                                                   uint32_t process) {
  const uint64_t key = (uint64_t{host} << 32) | process;
  auto [it, inserted] = process_series_.try_emplace(key);
  if (inserted) {
    for (int i = 0; i < kLeafCount; ++i) {
      it->second[i] = &seconds_.Add({{"host", HostName(host)},
                                     {label_, processes_.Name(process)},
                                     {"state", std::string(LeafName(static_cast<Leaf>(i)))}});
    }
    it->second.untraced =
        &untraced_.Add({{"host", HostName(host)}, {label_, processes_.Name(process)}});
  }
  return it->second;
}

prometheus::Counter& ActivePathMetrics::BlameSeries(const BlameKey& key) {
  auto [it, inserted] = blame_series_.try_emplace(key, nullptr);
  if (inserted) {
    it->second = &blame_.Add({{"host", HostName(key.host)},
                              {label_, processes_.Name(key.process)},
                              {"blamed_host", HostName(key.blamed_host)},
                              {blamed_label_, blamed_processes_.Name(key.blamed_process)},
                              {"state", std::string(LeafName(key.leaf))}});
  }
  return *it->second;
}

void ActivePathMetrics::OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                                    std::span<const PathSegment> path) {
  (void)from;
  (void)to;
  const TaskTable& tasks = accounting_.engine().tasks();
  const Task& t = tasks[u];
  const uint32_t process = processes_.Slot(LabelOf(t));
  StateCounters& series = ProcessSeries(t.host, process);
  for (int i = 0; i < kLeafCount; ++i) {
    if (states.ns[i] > 0) series[i]->Increment(states.ns[i] * kSecondsPerNs);
  }
  for (const PathSegment& p : path) {
    const Task& w = tasks[p.task == kNoTask ? u : p.task];
    const BlameKey key{t.host, w.host, process, blamed_processes_.Slot(LabelOf(w)), p.leaf};
    BlameSeries(key).Increment((p.end - p.start) * kSecondsPerNs);
  }
}

void ActivePathMetrics::OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
  (void)path;
  const Task& t = accounting_.engine().tasks()[wait.task];
  StateCounters& series = ProcessSeries(t.host, processes_.Slot(LabelOf(t)));
  const int64_t d = wait.end - wait.start;
  int cause = kLeafCount;  // untraced_peer
  if (IsUntracedPeerWait(wait)) {
    series.untraced->Increment(d * kSecondsPerNs);
  } else {
    // The headline's state (exporters/wait_headline.h): the largest of the breakdown.
    cause = 0;
    for (int i = 1; i < kLeafCount; ++i) {
      if (wait.breakdown.ns[i] > wait.breakdown.ns[cause]) cause = i;
    }
  }
  prometheus::Histogram*& h = series.durations[static_cast<size_t>(cause)];
  if (!h) {
    h = &durations_.Add(
        {{"host", HostName(t.host)},
         {label_, processes_.Name(processes_.Slot(LabelOf(t)))},
         {"cause", cause == kLeafCount ? std::string("untraced_peer")
                                       : std::string(LeafName(static_cast<Leaf>(cause)))}},
        DurationBuckets());
  }
  h->Observe(d * kSecondsPerNs);
}

}  // namespace waitpath
