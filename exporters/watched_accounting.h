// The one accounting of watched tasks: each watched task's time, from its start to its end,
// split by leaf state and by the task its active path went through, fed by the engine's
// resolved waits. Its sinks (the analyze/live/tail report, the Prometheus counters) only
// present what it hands them (docs/architecture.md, "Accounting").
//
// A task is accounted piece by piece: at each of its resolved waits, the time since it was
// last accounted (its own running, preempted... and the wait); at its end (or the input's),
// the rest. Each piece's states are the difference of two of the task's stored cumulative
// vectors, so they are exact, non-negative and sum to the piece, whatever has been evicted
// since; the piece's path comes from expanding the retained history over it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "exporters/watch.h"
#include "incremental/engine.h"

namespace waitpath {

class AccountingSink {
 public:
  virtual ~AccountingSink() = default;
  // A resolved wait of a watched task and its path (pieces tiling [wait.start, wait.end)).
  virtual void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) {
    (void)wait;
    (void)path;
  }
  // [from, to) of watched task u is accounted: `states` per leaf (non-negative, summing to
  // to - from) and who they are credited to: each piece of `path` to the task it names
  // (kNoTask: u itself). The pieces' durations per leaf equal `states`; where u's history
  // over the piece was already evicted they are one piece per leaf, credited to u.
  virtual void OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                           std::span<const PathSegment> path) = 0;
  // u is accounted to the end of its life (or of the input): what is said of it is final.
  virtual void OnTaskDone(Utid u) { (void)u; }
  // u's Utid is about to name another task: resolve or drop every reference to it now.
  virtual void OnTaskReleased(Utid u) { (void)u; }
};

class WatchedAccounting : public WaitListener {
 public:
  WatchedAccounting(const Engine& engine, WatchSet watch, std::vector<std::string> host_names);

  void AddSink(AccountingSink* sink) { sinks_.push_back(sink); }
  // A host that appeared while running (live); ids follow the engine's.
  void AddHost(std::string name) {
    if (local_hosts_ < hosts_.size()) {
      hosts_[local_hosts_] = std::move(name);
    } else {
      hosts_.push_back(std::move(name));
    }
    ++local_hosts_;
  }
  // A host of another shard (docs/scale.md), at an id above every local host's: named in the
  // reports, never watched here (its own shard reports its tasks).
  void SetRemoteHost(uint16_t id, std::string name) {
    if (id >= hosts_.size()) hosts_.resize(id + 1u);
    hosts_[id] = std::move(name);
  }
  const std::vector<std::string>& hosts() const { return hosts_; }
  const Engine& engine() const { return engine_; }

  // WaitListener (engine thread).
  void OnWait(const ResolvedWait& wait) override;
  void OnTaskEnded(Utid u) override;
  void OnTaskReleased(Utid u) override;
  // After the input ended: every watched task that ran is accounted to its end.
  void Finish();

  // Whether u is watched now (its name may change at exec), cached per name.
  bool Watched(Utid u);
  // Whether any task has been watched so far.
  bool any_watched() const { return any_watched_; }

 private:
  static constexpr int64_t kUnaccounted = INT64_MIN;

  void Grow(Utid u);
  // Accounts u up to `to`, where its cumulative vector is `to_cum`; `wait` (may be null) is
  // the wait ending at `to`, whose path the sinks also get.
  void Account(Utid u, int64_t to, const StateVec& to_cum, const ResolvedWait* wait);
  void Done(Utid u);

  const Engine& engine_;  // read only (its const queries)
  WatchSet watch_;
  size_t local_hosts_ = 0;  // hosts_ from 0 on; remote ones are further up
  std::vector<std::string> hosts_;
  std::vector<AccountingSink*> sinks_;
  // Per Utid: up to where it is accounted and its cumulative vector there; the watch
  // decision with the name id it was taken for ((comm + 1) << 1 | watched, 0: not decided);
  // whether its record is final.
  std::vector<int64_t> accounted_to_;
  std::vector<StateVec> accounted_cum_;
  std::vector<uint64_t> watched_;
  std::vector<uint8_t> done_;
  std::vector<PathSegment> pieces_;
  bool any_watched_ = false;
};

}  // namespace waitpath
