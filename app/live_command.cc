// `waitpath live` and `waitpath tail`: one reader thread per live session (discovered on the
// relayd and picked up while running), the engine on this thread, until stopped.
#include "app/live_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "app/command.h"
#include "app/engine_feed.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "app/report_flags.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/stop_signal.h"
#include "base/untrusted_name.h"
#include "exporters/analysis_report.h"
#include "exporters/clock_report.h"
#include "exporters/labeled_collectable.h"
#include "exporters/metrics.h"
#include "exporters/metrics_server.h"
#include "exporters/terminal_screen.h"
#include "exporters/triage_view.h"
#include "exporters/wait_fanout.h"
#include "fleet/nats_bus.h"
#include "fleet/shard_peers.h"
#include "live/bt_util.h"
#include "live/relayd_link.h"
#include "live/session_discovery.h"
#include "stream/clock_sync.h"
#include "stream/pipeline.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

// The sessions to follow, as they come and go on the relayd: each is a source of the live
// pipeline (stream/pipeline.h, kBootstrap: clocks synchronized from the packets as they arrive,
// events merged in reference time, so that a wait ended by another host's packet follows the
// sender there, as offline; docs/sync.md). This class finds sessions and reports on them.
class LiveSessions : public EngineFeed {
 public:
  LiveSessions(const LiveOptions& options, Engine& engine, WatchedAccounting& accounting,
               MetricsExporter* metrics)
      : EngineFeed(engine),
        engine_(engine),
        options_(options),
        accounting_(accounting),
        metrics_(metrics),
        pipeline_(PipelineFor(options), this) {}

  ~LiveSessions() override { StopAll(); }

