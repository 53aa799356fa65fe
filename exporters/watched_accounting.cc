#include "exporters/watched_accounting.h"

#include <algorithm>

#include "model/string_table.h"

namespace waitpath {

WatchedAccounting::WatchedAccounting(const Engine& engine, WatchSet watch,
                                     std::vector<std::string> host_names)
    : engine_(engine), watch_(std::move(watch)), hosts_(std::move(host_names)) {}

void WatchedAccounting::Grow(Utid u) {
  if (u < accounted_to_.size()) return;
  const size_t n = std::max<size_t>(u + 1u, accounted_to_.size() * 3 / 2);
  accounted_to_.resize(n, kUnaccounted);
  accounted_cum_.resize(n);
  watched_.resize(n, 0);
  done_.resize(n, 0);
}

bool WatchedAccounting::Watched(Utid u) {
  Grow(u);
  const Task& t = engine_.tasks()[u];
  if (t.remote) return false;
  // The decision depends on the name, which changes at exec: cached with the name id.
  const uint64_t key = (uint64_t{t.comm} + 1) << 1;
  if ((watched_[u] & ~uint64_t{1}) != key) {
    const std::string_view host =
        t.host < hosts_.size() ? std::string_view(hosts_[t.host]) : std::string_view();
    const bool yes =
        watch_.Matches(host, t.tid, t.pid < 0 ? t.tid : t.pid, StringTable::Global().Get(t.comm));
    watched_[u] = key | (yes ? 1 : 0);
    any_watched_ = any_watched_ || yes;
  }
  return watched_[u] & 1;
}

void WatchedAccounting::OnWait(const ResolvedWait& wait) {
  const Utid u = wait.task;
  if (!Watched(u)) return;
  // Accounted as its waits resolve, while the history they reach is retained (a task asleep
  // since the state dump is accounted from its first wake-up on, before it first runs).
  if (accounted_to_[u] < wait.end) {
    Account(u, wait.end, wait.cum_start + wait.breakdown, &wait);
    return;
  }
  pieces_.clear();
  engine_.resolver().Expand(u, wait.start, wait.end, &pieces_);
  for (AccountingSink* s : sinks_) s->OnWatchedWait(wait, pieces_);
}

void WatchedAccounting::Account(Utid u, int64_t to, const StateVec& to_cum,
                                const ResolvedWait* wait) {
  // Its vector is zero at its start (Engine::Cumulative).
  const int64_t from = accounted_to_[u] == kUnaccounted ? engine_.TaskStart(u) : accounted_to_[u];
  const StateVec from_cum = accounted_cum_[u];
  accounted_to_[u] = to;
  accounted_cum_[u] = to_cum;
  pieces_.clear();
  if (from < to) {
    const TaskHistory& h = engine_.history(u);
    int64_t retained = from;
    if (from < h.start()) {
      // Its history since `from` is partly evicted (its own running, preempted... before a
      // long wait, or no wait for longer than the retention): the states up to where the
      // retained history begins are known from the stored vectors, and are the task's own;
      // they are credited to it, one piece per leaf (not placed in time).
      retained = std::min(h.start(), to);
      const StateVec own = (retained == to ? to_cum : h.cum(0)) - from_cum;
      for (int i = 0; i < kLeafCount; ++i) {
        if (own.ns[i] > 0)
          pieces_.push_back(PathSegment{u, static_cast<Leaf>(i), from, from + own.ns[i], 0});
      }
    }
    engine_.resolver().Expand(u, retained, to, &pieces_);
    for (AccountingSink* s : sinks_) s->OnAccounted(u, from, to, to_cum - from_cum, pieces_);
  }
  if (!wait) return;
  // The wait's path: the last pieces, from its start (the task's own pieces before it end
  // there and are never merged with the wait's, which lie deeper on the path).
  size_t first = pieces_.size();
  while (first > 0 && pieces_[first - 1].start >= wait->start && pieces_[first - 1].depth > 0)
    --first;
  if (first == pieces_.size() || pieces_[first].start != wait->start) {
    pieces_.clear();
    first = 0;
    engine_.resolver().Expand(u, wait->start, wait->end, &pieces_);
  }
  const std::span<const PathSegment> path(pieces_);
  for (AccountingSink* s : sinks_) s->OnWatchedWait(*wait, path.subspan(first));
}

void WatchedAccounting::Done(Utid u) {
  Grow(u);
  if (done_[u]) return;
  const Task& t = engine_.tasks()[u];
  if (!t.in_use || !t.ran || engine_.history(u).empty() || !Watched(u)) return;
  const int64_t start = engine_.TaskStart(u), end = engine_.TaskEnd(u);
  if (end <= start) return;
  if (accounted_to_[u] < end) {  // kUnaccounted included
    Account(u, end, engine_.Cumulative(u, end), nullptr);
  }
  done_[u] = 1;
  for (AccountingSink* s : sinks_) s->OnTaskDone(u);
}

void WatchedAccounting::OnTaskEnded(Utid u) {
  Done(u);
}

void WatchedAccounting::OnTaskReleased(Utid u) {
  for (AccountingSink* s : sinks_) s->OnTaskReleased(u);
  Grow(u);
  accounted_to_[u] = kUnaccounted;
  accounted_cum_[u] = {};
  watched_[u] = 0;
  done_[u] = 0;
}

void WatchedAccounting::Finish() {
  for (Utid u = 0; u < engine_.tasks().size(); ++u) Done(u);
}

}  // namespace waitpath
