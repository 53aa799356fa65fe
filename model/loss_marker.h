// The one maker of loss markers (EventKind::kLost): what a CPU lost, where it is merged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "model/event.h"

namespace waitpath {

// `cpu` of `host` lost `count` events (-1: unknown) from `since` on; the marker is merged at
// `ts` (the engine treats the CPU's state as unknown until its next switch).
inline Event LossMarker(uint16_t host, uint16_t cpu, int64_t ts, int64_t since, int32_t count) {
  Event e{};
  e.ts = ts;
  e.host = host;
  e.cpu = cpu;
  e.kind = EventKind::kLost;
  e.cur_tid = e.cur_pid = -1;
  e.a = count;
  e.x = since;
  return e;
}

// A discarded-events count as a marker carries it: capped to int32, -1 when not known.
inline int32_t LossCount(bool known, uint64_t count) {
  return known ? static_cast<int32_t>(std::min<uint64_t>(count, INT32_MAX)) : -1;
}

// A loss of unknown size at `ts` on each of `cpus` (a live input gap; a replayed host's UST
// loss, which cannot be placed on one original CPU).
inline void AppendLossMarkers(std::vector<Event>& out, uint16_t host,
                              std::span<const uint16_t> cpus, int64_t ts) {
  for (uint16_t cpu : cpus) out.push_back(LossMarker(host, cpu, ts, ts, -1));
}

}  // namespace waitpath