  // Lists the relayd's sessions and attaches to the wanted ones not followed yet.
  void Discover() {
    std::vector<LiveSession> sessions;
    std::string error;
    if (!QuerySessions(options_.relayd, &sessions, &error)) {
      if (error != last_error_) Say("waitpath: {} (retrying)\n", error);
      last_error_ = error;
      return;
    }
    if (!last_error_.empty()) Say("waitpath: relayd {} reachable\n", options_.relayd);
    last_error_.clear();
    // The relayd answers: a reader that lost it reattaches now rather than at the end of its
    // backoff (up to 5 s), before its session could be let go below as gone.
    for (size_t h = 0; h < pipeline_.source_count(); ++h) {
      if (pipeline_.source(h).relayd().lost()) pipeline_.source(h).RetryNow();
    }
    // A session gone from the relayd whose reader still waits (babeltrace2 2.0's live
    // iterator can wait forever on a session that ended before it attached) is let go after
    // a grace period for its last data.
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [url, id] : by_url_) {
      const bool listed = std::any_of(sessions.begin(), sessions.end(),
                                      [&](const LiveSession& s) { return s.url == url; });
      if (listed || ended_[id]) {
        gone_since_[id] = {};
      } else if (gone_since_[id] == std::chrono::steady_clock::time_point{}) {
        gone_since_[id] = now;
      } else if (now - gone_since_[id] > std::chrono::seconds(5)) {
        pipeline_.source(id).RequestStop();
      }
    }
    for (const LiveSession& s : sessions) {
      if (auto it = by_url_.find(s.url); it != by_url_.end()) {
        Reopen(it->second, s);
        continue;
      }
      const bool wanted =
          options_.all || std::find(options_.sessions.begin(), options_.sessions.end(), s.name) !=
                              options_.sessions.end();
      if (!wanted || (shard_ && !shard_->Owns(s.hostname))) continue;
      accounting_.AddHost(s.hostname);
      if (metrics_) metrics_->AddHost(s.hostname);
      labels_.push_back(PrintableName(s.hostname) + " (session " + PrintableName(s.name) + ")");
      relayd_seen_.emplace_back();
      ended_.push_back(false);
      reopenable_.push_back(false);
      gone_since_.emplace_back();
      by_url_[s.url] = pipeline_.AddSource(HostSpec{s.hostname, {}, {}, s.url, {}, {}, {}});
      Say("waitpath: following session {} of host {}\n", PrintableName(s.name),
          PrintableName(s.hostname));
    }
  }

  // A session listed under the URL of one whose reader ended. The relayd lists only sessions
  // still connected to their tracer (lttng-relayd's viewer_list_sessions skips closed ones),
  // so this is a new session of that name: the host's session was destroyed and created again
  // (configs/lttng/waitpath-session.sh always names it `waitpath`), or the relayd restarted
  // and it was created anew. It is followed as the same host, history kept, the time between
  // counted as lost (Pipeline::ReopenSource). A reader that ended on an error (refused by
  // the relayd, a protocol error) is not retried this way.
  void Reopen(uint16_t id, const LiveSession& s) {
    if (!ended_[id] || !reopenable_[id] || !pipeline_.ReopenSource(id)) return;
    ended_[id] = false;
    reopenable_[id] = false;
    gone_since_[id] = {};
    relayd_seen_[id] = {};
    Say("waitpath: following session {} of host {} again (created anew on the relayd; the time "
        "between is counted as lost)\n",
        PrintableName(s.name), PrintableName(s.hostname));
  }

  // A shard follows only the sessions of the hosts it owns (--own).
  void SetShard(const ShardPeers* shard) { shard_ = shard; }

  // Captures of slow waits (--capture-dir), cut once the engine is past their window.
  void SetCapture(WaitCapture* capture) { capture_ = capture; }

  // Without --capture-traces: the traces of `host` from the packets its readers keep
  // (--capture-ring-mb), written under `scratch` for the capture to cut.
  std::vector<std::string> RingTraces(const std::string& host, const std::string& scratch) {
    std::vector<std::string> dirs;
    for (size_t h = 0; h < pipeline_.source_count(); ++h) {
      const HostReader& reader = pipeline_.source(h);
      if (reader.spec().hostname != host || !reader.ring()) continue;
      std::string error;
      const std::string dir = scratch + "/" + std::to_string(h);
      std::vector<std::string> traces = reader.ring()->WriteTo(dir, &error);
      if (!error.empty()) Say("waitpath: host {}: capture: {}\n", labels_[h], error);
      dirs.insert(dirs.end(), traces.begin(), traces.end());
    }
    return dirs;
  }

  // Feeds whatever the readers have read to the engine; waits up to `timeout_us` for more.
  void Pump(int64_t timeout_us) {
    pipeline_.Pump(timeout_us);
    Report();
    Capture(false);
    // What the batches' waits printed goes out now, not when the pipe's buffer is full: a
    // `live --json | jq` of one slow wait a minute would otherwise see it only kilobytes later.
    std::cout.flush();
  }

  void StopAll() {
    if (stopping_) return;
    stopping_ = true;
    pipeline_.Drain();
    Report();
    Capture(true);
    for (size_t h = 0; h < pipeline_.source_count(); ++h) {
      const PacketRing* ring = pipeline_.source(h).ring();
      if (!ring || !capture_) continue;
      const PacketRing::Counts c = ring->counts();
      Say("waitpath: host {}: capture ring: {} packets ({:.1f} MB) kept, {} older ones dropped\n",
          labels_[h], c.packets, static_cast<double>(c.bytes) / (1 << 20), c.dropped);
    }
  }

  // The pipeline's sink: clocks, batches, ends, on top of feeding the engine.
  void OnClocks(const std::vector<HostClock>& clocks) override {
    // Once there are two hosts, the reference; then a line per host whenever its quality
    // changes (a host that attaches later, a sync that becomes accurate or fails), not at
    // every new accuracy.
    if (clocks.size() >= 2) {
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
    clocks_ = clocks;
    EngineFeed::OnClocks(clocks);
    if (capture_) capture_->SetClocks(clocks);
    if (!metrics_) return;
    for (const HostClock& c : clocks) {
      metrics_->health().SetClockSync(c.host, std::string(SyncQualityName(c.quality)),
                                      c.accuracy / 1e9);
    }
    // Remote waits never queue here (released in reference time, a missing send counts as
    // network at once): the gauge says so.
    metrics_->health().SetPendingCrossHostWaits(0);
  }
  void OnBatchDone(const Batch& batch) override {
    if (batch.host >= emitted_ns_.size()) emitted_ns_.resize(batch.host + 1u, 0);
    if (batch.counters.emitted_ns != 0) emitted_ns_[batch.host] = batch.counters.emitted_ns;
    if (capture_ && !batch.events.empty())
      capture_->ObserveClockOffset(batch.host, batch.events.back().ts, batch.clock_offset_ns);
    if (!metrics_) return;
    metrics_->ObserveBatch(batch);
    const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    metrics_->ObserveEngine(wall);
  }
  void OnHostEnded(uint16_t h, const Batch& last) override {
    ended_[h] = true;
    const bool let_go = last.error == "stopped" && !stopping_;
    reopenable_[h] = last.error.empty() || let_go;
    Say("waitpath: host {}: {}\n", labels_[h],
        last.error.empty() ? "session ended"
        : let_go           ? "session ended (gone from the relayd)"
                           : last.error);
  }

  // Each followed host's stream as the terminal view shows it (health since the last call).
  std::vector<HostHealth> Health() {
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - health_at_).count();
    health_at_ = now;
    const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    const std::vector<HostStats>& stats = pipeline_.stats();
    const TimeMerger& merger = pipeline_.merger();
    events_seen_.resize(stats.size(), 0);
    emitted_ns_.resize(stats.size(), 0);
    std::vector<HostHealth> out;
    for (uint16_t h = 0; h < stats.size(); ++h) {
      const HostStats& s = stats[h];
      HostHealth x;
      x.name = s.host;
      x.events_per_s = dt > 0 ? static_cast<double>(s.reader.events - events_seen_[h]) / dt : 0;
      events_seen_[h] = s.reader.events;
      x.lost = s.reader.discarded + s.reader.gaps + s.reader.damaged +
               (h < merger.host_count() ? merger.dropped_late(h) : 0);
      const bool ended = h < ended_.size() && ended_[h];
      // As the metrics measure it: a replayed host by when its events were emitted.
      const int64_t at = emitted_ns_[h] != 0 ? emitted_ns_[h] : engine_.host_now(h);
      if (!ended && at != std::numeric_limits<int64_t>::min())
        x.lag_s = static_cast<double>(std::max<int64_t>(0, wall - at)) * 1e-9;
      if (clocks_.size() >= 2) {
        for (const HostClock& c : clocks_) {
          if (c.host != s.host) continue;
          x.sync = c.host == c.reference ? std::string("reference")
                                         : fmt::format("+/-{} {}", FormatAccuracy(c.accuracy),
                                                       SyncQualityName(c.quality));
        }
      } else if (pipeline_.source_count() >= 2) {
        x.sync = "synchronizing";
      }
      if (h < lagging_.size() && lagging_[h]) x.state = "lagging (events dropped)";
      if (h < pipeline_.source_count() && pipeline_.source(h).relayd().lost())
        x.state = "relayd lost";
      if (ended) x.state = "ended";
      out.push_back(std::move(x));
    }
    return out;
  }

 private:
  static std::string FormatAccuracy(double ns) {
    if (ns >= 1e6) return fmt::format("{:.1f} ms", ns / 1e6);
    if (ns >= 1e3) return fmt::format("{:.0f} us", ns / 1e3);
    return fmt::format("{:.0f} ns", ns);
  }

  static PipelineOptions PipelineFor(const LiveOptions& options) {
    PipelineOptions p;
    p.policy = SyncPolicy::kBootstrap;
    p.reader.verbose = options.verbose;
    p.reader.decoder = DecoderChoice(options.decoder);
    if (!options.capture.dir.empty() && options.capture.traces.empty())
      p.reader.capture_ring_bytes = options.capture.ring_mb << 20;
    p.max_lag_ns = options.max_lag_ns;
    return p;
  }

  void Report() {
    for (size_t h = 0; h < pipeline_.source_count(); ++h) ReportRelayd(h);
    ReportLag();
  }
  // The relayd stores a packet before a live viewer can read it, so once the engine has
  // events past a wait's window, the packets of that window are on disk; `kSettleNs` more for
  // the CPUs whose packets close later (an idle CPU's packet closes at the live timer).
  void Capture(bool all) {
    static constexpr int64_t kSettleNs = 500'000'000;
    if (!capture_ || capture_->pending() == 0) return;
    int64_t now = INT64_MIN;
    for (uint16_t h = 0; h < accounting_.hosts().size(); ++h)
      now = std::max(now, engine_.host_now(h));
    const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    for (const CaptureMade& made : capture_->Poll(all ? INT64_MAX : now, kSettleNs, wall))
      Say("waitpath: captured {}\n", made.dir);
    if (metrics_) metrics_->ObserveCaptures(capture_->counters());
  }

  // A reader's relayd connection: lost (once, however long it stays away) and reattached.
  void ReportRelayd(size_t h) {
    const RelaydLink::Counts now = pipeline_.source(h).relayd();
    RelaydLink::Counts& seen = relayd_seen_[h];
    for (RelaydLink::Turn turn : RelaydLink::TurnsBetween(seen, now)) {
      if (turn == RelaydLink::Turn::kLost) {
        fmt::print(
            stderr,
            "waitpath: host {}: lost the relayd; reattaching (the gap is counted as lost data)\n",
            labels_[h]);
      } else {
        Say("waitpath: host {}: reattached to the relayd\n", labels_[h]);
        if (metrics_) metrics_->health().AddRelaydReconnect(options_.relayd);
      }
    }
    if (metrics_ && now.failed > seen.failed) {
      metrics_->health().AddRelaydReconnectFailures(options_.relayd, now.failed - seen.failed);
    }
    seen = now;
  }

  // A host lagging past --max-lag: said once when it starts and once when it ends; its
  // events dropped meanwhile are counted (docs/live.md).
  void ReportLag() {
    const TimeMerger& merger = pipeline_.merger();
    const std::vector<HostStats>& stats = pipeline_.stats();
    for (size_t h = lagging_.size(); h < merger.host_count(); ++h) {
      if (metrics_) metrics_->health().SetHostLagging(stats[h].host, false);
    }
    lagging_.resize(merger.host_count(), false);
    dropped_late_.resize(merger.host_count(), 0);
    for (uint16_t h = 0; h < merger.host_count(); ++h) {
      const bool lagging = merger.lagging(h);
      if (lagging != lagging_[h]) {
        if (metrics_) metrics_->health().SetHostLagging(stats[h].host, lagging);
        if (lagging) {
          fmt::print(
              stderr,
              "waitpath: host {} is more than {} behind the others (a clock not synchronized, or a "
              "stalled stream): not waiting for it; its older events are dropped as lost\n",
              labels_[h], options_.max_lag);
        } else {
          Say("waitpath: host {} caught up\n", labels_[h]);
        }
        lagging_[h] = lagging;
      }
      const uint64_t dropped = merger.dropped_late(h);
      if (metrics_ && dropped != dropped_late_[h]) {
        metrics_->health().AddLateEventsDropped(stats[h].host, dropped - dropped_late_[h]);
      }
      dropped_late_[h] = dropped;
    }
  }

  const Engine& engine_;
  const LiveOptions& options_;
  WatchedAccounting& accounting_;
  WaitCapture* capture_ = nullptr;
  const ShardPeers* shard_ = nullptr;
  MetricsExporter* metrics_;
  std::vector<std::string> labels_;              // "host (session name)", for messages
  std::vector<RelaydLink::Counts> relayd_seen_;  // per source, as last reported
  std::vector<bool> ended_;
  std::vector<bool> reopenable_;        // per source: ended as a session ends, not on an error
  std::vector<bool> lagging_;           // per host, as last reported
  std::vector<uint64_t> dropped_late_;  // per host, as last counted
  std::vector<std::chrono::steady_clock::time_point> gone_since_;
  bool stopping_ = false;
  bool said_reference_ = false;
  std::vector<std::optional<SyncQuality>> said_quality_;  // by host, as last said
  std::vector<HostClock> clocks_;                         // as last told
  std::vector<int64_t> emitted_ns_;    // per host: ReaderCounters::emitted_ns, as analysed
  std::vector<uint64_t> events_seen_;  // per host, at the last Health()
  std::chrono::steady_clock::time_point health_at_ = std::chrono::steady_clock::now();
  std::map<std::string, uint16_t> by_url_;
  std::string last_error_;
  Pipeline pipeline_;  // last: its readers stop before the rest goes
};

}  // namespace

