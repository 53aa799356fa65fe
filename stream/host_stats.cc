#include "stream/host_stats.h"

namespace waitpath {

void HostStats::Add(const Batch& batch) {
  for (const Event& e : batch.events) {
    ++by_kind[static_cast<int>(e.kind)];
    ++events_by_cpu[e.cpu];
    if (e.kind == EventKind::kLost) {
      ++loss_markers;
      if (e.a > 0) discarded_by_cpu[e.cpu] += static_cast<uint64_t>(e.a);
    }
  }
  reader = batch.counters;
  if (batch.last) {
    ended = true;
    error = batch.error;
  }
}

}  // namespace waitpath
