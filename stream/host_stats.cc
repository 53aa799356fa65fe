#include "stream/host_stats.h"

#include <algorithm>

#include "live/event_views.h"

namespace waitpath {

void HostStats::Add(const Batch& batch) {
  for (const Event& e : batch.events) {
    ++by_kind[static_cast<int>(e.kind)];
    ++events_by_cpu[e.cpu];
    if (e.kind == EventKind::kLost) {
      ++loss_markers;
      const int32_t count = AsLost(e).count();
      if (count > 0) discarded_by_cpu[e.cpu] += static_cast<uint64_t>(count);
      current_by_cpu.erase(e.cpu);
    } else if (e.kind == EventKind::kSchedSwitch) {
      current_by_cpu[e.cpu] = std::max(AsSchedSwitch(e).next_tid(), 0);
    } else if (e.cur_tid >= 0) {
      auto [it, inserted] = current_by_cpu.try_emplace(e.cpu, e.cur_tid);
      if (!inserted && it->second != e.cur_tid) {
        ++inferred_switches;
        it->second = e.cur_tid;
      }
    }
  }
  reader = batch.counters;
  if (batch.last) {
    ended = true;
    error = batch.error;
  }
}

}  // namespace waitpath
