#include "exporters/metrics_active_path.h"

#include <string_view>

#include "live/string_table.h"

namespace waitpath {
namespace {

constexpr double kSecondsPerNs = 1e-9;

}  // namespace

size_t ActivePathMetrics::BlameKeyHash::operator()(const BlameKey& k) const {
  const uint64_t hosts = (uint64_t{k.host} << 16) | k.blamed_host;
  const uint64_t procs = (uint64_t{k.process} << 32) | k.blamed_process;
  return std::hash<uint64_t>{}(procs ^ (hosts * 0x9e3779b97f4a7c15ULL) ^
                               static_cast<uint64_t>(k.leaf));
}

ActivePathMetrics::ActivePathMetrics(prometheus::Registry& registry, Engine& engine, WatchSet watch,
                                     size_t max_processes)
    : engine_(engine),
      watch_(std::move(watch)),
      processes_(max_processes),
      blamed_processes_(max_processes),
      seconds_(prometheus::BuildCounter()
                   .Name("waitpath_active_path_seconds_total")
                   .Help("Observed time of watched processes by active-path leaf state, counted "
                         "as their waits resolve")
                   .Register(registry)),
      blame_(prometheus::BuildCounter()
                 .Name("waitpath_active_path_blame_seconds_total")
                 .Help("Active-path time of watched processes by the process (and host) the "
                       "path went through, and leaf state")
                 .Register(registry)) {}

const std::string& ActivePathMetrics::HostName(uint16_t host) {
  if (host >= hosts_.size()) hosts_.resize(host + 1u);
  if (hosts_[host].empty()) hosts_[host] = "host" + std::to_string(host);
  return hosts_[host];
}

bool ActivePathMetrics::Watched(Utid u) {
  const Task& t = engine_.tasks()[u];
  if (u >= watched_.size()) watched_.resize(u + 1u, 0);
  // The decision depends on the name, which changes at exec: cache it with the name id.
  const uint64_t key = (uint64_t{t.comm} + 1) << 1;
  if ((watched_[u] & ~uint64_t{1}) != key) {
    const bool yes = watch_.Matches(HostName(t.host), t.tid, t.pid < 0 ? t.tid : t.pid,
                                    StringTable::Global().Get(t.comm));
    watched_[u] = key | (yes ? 1 : 0);
  }
  return watched_[u] & 1;
}

ActivePathMetrics::StateCounters& ActivePathMetrics::ProcessSeries(uint16_t host,
                                                                   uint32_t process) {
  const uint64_t key = (uint64_t{host} << 32) | process;
  auto [it, inserted] = process_series_.try_emplace(key);
  if (inserted) {
    for (int i = 0; i < kLeafCount; ++i) {
      it->second[i] = &seconds_.Add({{"host", HostName(host)},
                                     {"process", processes_.Name(process)},
                                     {"state", std::string(LeafName(static_cast<Leaf>(i)))}});
    }
  }
  return it->second;
}

prometheus::Counter& ActivePathMetrics::BlameSeries(const BlameKey& key) {
  auto [it, inserted] = blame_series_.try_emplace(key, nullptr);
  if (inserted) {
    it->second = &blame_.Add({{"host", HostName(key.host)},
                              {"process", processes_.Name(key.process)},
                              {"blamed_host", HostName(key.blamed_host)},
                              {"blamed_process", blamed_processes_.Name(key.blamed_process)},
                              {"state", std::string(LeafName(key.leaf))}});
  }
  return *it->second;
}

void ActivePathMetrics::Account(Utid u, int64_t to, const StateVec& to_cum) {
  if (u >= accounted_to_.size()) {
    accounted_to_.resize(u + 1u, kUnaccounted);
    accounted_cum_.resize(u + 1u);
  }
  // A task that never ran yet (asleep since the state dump) is counted from its start once
  // it has, as analyze only reports tasks that ran. Its vector is zero at its start.
  const int64_t from = accounted_to_[u] == kUnaccounted ? engine_.TaskStart(u) : accounted_to_[u];
  if (from >= to) return;
  const StateVec states = to_cum - accounted_cum_[u];
  const Task& t = engine_.tasks()[u];
  const uint32_t process = processes_.Slot(t.comm);
  StateCounters& series = ProcessSeries(t.host, process);
  for (int i = 0; i < kLeafCount; ++i) {
    if (states.ns[i] > 0) series[i]->Increment(states.ns[i] * kSecondsPerNs);
  }
  // The blame split comes from the expanded path; pieces without a task (timer, disk,
  // network...) are credited to the waiting task, as analyze's by_task does. Where the
  // task's own history since `from` is no longer retained (no wait for longer than the
  // retention), the time is credited to the task itself, state by state.
  pieces_.clear();
  if (from < engine_.history(u).start()) {
    for (int i = 0; i < kLeafCount; ++i) {
      if (states.ns[i] > 0) pieces_.push_back(PathSegment{u, static_cast<Leaf>(i), 0, states.ns[i], 0});
    }
  } else {
    engine_.resolver().Expand(u, from, to, &pieces_);
  }
  for (const PathSegment& p : pieces_) {
    const Utid who = p.task == kNoTask ? u : p.task;
    const Task& w = engine_.tasks()[who];
    const BlameKey key{t.host, w.host, process, blamed_processes_.Slot(w.comm), p.leaf};
    BlameSeries(key).Increment((p.end - p.start) * kSecondsPerNs);
  }
  accounted_to_[u] = to;
  accounted_cum_[u] = to_cum;
}

void ActivePathMetrics::OnWait(const ResolvedWait& wait) {
  const Utid u = wait.task;
  if (!engine_.tasks()[u].ran || !Watched(u)) return;
  // The task's own time since it was last counted, then this wait, as resolved.
  Account(u, wait.end, wait.cum_start + wait.breakdown);
}

void ActivePathMetrics::Finish() {
  const TaskTable& tasks = engine_.tasks();
  for (Utid u = 0; u < tasks.size(); ++u) {
    // The tasks analyze reports, so that both give the same totals.
    if (!tasks[u].ran || engine_.history(u).empty() || !Watched(u)) continue;
    const int64_t start = engine_.TaskStart(u), end = engine_.TaskEnd(u);
    if (end <= start) continue;
    Account(u, end, engine_.Cumulative(u, end));
  }
}

}  // namespace waitpath
