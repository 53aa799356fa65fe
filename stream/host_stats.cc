#include "stream/host_stats.h"

#include <algorithm>

#include "model/event_views.h"

namespace waitpath {

namespace {

// `now` (the current reader's figures) on top of `before` (those of the readers before it).
ReaderCounters Combined(const ReaderCounters& before, const ReaderCounters& now) {
  ReaderCounters c = now;
  c.events += before.events;
  c.unknown += before.unknown;
  c.regressions += before.regressions;
  c.discarded += before.discarded;
  c.first_ns = std::min(before.first_ns, now.first_ns);
  c.last_ns = std::max(before.last_ns, now.last_ns);
  c.dialect |= before.dialect;
  c.cpus = std::max(before.cpus, now.cpus);
  c.gaps += before.gaps;
  c.damaged += before.damaged;
  if (c.emitted_ns == 0) c.emitted_ns = before.emitted_ns;
  return c;
}

}  // namespace

void HostStats::Resume() {
  before = reader;
  ++before.gaps;
  ended = false;
  error.clear();
}

void HostStats::Add(const Batch& batch) {
  // CPU ids are small: the batch's events are counted in a dense array, folded into the map
  // once per batch (a map lookup per event was most of this function's cost).
  uint64_t* counts = nullptr;
  std::vector<uint64_t> by_cpu;
  for (const Event& e : batch.events) {
    ++by_kind[static_cast<int>(e.kind)];
    if (e.cpu >= by_cpu.size()) {
      by_cpu.resize(e.cpu + size_t{1});
      counts = by_cpu.data();
    }
    ++counts[e.cpu];
    if (e.cpu >= current_by_cpu.size()) current_by_cpu.resize(e.cpu + size_t{1}, -1);
    int32_t& current = current_by_cpu[e.cpu];
    if (e.kind == EventKind::kLost) {
      ++loss_markers;
      const int32_t count = AsLost(e).count();
      if (count > 0) discarded_by_cpu[e.cpu] += static_cast<uint64_t>(count);
      current = -1;
    } else if (e.kind == EventKind::kSchedSwitch) {
      current = std::max(AsSchedSwitch(e).next_tid(), 0);
    } else if (e.cur_tid >= 0) {
      if (current >= 0 && current != e.cur_tid) ++inferred_switches;
      current = e.cur_tid;
    }
  }
  for (size_t cpu = 0; cpu < by_cpu.size(); ++cpu) {
    if (by_cpu[cpu]) events_by_cpu[static_cast<uint16_t>(cpu)] += by_cpu[cpu];
  }
  reader = Combined(before, batch.counters);
  if (batch.last) {
    ended = true;
    error = batch.error;
  }
}

}  // namespace waitpath
