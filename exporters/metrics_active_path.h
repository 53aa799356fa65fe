// The active-path counters: time of watched processes by leaf state, and the same split by
// the process their path went through. Listens to the engine, on its thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/metrics_labels.h"
#include "exporters/watch.h"
#include "incremental/engine.h"

namespace waitpath {

class ActivePathMetrics {
 public:
  ActivePathMetrics(prometheus::Registry& registry, Engine& engine, WatchSet watch,
                    size_t max_processes);

  // Hosts by dense id (Task::host); a host added later (live) is appended.
  void SetHostNames(std::vector<std::string> names) { hosts_ = std::move(names); }

  // Counts, for a watched task, its own time since its previous resolved wait plus this
  // wait's breakdown: summed over states the counters grow by the task's observed time.
  void OnWait(const ResolvedWait& wait);
  // After the input ended: each watched task's time since its last resolved wait (its final
  // running time, a wait still open), so that the counters hold every task's whole life.
  void Finish();

 private:
  // One series per (host, process, state) of the first family, created for all 11 states at
  // once so that share queries see zeros rather than missing series.
  using StateCounters = std::array<prometheus::Counter*, kLeafCount>;
  struct BlameKey {
    uint16_t host, blamed_host;
    uint32_t process, blamed_process;
    Leaf leaf;
    bool operator==(const BlameKey&) const = default;
  };
  struct BlameKeyHash {
    size_t operator()(const BlameKey& k) const;
  };

  bool Watched(Utid u);
  // Counts [from, to) of task u, up to where it is counted and its cumulative vector there
  // (`to_cum`): the difference to the last counted vector by process, and the expanded path
  // over it by blamed process. Both are non-negative: stored vectors, no re-read history.
  void Account(Utid u, int64_t to, const StateVec& to_cum);
  StateCounters& ProcessSeries(uint16_t host, uint32_t process);
  prometheus::Counter& BlameSeries(const BlameKey& key);
  const std::string& HostName(uint16_t host);

  Engine& engine_;
  WatchSet watch_;
  std::vector<std::string> hosts_;
  ProcessLabels processes_;
  ProcessLabels blamed_processes_;
  prometheus::Family<prometheus::Counter>& seconds_;
  prometheus::Family<prometheus::Counter>& blame_;
  std::unordered_map<uint64_t, StateCounters> process_series_;  // (host << 32 | process)
  std::unordered_map<BlameKey, prometheus::Counter*, BlameKeyHash> blame_series_;
  // Per task (Utid): up to where its time is counted (kUnaccounted: nothing yet), and the
  // watch decision cached with the name id it was taken for (a task may exec).
  static constexpr int64_t kUnaccounted = INT64_MIN;
  std::vector<int64_t> accounted_to_;
  std::vector<StateVec> accounted_cum_;  // the task's cumulative vector there
  std::vector<uint64_t> watched_;  // (comm id + 1) << 1 | watched; 0: not decided
  std::vector<PathSegment> pieces_;
};

}  // namespace waitpath
