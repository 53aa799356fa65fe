// Per-host reading figures (what `waitpath stats` reports and pipeline-health metrics use).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/batch.h"

namespace waitpath {

struct HostStats {
  std::string host;
  ReaderCounters reader;  // latest cumulative reader figures
  std::array<uint64_t, kEventKindCount> by_kind{};
  std::map<uint16_t, uint64_t> events_by_cpu;  // decoded events per CPU
  std::map<uint16_t, uint64_t> discarded_by_cpu;
  uint64_t loss_markers = 0;  // discarded-events reports (count may be unknown)
  // Events that name their CPU's current task (perf, LTTng's tid context) naming another than
  // the last sched_switch put there: a switch was lost (the engine's rule, Engine::InferSwitch).
  uint64_t inferred_switches = 0;
  std::vector<int32_t> current_by_cpu;  // by CPU id: tid; -1 or absent: not known (start, loss)
  std::string error;                    // why reading stopped early, if it did
  bool ended = false;
  ReaderCounters before;  // of the readers before the current one (Resume), else zero

  void Add(const Batch& batch);
  // Live: the host reads again with a new reader (a recreated session), whose counters start
  // from zero: they are added to those of the readers before it, and the break between them
  // is one more gap.
  void Resume();

  // The analysis needs at least scheduler switches; a UST-only trace has none.
  bool analysable() const { return by_kind[static_cast<int>(EventKind::kSchedSwitch)] > 0; }
};

}  // namespace waitpath
