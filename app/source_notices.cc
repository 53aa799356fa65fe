#include "app/source_notices.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/output.h"
#include "exporters/clock_report.h"
#include "model/dialect.h"

namespace waitpath {

SourceNotices::SourceNotices(std::string relayd, std::string max_lag, MetricsExporter* metrics)
    : relayd_(std::move(relayd)), max_lag_(std::move(max_lag)), metrics_(metrics) {
  if (metrics_) metrics_->health().AddRelayd(relayd_);
}

// Lost once, however long it stays away, then reattached.
void SourceNotices::Relayd(uint16_t id, const std::string& label, const RelaydLink::Counts& now) {
  if (id >= relayd_seen_.size()) relayd_seen_.resize(id + 1u);
  RelaydLink::Counts& seen = relayd_seen_[id];
  for (RelaydLink::Turn turn : RelaydLink::TurnsBetween(seen, now)) {
    if (turn == RelaydLink::Turn::kLost) {
      fmt::print(
          stderr,
          "waitpath: host {}: lost the relayd; reattaching (the gap is counted as lost data)\n",
          label);
    } else {
      Say("waitpath: host {}: reattached to the relayd\n", label);
      if (metrics_) metrics_->health().AddRelaydReconnect(relayd_);
    }
  }
  if (metrics_ && now.failed > seen.failed) {
    metrics_->health().AddRelaydReconnectFailures(relayd_, now.failed - seen.failed);
  }
  seen = now;
}

void SourceNotices::Restarted(uint16_t id) {
  if (id < relayd_seen_.size()) relayd_seen_[id] = {};
}

void SourceNotices::Lag(uint16_t h, const std::string& host, const std::string& label, bool lagging,
                        uint64_t dropped) {
  if (h >= lagging_.size()) {
    // A new host: its gauge from the start.
    if (metrics_) metrics_->health().SetHostLagging(host, false);
    lagging_.resize(h + 1u, false);
    dropped_late_.resize(h + 1u, 0);
  }
  if (lagging != lagging_[h]) {
    if (metrics_) metrics_->health().SetHostLagging(host, lagging);
    if (lagging) {
      fmt::print(
          stderr,
          "waitpath: host {} is more than {} behind the others (a clock not synchronized, or a "
          "stalled stream): not waiting for it; its older events are dropped as lost\n",
          label, max_lag_);
    } else {
      Say("waitpath: host {} caught up\n", label);
    }
    lagging_[h] = lagging;
  }
  if (metrics_ && dropped != dropped_late_[h]) {
    metrics_->health().AddLateEventsDropped(host, dropped - dropped_late_[h]);
  }
  dropped_late_[h] = dropped;
}

void SourceNotices::Kernel(uint16_t h, const std::string& label, const ReaderCounters& reader,
                           bool ended) {
  static constexpr int64_t kJudgeAfterNs = 2'000'000'000;
  if (h >= kernel_judged_.size()) kernel_judged_.resize(h + 1u, false);
  if (kernel_judged_[h] || reader.events == 0) return;
  // The dialect grows as the host's streams show up (a kernel stream's first packet may come
  // after a user-space one's): judged once the host has read for a while, or at its end.
  if (!ended && reader.last_ns - reader.first_ns < kJudgeAfterNs) return;
  kernel_judged_[h] = true;
  if (reader.dialect & kDialectHasSwitch) return;
  Say("waitpath: host {}: no kernel scheduler events (sched_switch) in its session: its "
      "threads' states are unknown (trace its kernel too: configs/lttng/waitpath-session.sh)\n",
      label);
}

void SourceNotices::Clocks(const std::vector<HostClock>& clocks) {
  if (clocks.size() < 2) return;
  if (!said_reference_) {
    Say("waitpath: times are in the clock of host {} (the reference, the first by name)\n",
        clocks[0].reference);
    said_reference_ = true;
  }
  said_quality_.resize(clocks.size());
  for (size_t h = 0; h < clocks.size(); ++h) {
    const HostClock& c = clocks[h];
    if (c.host == c.reference || said_quality_[h] == c.quality) continue;
    said_quality_[h] = c.quality;
    Say("waitpath: {}\n", ClockSummary(c));
  }
}

}  // namespace waitpath