namespace {

// What the terminal view says it reads, and which filters it applies.
std::string FiltersText(const LiveOptions& options) {
  std::string f;
  if (!options.min_wait.empty()) f += "min-wait " + options.min_wait;
  if (!options.states.empty())
    f += (f.empty() ? "" : ", ") + std::string("state ") + options.states;
  return f;
}

// What tail and live print of waits, registered with the accounting in place: the terminal
// view, or the report's lines.
struct WaitOutput {
  WaitOutput(WatchedAccounting& accounting, bool screen, const TriageOptions& triage,
             const AnalysisOptions& report_options) {
    if (screen) {
      view.emplace(accounting, triage);
    } else {
      report.emplace(accounting, report_options, std::cout);
    }
  }
  std::optional<AnalysisReport> report;
  std::optional<TriageView> view;
};

// The summary the terminal view leaves behind (at Ctrl-C, q, or the end of recorded traces).
void PrintSummary(const TriageView& view, ScreenStatus status) {
  status.final = true;
  int width, height;
  TerminalScreen::Size(&width, &height);
  std::string text;
  for (const std::string& line : RenderTriage(view, status, width, 0)) text += line + "\n";
  std::cout << text << std::flush;
}

}  // namespace

int RunLive(const LiveOptions& options, std::atomic<bool>* stop) {
  ConfigureBabeltraceLogging(options.verbose);
  std::atomic<bool>* stopping = stop;
  if (!stopping) {
    InstallStopSignal();
    stopping = &StopRequested();
  }
  WatchSet watch;
  std::string error;
  AnalysisOptions report_options;
  report_options.json = options.json;
  report_options.time_format = options.time_format;
  report_options.task_records = !options.tail;
  // tail shows every wait unless told otherwise; live only with --min-wait.
  report_options.min_wait_ns = options.tail ? 0 : -1;
  EngineOptions engine_options;
  if (!ParseReportFlags(options.watch, options.min_wait, options.retention, &watch, &report_options,
                        &engine_options, &error) ||
      (!options.states.empty() &&
       !ParseStateList(options.states, &report_options.states, &error))) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  LiveOptions live_options = options;
  if (!ParseDurationFlag("--max-lag", options.max_lag, &live_options.max_lag_ns, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  CaptureOptions capture_options;
  if (!ParseCaptureFlags(options.capture, options.traces.empty(), &capture_options, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  if (!options.capture.dir.empty() && options.capture.traces.empty() &&
      DecoderChoice(options.decoder) == TraceDecoderChoice::kBabeltrace2) {
    Say("waitpath: --capture-dir with --decoder babeltrace2 needs --capture-traces DIR (the "
        "relayd's output directory): babeltrace2 hands out events, not the packets captures are "
        "cut from\n");
    return 2;
  }
  // Spans (docs/requests.md): tail writes a record per span (--min-span, --operation filter
  // them); live as analyze does: JSON records, the per-operation summary when stopped.
  SpanReportOptions span_options;
  span_options.json = options.json;
  span_options.records = options.tail || options.json;
  span_options.summary = !options.tail;
  span_options.time_format = options.time_format;
  if (!ParseSpanFlags(options.min_span, options.operation, &span_options, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  Engine engine(engine_options);
  // A person at a terminal gets the full-screen view; pipes, files and --plain get lines.
  const bool screen = !options.json && !options.plain && TerminalScreen::Usable();
  // Span records would tear the screen: the view leaves them to --plain and --json (the
  // per-operation summary still follows the view's summary at the end).
  if (screen) span_options.records = false;
  TriageOptions triage;
  triage.min_wait_ns = std::max<int64_t>(0, report_options.min_wait_ns);
  triage.states = report_options.states;
  ScreenStatus status;
  status.filters = FiltersText(options);
  status.time_format = options.time_format;

  // Recorded traces (`tail TRACE...`): the offline pipeline, waits printed as they resolve
  // (or, in a terminal, the view's summary at the end).
  if (!options.traces.empty()) {
    std::vector<HostSpec> hosts;
    if (!DiscoverHosts(options.traces, &hosts, &error)) {
      Say("waitpath: {}\n", error);
      return 1;
    }
    const std::vector<std::string> names = HostNames(hosts);
    WatchedAccounting accounting(engine, std::move(watch), names);
    WaitOutput out(accounting, screen, triage, report_options);
    std::optional<TriageView>& view = out.view;
    SpanReport spans(engine, accounting.hosts(), span_options, std::cout);
    // The view lists the slowest requests too.
    SpanFanout span_listeners(view ? std::vector<SpanListener*>{&spans, &*view}
                                   : std::vector<SpanListener*>{&spans});
    engine.SetSpanListener(&span_listeners);
    engine.SetListener(&accounting);
    PipelineOptions pipeline;
    pipeline.reader.verbose = options.verbose;
    pipeline.policy = options.sync_passes == 2 ? SyncPolicy::kPrePass : SyncPolicy::kOnePass;
    pipeline.reader.decoder = DecoderChoice(options.decoder);
    EngineFeed feed(engine);
    std::vector<HostStats> stats;
    if (!AnalyseTraces(hosts, pipeline, feed, &stats, &error)) {
      Say("waitpath: {}\n", error);
      return 2;
    }
    accounting.Finish();
    spans.Finish();
    if (view) {
      status.source =
          fmt::format("{} host{} from recorded traces", hosts.size(), hosts.size() == 1 ? "" : "s");
      for (const HostStats& s : stats) {
        HostHealth h;
        h.name = s.host;
        h.lost = s.reader.discarded + s.reader.gaps + s.reader.damaged;
        h.state = s.error.empty() ? "read" : s.error;
        status.hosts.push_back(std::move(h));
      }
      PrintSummary(*view, status);
    }
    return ReportHostErrors(stats);
  }

  WatchedAccounting accounting(engine, watch, {});
  WaitOutput out(accounting, screen, triage, report_options);
  std::optional<TriageView>& view = out.view;
  SpanReport spans(engine, accounting.hosts(), span_options, std::cout);
  // A shard of a fleet: the other shards' hosts through the bus (docs/scale.md).
  std::unique_ptr<NatsBus> bus;
  std::unique_ptr<ShardPeers> shard;
  if (!options.shard.empty()) {
    BusOptions bus_options;
    bus_options.urls = options.bus;
    bus_options.replicas = options.bus_replicas;
    bus_options.catch_up_ns = live_options.max_lag_ns;  // how far behind a shard may read
    bus = NatsBus::Connect(bus_options, &error);
    if (!bus) {
      Say("waitpath: {}\n", error);
      return 2;
    }
    ShardOptions shard_options;
    shard_options.name = options.shard;
    shard_options.own = options.own;
    shard_options.wait_ms = options.edge_wait_ms;
    shard = std::make_unique<ShardPeers>(shard_options, *bus, engine, accounting.hosts(),
                                         [&accounting](uint16_t id, const std::string& name) {
                                           accounting.SetRemoteHost(id, name);
                                         });
    engine.SetRemotePeers(shard.get());
    Say("waitpath: shard {}: hosts matching {}, bus {}\n", options.shard, options.own, options.bus);
  }
  std::unique_ptr<MetricsExporter> metrics;
  std::unique_ptr<MetricsServer> server;
  if (!options.metrics.empty()) {
    metrics = std::make_unique<MetricsExporter>(
        engine, accounting, MetricsOptions{options.max_processes, options.label_by == "cgroup"});
    std::shared_ptr<prometheus::Collectable> served = metrics->collectable();
    if (shard) {
      // Every family with shard="NAME", and the shard's own (docs/scale.md, "Metrics").
      served = std::make_shared<LabeledCollectable>(
          std::vector<LabeledCollectable::Source>{
              [inner = metrics->collectable()] { return inner->Collect(); },
              [s = shard.get()] { return s->Families(); }},
          std::vector<prometheus::ClientMetric::Label>{{"shard", options.shard}});
    }
    server = MetricsServer::StartAnnounced(options.metrics, served);
    if (!server) return 1;
  }
  WaitFanout listeners(metrics ? std::vector<WaitListener*>{&accounting, metrics.get()}
                               : std::vector<WaitListener*>{&accounting});
  engine.SetListener(&listeners);
  std::unique_ptr<WaitCapture> capture;
  // Without --capture-traces, captures are cut from the packets the readers keep, written to a
  // scratch directory first (removed at the end).
  LiveSessions* ring_sessions = nullptr;
  const std::string ring_scratch =
      (fs::temp_directory_path() / fmt::format("waitpath-ring-{}", getpid())).string();
  if (!capture_options.dir.empty()) {
    TraceLocator locate = RelaydOutputLocator(options.capture.traces);
    if (options.capture.traces.empty()) {
      locate = [&](const std::string& host) {
        return ring_sessions ? ring_sessions->RingTraces(host, ring_scratch + "/" + host)
                             : std::vector<std::string>{};
      };
    }
    capture = std::make_unique<WaitCapture>(accounting, capture_options, std::move(locate));
  }
  status.source = "relayd " + options.relayd;
  std::vector<SpanListener*> span_sinks{&spans};
  if (metrics) span_sinks.push_back(metrics->requests());
  if (view) span_sinks.push_back(&*view);            // the slowest requests
  if (capture) span_sinks.push_back(capture.get());  // --capture-min-request
  SpanFanout span_listeners(std::move(span_sinks));
  engine.SetSpanListener(&span_listeners);
  {
    LiveSessions sessions(live_options, engine, accounting, metrics.get());
    ring_sessions = &sessions;
    sessions.SetShard(shard.get());
    if (capture) {
      capture->SetFinisher([&](const CaptureMade& made) {
        std::string why;
        if (!WriteCaptureTimeline(made, options.watch, "", capture_options.min_wait_ns, &why))
          Say("waitpath: capture {}: no timeline: {}\n", made.dir, why);
      });
    }
    sessions.SetCapture(capture.get());
    std::optional<TerminalScreen> terminal;
    if (view) terminal.emplace();
    auto next_discovery = std::chrono::steady_clock::now();
    auto next_draw = next_discovery;
    // Until stopped, or until nobody reads the output any more (`| head`), or `q`.
    while (!stopping->load() && !StdoutClosed()) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_discovery) {
        sessions.Discover();
        next_discovery = now + std::chrono::seconds(1);
      }
      // A shard answers the others' queries between batches: it pumps in shorter slices.
      sessions.Pump(shard ? 10000 : 100000);
      if (shard) shard->Poll();
      if (terminal) {
        if (terminal->Poll()) break;
        if (std::chrono::steady_clock::now() >= next_draw) {
          status.hosts = sessions.Health();
          terminal->Draw(*view, status);
          next_draw = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        }
      }
    }
    sessions.StopAll();
    if (shard) {
      bus->Flush(2000);
      Say("waitpath: {}\n", shard->Summary());
      bus->Close();  // its callbacks use the shard, which goes first
    }
    if (view) status.hosts = sessions.Health();
    terminal.reset();  // back to the normal screen before anything else is printed
    ring_sessions = nullptr;
  }
  std::error_code ec;
  if (capture) fs::remove_all(ring_scratch, ec);
  accounting.Finish();
  spans.Finish();
  if (metrics) metrics->Finish();
  if (view && !StdoutClosed()) PrintSummary(*view, status);
  return StdoutClosed() ? kExitOutputClosed : 0;
}

namespace {

void AddCommonFlags(CLI::App* cmd, LiveOptions* o) {
  cmd->add_option("--watch", o->watch,
                  "Tasks to report: key=value[,key=value] (comm, comm!, tid, pid, host); repeat "
                  "to OR")
      ->allow_extra_args(false);
  cmd->add_option("--min-wait", o->min_wait, "Report each wait at least this long (e.g. 5ms)")
      ->check(DurationCheck(false));
  cmd->add_flag("--json", o->json, "JSON Lines");
  cmd->add_flag("--plain", o->plain,
                "One line per wait even in a terminal (default there: a full-screen view)");
  cmd->add_option("--state", o->states,
                  "Only waits whose headline state is one of these (e.g. disk,network)")
      ->check(StateListCheck());
  AddSpanFlags(cmd, &o->min_span, &o->operation);
  cmd->add_option("--retention", o->retention, "History kept behind the newest event")
      ->capture_default_str()
      ->check(DurationCheck(true));
  cmd->add_option(
         "--max-lag", o->max_lag,
         "Live: a host further behind the others is not waited for (its older events are lost)")
      ->capture_default_str()
      ->check(DurationCheck(false));
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  AddClockFlags(cmd, &o->time_format);
}

}  // namespace

Command AddLiveCommand(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "live", "Attach to an LTTng relay daemon and analyse its sessions until stopped");
  cmd->add_option("--relayd", o->relayd, "net://HOST[:PORT] of the relay daemon")
      ->capture_default_str()
      ->check(RelaydUrlCheck());
  cmd->add_option("--session", o->sessions, "A session to follow (repeat); see --all");
  cmd->add_flag("--all", o->all, "Follow every session, including ones that start later");
  cmd->add_flag("--tail", o->tail,
                "Print each wait as it resolves instead of task records at the end");
  cmd->add_option("--metrics", o->metrics,
                  "Serve Prometheus metrics on ADDR:PORT (e.g. 127.0.0.1:9464)")
      ->check(ListenAddressCheck());
  cmd->add_option("--max-processes", o->max_processes, "Process label values per metric family")
      ->capture_default_str()
      ->check(IntegerRange(1, 100'000));
  cmd->add_option("--label-by", o->label_by,
                  "Label the active-path metrics by `process` (name) or by `cgroup` (kmod/)")
      ->check(CLI::IsMember({"process", "cgroup"}))
      ->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run as this shard of a fleet: follow only the hosts of --own, exchange network "
                  "waits with the other shards over --bus (docs/scale.md)");
  cmd->add_option("--bus", o->bus, "nats://HOST:PORT[,nats://HOST:PORT...] of the NATS servers");
  cmd->add_option("--own", o->own, "A regular expression over host names: the hosts of this shard");
  cmd->add_option("--bus-replicas", o->bus_replicas,
                  "Replicas of the JetStream stream when this shard creates it (3 on a cluster)")
      ->capture_default_str()
      ->check(IntegerRange(1, 5));
  cmd->add_option("--edge-wait-ms", o->edge_wait_ms,
                  "How long a receive waits for its sender's edge, a wait for the sender's summary")
      ->capture_default_str()
      ->check(IntegerRange(0, 60'000));
  AddCommonFlags(cmd, o.get());
  AddDecoderOption(cmd, &o->decoder);
  AddCaptureFlags(cmd, &o->capture, true);
  return Command{cmd, [o] {
                   if (!o->all && o->sessions.empty()) {
                     Say("waitpath: live: give --session NAME or --all\n");
                     return 2;
                   }
                   if (!o->shard.empty() && (o->bus.empty() || o->own.empty())) {
                     Say("waitpath: live: --shard needs --bus and --own\n");
                     return 2;
                   }
                   if (!o->shard.empty()) {
                     try {
                       std::regex check(o->own);
                     } catch (const std::regex_error& e) {
                       Say("waitpath: live: --own {}: {}\n", o->own, e.what());
                       return 2;
                     }
                   }
                   return RunLive(*o, nullptr);
                 }};
}

Command AddTailCommand(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  o->tail = true;
  o->all = true;
  CLI::App* cmd = app.add_subcommand(
      "tail", "Print each resolved wait of watched tasks as it resolves (live or traces)");
  cmd->add_option("--relayd", o->relayd,
                  "net://HOST[:PORT]: follow its sessions (default when no TRACE)")
      ->capture_default_str()
      ->check(RelaydUrlCheck());
  cmd->add_option("--session", o->sessions, "Only these sessions (default: all)");
  AddCommonFlags(cmd, o.get());
  AddDecoderOption(cmd, &o->decoder);
  cmd->add_option("TRACE", o->traces, "Recorded traces instead of a relayd");
  cmd->add_option("--sync-passes", o->sync_passes,
                  "TRACE of several hosts: 1 reads them once, the clock sync improving as it "
                  "reads; 2 synchronizes from a whole first pass (docs/sync.md)")
      ->capture_default_str()
      ->check(IntegerRange(1, 2));
  return Command{cmd, [o] {
                   if (!o->sessions.empty()) o->all = false;
                   return RunLive(*o, nullptr);
                 }};
}

}  // namespace waitpath
