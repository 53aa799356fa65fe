#include "exporters/metrics_health.h"

namespace waitpath {
namespace {

template <typename Builder>
auto& Family(Builder builder, const char* name, const char* help, prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

}  // namespace

PipelineHealthMetrics::PipelineHealthMetrics(prometheus::Registry& r)
    : events_(Family(prometheus::BuildCounter(), "waitpath_events_total",
                     "Trace events read per host, of every class", r)),
      discarded_(Family(prometheus::BuildCounter(), "waitpath_events_discarded_total",
                        "Events the tracer reported as lost per host", r)),
      regressions_(Family(prometheus::BuildCounter(), "waitpath_timestamp_regressions_total",
                          "Event timestamps that went backwards and were clamped", r)),
      lag_(Family(prometheus::BuildGauge(), "waitpath_stream_lag_seconds",
                  "How far the host's analysed stream is behind (live: the wall clock; "
                  "offline: the most advanced host)",
                  r)),
      reconnects_(Family(prometheus::BuildCounter(), "waitpath_relayd_reconnects_total",
                         "Relay daemon connections reattached after they were lost", r)),
      reconnect_failures_(
          Family(prometheus::BuildCounter(), "waitpath_relayd_reconnect_failures_total",
                 "Attempts to reattach a lost relay daemon connection that failed", r)),
      sync_quality_(Family(prometheus::BuildGauge(), "waitpath_clock_sync_quality",
                           "1 for the host's current clock synchronization quality, else 0", r)),
      sync_accuracy_(Family(prometheus::BuildGauge(), "waitpath_clock_sync_accuracy_seconds",
                            "Accuracy bound of the host's clock transform", r)),
      matched_(Family(prometheus::BuildCounter(), "waitpath_packets_matched_total",
                      "Received packets matched with their send, by receiving host and sender "
                      "host (peer)",
                      r)),
      expired_(Family(prometheus::BuildCounter(), "waitpath_packets_expired_total",
                      "Sent packets never matched with a receive, dropped after the expiry", r)),
      waits_(Family(prometheus::BuildCounter(), "waitpath_waits_resolved_total",
                    "Waits resolved per host (every task, watched or not)", r)),
      pending_cross_host_(Family(prometheus::BuildGauge(), "waitpath_pending_cross_host_waits",
                                 "Cross-host waits waiting for their sender's host to progress", r)
                              .Add({})),
      history_bytes_(Family(prometheus::BuildGauge(), "waitpath_history_bytes",
                            "Memory held by retained task histories", r)
                         .Add({})),
      history_evictions_(Family(prometheus::BuildCounter(), "waitpath_history_evictions_total",
                                "History segments evicted (retention window or byte cap)", r)
                             .Add({})),
      evicted_reads_(Family(prometheus::BuildCounter(), "waitpath_history_evicted_reads_total",
                            "Path queries that reached into evicted history (counted unknown)", r)
                         .Add({})),
      inferred_switches_(
          Family(prometheus::BuildCounter(), "waitpath_inferred_switches_total",
                 "Events naming another current task than the last sched_switch: a lost "
                 "switch inferred",
                 r)
              .Add({})),
      tasks_released_(Family(prometheus::BuildCounter(), "waitpath_tasks_released_total",
                             "Ended tasks whose memory was reclaimed and id reused", r)
                          .Add({})),
      late_dropped_(Family(prometheus::BuildCounter(), "waitpath_late_events_dropped_total",
                           "Live: events of a host lagging more than --max-lag behind the others, "
                           "dropped as lost",
                           r)),
      lagging_(Family(prometheus::BuildGauge(), "waitpath_host_lagging",
                      "Live: 1 while the host lags more than --max-lag behind the others", r)) {}

void PipelineHealthMetrics::AddLateEventsDropped(const std::string& host, uint64_t n) {
  late_dropped_.Add({{"host", host}}).Increment(static_cast<double>(n));
}

void PipelineHealthMetrics::SetHostLagging(const std::string& host, bool lagging) {
  lagging_.Add({{"host", host}}).Set(lagging ? 1 : 0);
}

void PipelineHealthMetrics::ObserveReader(const std::string& host, const ReaderCounters& c) {
  std::lock_guard lock(mutex_);
  auto it = readers_.find(host);
  if (it == readers_.end()) {
    const prometheus::Labels labels{{"host", host}};
    it = readers_
             .emplace(
                 host,
                 HostReader{
                     &events_.Add(labels), &discarded_.Add(labels), &regressions_.Add(labels), {}})
             .first;
  }
  HostReader& h = it->second;
  // Cumulative figures only grow; a restarted reader (live reattach) starts again from 0.
  auto follow = [](prometheus::Counter* counter, uint64_t now, uint64_t& last) {
    counter->Increment(static_cast<double>(now >= last ? now - last : now));
    last = now;
  };
  follow(h.events, c.events, h.last.events);
  follow(h.discarded, c.discarded, h.last.discarded);
  follow(h.regressions, c.regressions, h.last.regressions);
}

prometheus::Gauge& PipelineHealthMetrics::StreamLag(const std::string& host) {
  return lag_.Add({{"host", host}});
}

void PipelineHealthMetrics::AddRelaydReconnect(const std::string& relayd) {
  reconnects_.Add({{"relayd", relayd}}).Increment();
}

void PipelineHealthMetrics::AddRelaydReconnectFailures(const std::string& relayd, uint64_t n) {
  reconnect_failures_.Add({{"relayd", relayd}}).Increment(static_cast<double>(n));
}

void PipelineHealthMetrics::SetClockSync(const std::string& host, std::string_view quality,
                                         std::optional<double> accuracy_seconds) {
  bool known = false;
  for (std::string_view q : kSyncQualities) known |= q == quality;
  if (!known) return;
  for (std::string_view q : kSyncQualities) {
    sync_quality_.Add({{"host", host}, {"quality", std::string(q)}}).Set(q == quality ? 1 : 0);
  }
  if (accuracy_seconds) sync_accuracy_.Add({{"host", host}}).Set(*accuracy_seconds);
}

void PipelineHealthMetrics::AddPacketsMatched(const std::string& host, const std::string& peer,
                                              uint64_t n) {
  matched_.Add({{"host", host}, {"peer", peer}}).Increment(static_cast<double>(n));
}

void PipelineHealthMetrics::AddPacketsExpired(const std::string& host, uint64_t n) {
  expired_.Add({{"host", host}}).Increment(static_cast<double>(n));
}

prometheus::Counter& PipelineHealthMetrics::WaitsResolved(const std::string& host) {
  return waits_.Add({{"host", host}});
}

}  // namespace waitpath
