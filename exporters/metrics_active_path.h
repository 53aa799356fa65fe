// The active-path counters: time of watched processes by leaf state, and the same split by
// the process their path went through. Listens to the engine, on its thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/metrics_labels.h"
#include "exporters/watched_accounting.h"
#include "incremental/engine.h"

namespace waitpath {

class ActivePathMetrics : public AccountingSink {
 public:
  // Registers itself with `accounting`. With `by_cgroup`, the `process` and `blamed_process`
  // labels are `cgroup` and `blamed_cgroup`: the tasks' cgroup paths (`unknown` when no
  // kmod/ event said).
  ActivePathMetrics(prometheus::Registry& registry, WatchedAccounting& accounting,
                    size_t max_processes, bool by_cgroup = false);

  // Counts each accounted piece of a watched task: its states by process, its path by the
  // process (and host) it went through. Summed over states the counters grow by the tasks'
  // observed time.
  void OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                   std::span<const PathSegment> path) override;
  // Each resolved wait of a watched process: its duration by cause (the largest state of its
  // path, or `untraced_peer`: docs/metrics.md), and the waits on untraced peers' time.
  void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) override;

 private:
  // One series per (host, process, state) of the first family, created for all 11 states at
  // once so that share queries see zeros rather than missing series; likewise the process's
  // untraced-peer seconds (the alert subtracts them). Duration histograms appear per cause
  // as waits have it (12 at most per process).
  static constexpr int kCauses = kLeafCount + 1;  // the states, then untraced_peer
  struct StateCounters {
    std::array<prometheus::Counter*, kLeafCount> states{};
    prometheus::Counter* untraced = nullptr;
    std::array<prometheus::Histogram*, kCauses> durations{};
    prometheus::Counter*& operator[](int i) { return states[static_cast<size_t>(i)]; }
  };
  struct BlameKey {
    uint16_t host, blamed_host;
    uint32_t process, blamed_process;
    Leaf leaf;
    bool operator==(const BlameKey&) const = default;
  };
  struct BlameKeyHash {
    size_t operator()(const BlameKey& k) const;
  };

  StateCounters& ProcessSeries(uint16_t host, uint32_t process);
  prometheus::Counter& BlameSeries(const BlameKey& key);
  const std::string& HostName(uint16_t host);
  uint32_t LabelOf(const Task& t) const { return by_cgroup_ ? t.cgroup : t.comm; }

  WatchedAccounting& accounting_;
  const bool by_cgroup_;
  const std::string label_, blamed_label_;  // "process", "blamed_process" or the cgroup ones
  std::vector<std::string> unnamed_;        // "hostN" for a host the accounting has no name for
  ProcessLabels processes_;
  ProcessLabels blamed_processes_;
  prometheus::Family<prometheus::Counter>& seconds_;
  prometheus::Family<prometheus::Counter>& blame_;
  prometheus::Family<prometheus::Counter>& untraced_;
  prometheus::Family<prometheus::Histogram>& durations_;
  std::unordered_map<uint64_t, StateCounters> process_series_;  // (host << 32 | process)
  std::unordered_map<BlameKey, prometheus::Counter*, BlameKeyHash> blame_series_;
};

}  // namespace waitpath
