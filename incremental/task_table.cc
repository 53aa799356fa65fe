#include "incremental/task_table.h"

namespace waitpath {

Utid TaskTable::Find(uint16_t host, int32_t tid) const {
  auto it = live_.find(Key(host, tid));
  return it == live_.end() ? kNoTask : it->second;
}

Utid TaskTable::GetOrCreate(uint16_t host, int32_t tid, int64_t ts, bool* created) {
  auto [it, inserted] = live_.try_emplace(Key(host, tid), kNoTask);
  if (!inserted && tasks_[it->second].end_ts != kNever) {
    // That task ended (its final switch-out after its exit) and its free was not traced:
    // the tid is being reused, by a task whose fork was not traced either.
    if (created) *created = true;
    return CreateFresh(host, tid, ts);
  }
  if (created) *created = inserted;
  if (inserted) it->second = NewSlot(host, tid, ts);
  return it->second;
}

Utid TaskTable::NewSlot(uint16_t host, int32_t tid, int64_t ts) {
  Utid u;
  if (!free_.empty()) {
    u = free_.back();
    free_.pop_back();
    const uint32_t generation = tasks_[u].generation + 1;
    tasks_[u] = Task{};
    tasks_[u].generation = generation;
  } else {
    u = static_cast<Utid>(tasks_.size());
    tasks_.emplace_back();
  }
  Task& t = tasks_[u];
  t.host = host;
  t.tid = tid;
  t.first_ts = ts;
  auto [it, inserted] = latest_.try_emplace(Key(host, tid), u);
  if (!inserted) {
    t.previous = it->second;
    t.previous_generation = tasks_[it->second].generation;
    it->second = u;
  }
  return u;
}

Utid TaskTable::FindAt(uint16_t host, int32_t tid, int64_t ts) const {
  auto it = latest_.find(Key(host, tid));
  if (it == latest_.end()) return kNoTask;
  Utid u = it->second;
  while (ts < tasks_[u].first_ts) {
    const Task& t = tasks_[u];
    if (t.previous == kNoTask || !tasks_[t.previous].in_use ||
        tasks_[t.previous].generation != t.previous_generation)
      return kNoTask;
    u = t.previous;
  }
  return u;
}

Utid TaskTable::CreateFresh(uint16_t host, int32_t tid, int64_t ts) {
  const Utid u = NewSlot(host, tid, ts);
  live_[Key(host, tid)] = u;
  return u;
}

void TaskTable::Release(Utid utid) {
  Retire(utid);
  const Task& t = tasks_[utid];
  auto it = latest_.find(Key(t.host, t.tid));
  if (it != latest_.end() && it->second == utid) latest_.erase(it);
  tasks_[utid].in_use = false;
  free_.push_back(utid);
}

void TaskTable::Retire(Utid utid) {
  const Task& t = tasks_[utid];
  auto it = live_.find(Key(t.host, t.tid));
  if (it != live_.end() && it->second == utid) live_.erase(it);
}

}  // namespace waitpath
