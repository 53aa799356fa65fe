// What `live` says about its sources as they change, once per change, on stderr and in the
// pipeline-health metrics (docs/live.md): a reader's relayd lost and reattached; a host more
// than --max-lag behind the others and caught up, its late events dropped meanwhile; the
// reference clock and each host's sync quality.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exporters/metrics.h"
#include "model/batch.h"
#include "relayd/relayd_link.h"
#include "stream/clock_sync.h"

namespace waitpath {

class SourceNotices {
 public:
  // `relayd` and `max_lag` as given (for messages and metric labels); `metrics` may be null.
  SourceNotices(std::string relayd, std::string max_lag, MetricsExporter* metrics);

  // Source `id`'s relayd link as it is now; `label` names the source in messages.
  void Relayd(uint16_t id, const std::string& label, const RelaydLink::Counts& now);
  // Source `id` reads again with a new reader, whose link counts start from zero.
  void Restarted(uint16_t id);
  // Host `h` as the merger sees it now (hosts in id order, from 0): whether it lags, its late
  // events dropped so far.
  void Lag(uint16_t h, const std::string& host, const std::string& label, bool lagging,
           uint64_t dropped);
  bool lagging(uint16_t h) const { return h < lagging_.size() && lagging_[h]; }
  // Host `h`'s reading so far: once it has read events over 2 s of its trace, or ended, a line
  // when its session has no kernel scheduler events (a user-space-only session): without
  // sched_switch its threads' states are unknown, never `running` (Engine::OnCpu).
  void Kernel(uint16_t h, const std::string& label, const ReaderCounters& reader, bool ended);
  // The transforms changed: once there are two hosts, the reference; then a line per host
  // whenever its quality changes (a host that attaches later, a sync that becomes accurate or
  // fails), not at every new accuracy.
  void Clocks(const std::vector<HostClock>& clocks);

 private:
  std::string relayd_;
  std::string max_lag_;
  MetricsExporter* metrics_;
  std::vector<RelaydLink::Counts> relayd_seen_;  // per source, as last reported
  std::vector<bool> lagging_;                    // per host, as last reported
  std::vector<uint64_t> dropped_late_;           // per host, as last counted
  std::vector<bool> kernel_judged_;              // per host: Kernel() has decided
  bool said_reference_ = false;
  std::vector<std::optional<SyncQuality>> said_quality_;  // per host, as last said
};

}  // namespace waitpath
