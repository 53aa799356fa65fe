// Dense task ids (Utid) for every thread of every host, with what is known of each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "incremental/leaf_state.h"

namespace waitpath {

using Utid = uint32_t;
inline constexpr Utid kNoTask = std::numeric_limits<Utid>::max();
inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

struct Task {
  uint16_t host = 0;
  int32_t tid = 0;
  int32_t pid = -1;        // -1 until a fork, statedump or perf context says
  uint32_t comm = 0;       // interned name, the latest seen
  uint32_t cgroup = 0;     // interned cgroup v2 path (kmod/ events; inherited at fork), 0: unknown
  Utid parent = kNoTask;   // set when the fork was traced
  int64_t birth = kNever;  // fork time when traced
  StateVec parent_origin;  // the parent's cumulative vector at the fork
  int64_t first_ts = 0;    // first mention in the trace: start of its history
  int64_t exit_ts = kNever;  // sched_process_exit
  int64_t end_ts = kNever;   // its final switch-out after the exit: the end of its life
  uint32_t generation = 0;   // how many tasks had this Utid before (ids are reused)
  bool ran = false;          // was switched in at least once
  bool in_use = true;        // false: released, the slot waits for its next task
  bool remote = false;       // a sender on another shard's host (docs/scale.md): no history
  // The task that had this tid before it on this host, while its slot is not reused (FindAt).
  Utid previous = kNoTask;
  uint32_t previous_generation = 0;
};

// A reference to a task that stays unambiguous after its Utid is reused.
using TaskRef = uint64_t;
inline constexpr TaskRef MakeTaskRef(Utid u, uint32_t generation) {
  return (static_cast<uint64_t>(generation) << 32) | u;
}
inline constexpr Utid RefUtid(TaskRef r) {
  return static_cast<Utid>(r);
}

class TaskTable {
 public:
  // The live task with this tid on this host, or kNoTask.
  Utid Find(uint16_t host, int32_t tid) const;
  // The task that had this tid at `ts` (its first mention at or before it): the latest one, or
  // one before it that ended and whose slot is not reused yet; kNoTask when none is known. A
  // shard asked about a time it has gone past (docs/scale.md, "Who computes what") may have
  // seen the tid reused since.
  Utid FindAt(uint16_t host, int32_t tid, int64_t ts) const;
  // The live task with this tid, created (first mention at `ts`) when unknown or when the
  // task that had it has ended (a tid reused after an exit is a new task).
  Utid GetOrCreate(uint16_t host, int32_t tid, int64_t ts, bool* created = nullptr);
  // A new task for `tid` (a fork): any older task with that tid stops being findable.
  Utid CreateFresh(uint16_t host, int32_t tid, int64_t ts);
  // Forget the tid -> task mapping (after the task is freed); the Task itself stays.
  void Retire(Utid utid);
  // The task is gone and nothing refers to it any more: its Utid will name a later task.
  void Release(Utid utid);
  TaskRef Ref(Utid u) const { return MakeTaskRef(u, tasks_[u].generation); }
  // Slots ever used; released ones have in_use false.
  size_t in_use() const { return tasks_.size() - free_.size(); }

  Task& operator[](Utid u) { return tasks_[u]; }
  const Task& operator[](Utid u) const { return tasks_[u]; }
  size_t size() const { return tasks_.size(); }

 private:
  static uint64_t Key(uint16_t host, int32_t tid) {
    return (static_cast<uint64_t>(host) << 32) | static_cast<uint32_t>(tid);
  }
  Utid NewSlot(uint16_t host, int32_t tid, int64_t ts);

  std::vector<Task> tasks_;
  std::vector<Utid> free_;  // released slots, reused last-in first-out
  std::unordered_map<uint64_t, Utid> live_;
  // The latest task of each tid, ended ones included until their slot is released (FindAt).
  std::unordered_map<uint64_t, Utid> latest_;
};

}  // namespace waitpath
