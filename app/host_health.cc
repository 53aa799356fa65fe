#include "app/host_health.h"

#include <fmt/format.h>

#include <algorithm>

#include "exporters/clock_report.h"

namespace waitpath {

void HostHealthModel::ObserveBatch(const Batch& batch) {
  if (batch.host >= emitted_ns_.size()) emitted_ns_.resize(batch.host + 1u, 0);
  if (batch.counters.emitted_ns != 0) emitted_ns_[batch.host] = batch.counters.emitted_ns;
}

std::vector<HostHealth> HostHealthModel::Rows(const std::vector<Host>& hosts, size_t sources,
                                              Clock::time_point now, int64_t wall_ns) {
  const double dt = std::chrono::duration<double>(now - last_at_).count();
  last_at_ = now;
  events_seen_.resize(hosts.size(), 0);
  emitted_ns_.resize(hosts.size(), 0);
  lost_since_.resize(hosts.size());
  outages_.resize(hosts.size(), Clock::duration::zero());
  std::vector<HostHealth> out;
  for (size_t h = 0; h < hosts.size(); ++h) {
    const Host& host = hosts[h];
    HostHealth x;
    x.name = host.name;
    x.events_per_s = dt > 0 ? static_cast<double>(host.events - events_seen_[h]) / dt : 0;
    events_seen_[h] = host.events;
    x.lost = host.lost;
    x.gaps = host.gaps;
    // Outages in wall time: what the screen can say of data that never came.
    const bool was_lost = lost_since_[h] != Clock::time_point{};
    if (host.relayd_lost && !was_lost) lost_since_[h] = now;
    if (!host.relayd_lost && was_lost) {
      outages_[h] += now - lost_since_[h];
      lost_since_[h] = Clock::time_point{};
    }
    const Clock::duration ongoing =
        host.relayd_lost ? now - lost_since_[h] : Clock::duration::zero();
    x.outage_s = std::chrono::duration<double>(outages_[h] + ongoing).count();
    const int64_t at = emitted_ns_[h] != 0 ? emitted_ns_[h] : host.analysed_to;
    if (!host.ended && at != std::numeric_limits<int64_t>::min())
      x.lag_s = static_cast<double>(std::max<int64_t>(0, wall_ns - at)) * 1e-9;
    if (clocks_.size() >= 2) {
      for (const HostClock& c : clocks_) {
        if (c.host != host.name) continue;
        x.sync = c.host == c.reference ? std::string("reference")
                                       : fmt::format("{} {}", FormatClockAccuracy(c.accuracy),
                                                     SyncQualityName(c.quality));
      }
    } else if (sources >= 2) {
      x.sync = "synchronizing";
    }
    if (host.lagging) x.state = "lagging (events dropped)";
    if (host.relayd_lost)
      x.state = "relayd lost for " + FormatAge(std::chrono::duration<double>(ongoing).count());
    if (host.ended) x.state = "ended";
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace waitpath
