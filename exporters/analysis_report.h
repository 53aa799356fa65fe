// What `waitpath analyze`, `live` and `tail` print of watched tasks: each task's lifetime
// breakdown and the tasks its path went through (from the accounting), and the long waits
// with their paths as they resolve.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/time_format.h"
#include "exporters/watched_accounting.h"
#include "incremental/engine.h"

namespace waitpath {

// Task records as people read them, JSON Lines, flame-graph stacks (`folded`: one line per
// watched task, credited task and state, `HOST/COMM;HOST/COMM;STATE NS`, for flamegraph.pl and
// speedscope; every credited task, so a task's lines sum to its observed time), or CSV (the
// same rows with tids and a header).
enum class TaskFormat : uint8_t { kText, kJson, kFolded, kCsv };

// How a wait ended, as wait records say it: task, network, timer, disk, ..., blocked, unknown.
std::string_view WaitCauseName(const WaitLink& link);
// A breakdown as JSON, ns per state (every state, or only those not 0), as every record has it.
nlohmann::ordered_json StatesJson(const StateVec& v, bool nonzero_only = false);
// "running 75.0%, preempted 25.0%": each state's share of `total`, "-" when there is none.
std::string Shares(const StateVec& v, int64_t total);

struct AnalysisOptions {
  int64_t min_wait_ns = -1;  // < 0: no wait records (never with kFolded or kCsv)
  size_t top = 10;
  bool json = false;
  TaskFormat format = TaskFormat::kText;  // kJson when `json`
  TimeFormat time_format;                 // of times in text
  bool task_records = true;               // false: `tail` prints only waits
  // Waits whose headline state (the largest of the path) is one of these (bit per Leaf);
  // 0: all (--state).
  uint32_t states = 0;
};

class AnalysisReport : public AccountingSink {
 public:
  // Registers itself with `accounting`, whose watch set and host names it reports by.
  AnalysisReport(WatchedAccounting& accounting, AnalysisOptions options, std::ostream& out);

  void OnWatchedWait(const ResolvedWait& wait, std::span<const PathSegment> path) override;
  void OnAccounted(Utid u, int64_t from, int64_t to, const StateVec& states,
                   std::span<const PathSegment> path) override;
  // Writes the task's record (a task that ended before the horizon is reported then, the
  // others when the input ends).
  void OnTaskDone(Utid u) override;
  void OnTaskReleased(Utid u) override;

  uint64_t tasks_reported() const { return tasks_reported_; }

 private:
  struct Tracked {
    StateVec total;                                 // its breakdown so far
    std::unordered_map<TaskRef, StateVec> by_task;  // the same by task credited
  };
  // Who a task was, kept for a credited task whose Utid was released before the record of a
  // task it is credited in is written.
  struct Identity {
    uint16_t host;
    int32_t tid;
    uint32_t comm;
  };

  Identity Who(TaskRef ref) const;
  void WriteWait(const ResolvedWait& wait, std::span<const PathSegment> pieces);
  void WriteTask(Utid u, const StateVec& breakdown,
                 const std::vector<std::pair<TaskRef, StateVec>>& by_task);
  void WriteRows(Utid u, const std::vector<std::pair<TaskRef, StateVec>>& by_task);
  bool csv_header_written_ = false;
  std::string TaskName(Utid u) const;
  // The name as text shows it (exporters/shown_name.h).
  std::string ShownName(Utid u) const;
  // JSON fragments written with every wait, escaped once: "host":…,"tid":… with or without
  // "pid", and "comm" (recomputed when the task's name or pid changes, or its Utid is reused).
  const std::string& TaskJson(Utid u, bool with_pid);
  const std::string& HostJson(uint16_t host);
  nlohmann::ordered_json Record(std::string_view type, Utid u) const;
  const std::string& HostName(uint16_t host) const { return accounting_.hosts()[host]; }

  WatchedAccounting& accounting_;
  const Engine& engine_;
  AnalysisOptions options_;
  std::ostream& out_;
  std::unordered_map<Utid, Tracked> tracked_;
  std::unordered_map<TaskRef, uint32_t> credited_;  // how many tracked tasks credit it
  std::unordered_map<TaskRef, Identity> released_;  // credited tasks whose Utid was released
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
