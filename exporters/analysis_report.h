// Collects, for watched tasks, what `waitpath analyze` reports: the lifetime breakdown, the
// tasks the path went through, and the long waits with their expanded paths. It listens to
// the engine so that each wait is expanded while the history it reaches is retained.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters/watch.h"
#include "incremental/engine.h"

namespace waitpath {

struct AnalysisOptions {
  int64_t min_wait_ns = -1;  // < 0: no wait records
  size_t top = 10;
  bool json = false;
  bool task_records = true;  // at Finish(); `tail` prints only waits
};

class AnalysisReport : public WaitListener {
 public:
  AnalysisReport(Engine& engine, std::vector<std::string> host_names, WatchSet watch, AnalysisOptions options,
                 std::ostream& out);

  void OnWait(const ResolvedWait& wait) override;
  // A host that appeared while running (live sessions); ids follow the engine's.
  void AddHost(std::string name) { hosts_.push_back(std::move(name)); }
  // After the input ended: one record per watched task that ran.
  void Finish();

  uint64_t tasks_reported() const { return tasks_reported_; }

 private:
  struct Blame {
    StateVec states;
  };
  struct Tracked {
    int64_t from;                         // waits are accumulated from here on
    StateVec from_cum;                    // the task's cumulative vector at `from`
    StateVec waits;                       // sum of their breakdowns
    std::unordered_map<Utid, Blame> by_task;
  };

  bool Watched(Utid u) const;
  void AddPieces(Tracked& t, Utid self, const std::vector<PathSegment>& pieces);
  void WriteWait(const ResolvedWait& wait, const std::vector<PathSegment>& pieces);
  void WriteTask(Utid u, const StateVec& breakdown, const std::vector<std::pair<Utid, Blame>>& by_task);
  std::string TaskName(Utid u) const;
  // JSON fragments written with every wait, escaped once: "host":…,"tid":… with or without
  // "pid", and "comm" (recomputed when the task's name or pid changes).
  const std::string& TaskJson(Utid u, bool with_pid);
  const std::string& HostJson(uint16_t host);
  nlohmann::ordered_json Record(std::string_view type, Utid u) const;

  Engine& engine_;
  std::vector<std::string> hosts_;
  WatchSet watch_;
  AnalysisOptions options_;
  std::ostream& out_;
  std::unordered_map<Utid, Tracked> tracked_;
  std::vector<PathSegment> scratch_;
  struct TaskJsonCache {
    uint32_t comm = ~0u;
    int32_t pid = 0;
    std::string with_pid, without_pid;
  };
  std::vector<TaskJsonCache> task_json_;
  std::vector<std::string> host_json_;
  std::string line_;  // the wait record being written
  uint64_t tasks_reported_ = 0;
};

}  // namespace waitpath
