#include "app/live_sessions.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "app/flag_checks.h"
#include "base/output.h"
#include "base/untrusted_name.h"

namespace waitpath {
namespace {

int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LiveSessions::LiveSessions(const LiveOptions& options, Analysis& analysis, ShardPeers* shard)
    : options_(options),
      analysis_(analysis),
      roster_(options.all, options.sessions,
              shard ? std::function<bool(const std::string&)>(
                          [shard](const std::string& host) { return shard->Claim(host); })
                    : nullptr),
      notices_(options.relayd, options.max_lag, analysis.metrics()),
      pipeline_(PipelineFor(options), &analysis.feed()) {
  analysis_.feed().AddObserver(this);
}

LiveSessions::~LiveSessions() {
  StopAll();
  analysis_.feed().RemoveObserver(this);
}

PipelineOptions LiveSessions::PipelineFor(const LiveOptions& options) {
  PipelineOptions p;
  p.policy = SyncPolicy::kBootstrap;
  p.reader.verbose = options.verbose;
  p.reader.decoder = DecoderChoice(options.decoder);
  if (!options.capture.dir.empty() && options.capture.traces.empty())
    p.reader.capture_ring_bytes = options.capture.ring_mb << 20;
  p.max_lag_ns = options.max_lag_ns;
  p.reader.live_from_beginning = options.attach == "beginning";
  return p;
}

void LiveSessions::Discover() {
  std::vector<LiveSession> sessions;
  std::string error;
  if (!QuerySessions(options_.relayd, &sessions, &error)) {
    if (error != last_error_) Say("waitpath: {} (retrying)\n", error);
    last_error_ = error;
    roster_.Unreachable();
    return;
  }
  if (!last_error_.empty()) Say("waitpath: relayd {} reachable\n", options_.relayd);
  last_error_.clear();
  // The relayd answers: a reader that lost it reattaches now rather than at the end of its
  // backoff (up to 5 s), before its session could be let go below as gone.
  for (size_t h = 0; h < pipeline_.source_count(); ++h) {
    if (pipeline_.source(h).relayd().lost()) pipeline_.source(h).RetryNow();
  }
  for (uint16_t id : roster_.Gone(sessions, SessionRoster::Clock::now()))
    pipeline_.source(id).RequestStop();
  for (const LiveSession& s : sessions) {
    if (std::optional<uint16_t> id = roster_.Find(s.url)) {
      Reopen(*id, s);
      continue;
    }
    if (!roster_.Wants(s)) continue;
    analysis_.AddHost(s.hostname);
    roster_.Add(s, pipeline_.AddSource(HostSpec{s.hostname, {}, {}, s.url, {}, {}, {}}));
    Say("waitpath: following session {} of host {}\n", PrintableName(s.name),
        PrintableName(s.hostname));
  }
}

// Followed as the same host, history kept, the time between counted as lost
// (Pipeline::ReopenSource).
void LiveSessions::Reopen(uint16_t id, const LiveSession& session) {
  if (!roster_.Reopenable(id, session) || !pipeline_.ReopenSource(id)) return;
  roster_.Reopened(id, session);
  notices_.Restarted(id);
  Say("waitpath: following session {} of host {} again (created anew on the relayd; the time "
      "between is counted as lost)\n",
      PrintableName(session.name), PrintableName(session.hostname));
}

void LiveSessions::Pump(int64_t timeout_us) {
  pipeline_.Pump(timeout_us);
  Report();
  Capture(false);
  // What the batches' waits printed goes out now, not when the pipe's buffer is full: a
  // `live --json | jq` of one slow wait a minute would otherwise see it only kilobytes later.
  std::cout.flush();
}

void LiveSessions::StopAll() {
  if (stopping_) return;
  stopping_ = true;
  pipeline_.Drain();
  Report();
  Capture(true);
  if (!analysis_.capture()) return;
  for (size_t h = 0; h < pipeline_.source_count(); ++h) {
    const PacketRing* ring = pipeline_.source(h).ring();
    if (!ring) continue;
    const PacketRing::Counts c = ring->counts();
    Say("waitpath: host {}: capture ring: {} packets ({:.1f} MB) kept, {} older ones dropped\n",
        roster_.label(h), c.packets, static_cast<double>(c.bytes) / (1 << 20), c.dropped);
  }
}

std::vector<std::string> LiveSessions::RingTraces(const std::string& host,
                                                  const std::string& scratch) {
  std::vector<std::string> dirs;
  for (size_t h = 0; h < pipeline_.source_count(); ++h) {
    const HostReader& reader = pipeline_.source(h);
    if (reader.spec().hostname != host || !reader.ring()) continue;
    std::string error;
    const std::string dir = scratch + "/" + std::to_string(h);
    std::vector<std::string> traces = reader.ring()->WriteTo(dir, &error);
    if (!error.empty()) Say("waitpath: host {}: capture: {}\n", roster_.label(h), error);
    dirs.insert(dirs.end(), traces.begin(), traces.end());
  }
  return dirs;
}

void LiveSessions::Report() {
  for (size_t h = 0; h < pipeline_.source_count(); ++h)
    notices_.Relayd(h, roster_.label(h), pipeline_.source(h).relayd());
  const TimeMerger& merger = pipeline_.merger();
  const std::vector<HostStats>& stats = pipeline_.stats();
  for (uint16_t h = 0; h < merger.host_count(); ++h)
    notices_.Lag(h, stats[h].host, roster_.label(h), merger.lagging(h), merger.dropped_late(h));
  for (uint16_t h = 0; h < stats.size(); ++h)
    notices_.Kernel(h, roster_.label(h), stats[h].reader, stats[h].ended);
}

// The relayd stores a packet before a live viewer can read it, so once the engine has events
// past a wait's window, the packets of that window are on disk; `kSettleNs` more for the CPUs
// whose packets close later (an idle CPU's packet closes at the live timer).
void LiveSessions::Capture(bool all) {
  static constexpr int64_t kSettleNs = 500'000'000;
  WaitCapture* capture = analysis_.capture();
  if (!capture || capture->pending() == 0) return;
  int64_t now = INT64_MIN;
  for (uint16_t h = 0; h < analysis_.accounting().hosts().size(); ++h)
    now = std::max(now, analysis_.engine().host_now(h));
  for (const CaptureMade& made : capture->Poll(all ? INT64_MAX : now, kSettleNs, WallNowNs()))
    Say("waitpath: captured {}\n", made.dir);
  if (MetricsExporter* metrics = analysis_.metrics()) metrics->ObserveCaptures(capture->counters());
}

void LiveSessions::OnClocks(const std::vector<HostClock>& clocks) {
  notices_.Clocks(clocks);
  health_.SetClocks(clocks);
}

void LiveSessions::OnBatchDone(const Batch& batch) {
  health_.ObserveBatch(batch);
}

void LiveSessions::OnHostEnded(uint16_t h, const Batch& last) {
  const bool let_go = last.error == "stopped" && !stopping_;
  roster_.Ended(h, last.error.empty() || let_go);
  Say("waitpath: host {}: {}\n", roster_.label(h),
      last.error.empty() ? "session ended"
      : let_go           ? "session ended (gone from the relayd)"
                         : last.error);
}

std::vector<HostHealth> LiveSessions::Health() {
  const std::vector<HostStats>& stats = pipeline_.stats();
  const TimeMerger& merger = pipeline_.merger();
  std::vector<HostHealthModel::Host> hosts;
  for (uint16_t h = 0; h < stats.size(); ++h) {
    const HostStats& s = stats[h];
    HostHealthModel::Host& x = hosts.emplace_back();
    x.name = s.host;
    x.events = s.reader.events;
    x.lost = s.reader.discarded + (h < merger.host_count() ? merger.dropped_late(h) : 0);
    x.gaps = s.reader.gaps + s.reader.damaged;
    x.analysed_to = analysis_.engine().host_now(h);
    x.ended = h < roster_.size() && roster_.ended(h);
    x.lagging = notices_.lagging(h);
    x.relayd_lost = h < pipeline_.source_count() && pipeline_.source(h).relayd().lost();
  }
  return health_.Rows(hosts, pipeline_.source_count(), HostHealthModel::Clock::now(), WallNowNs());
}

}  // namespace waitpath
