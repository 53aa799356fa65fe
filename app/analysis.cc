#include "app/analysis.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

namespace waitpath {
namespace {

int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Analysis::Analysis(AnalysisPlan plan)
    : live_(plan.live),
      engine_(plan.engine),
      accounting_(engine_, std::move(plan.watch), plan.hosts),
      feed_(engine_) {
  if (plan.report) report_ = std::make_unique<AnalysisReport>(accounting_, *plan.report, *plan.out);
  if (plan.view) view_ = std::make_unique<TriageView>(accounting_, *plan.view);
  if (plan.timeline) {
    timeline_ = std::make_unique<TimelineWriter>(accounting_, plan.timeline->options);
    timeline_->SetReference(plan.timeline->reference);
    feed_.SetCpuActivity(&timeline_->cpus());
  }
  if (plan.capture) {
    capture_dir_ = plan.capture->options.dir;
    capture_ = std::make_unique<WaitCapture>(accounting_, plan.capture->options,
                                             std::move(plan.capture->locate));
    if (plan.capture->finish) capture_->SetFinisher(std::move(plan.capture->finish));
  }
  if (plan.spans)
    spans_ = std::make_unique<SpanReport>(engine_, accounting_.hosts(), *plan.spans, *plan.out);
  if (plan.metrics) {
    metrics_ = std::make_unique<MetricsExporter>(engine_, accounting_, *plan.metrics);
    if (!live_) {
      // Until the sync reports (OnClocks): one host is its own reference; several are only as
      // aligned as their CTF clock offsets.
      for (const std::string& host : plan.hosts) {
        metrics_->health().SetClockSync(
            host, plan.hosts.size() == 1 ? "reference" : "incomplete",
            plan.hosts.size() == 1 ? std::optional<double>(0) : std::nullopt);
      }
      metrics_->health().SetPendingCrossHostWaits(0);
    }
  }

  if (metrics_) {
    wait_fanout_ =
        std::make_unique<WaitFanout>(std::vector<WaitListener*>{&accounting_, metrics_.get()});
    engine_.SetListener(wait_fanout_.get());
  } else {
    engine_.SetListener(&accounting_);
  }
  std::vector<SpanListener*> span_sinks;
  if (spans_) span_sinks.push_back(spans_.get());
  if (metrics_) span_sinks.push_back(metrics_->requests());
  if (view_) span_sinks.push_back(view_.get());        // the slowest requests
  if (capture_) span_sinks.push_back(capture_.get());  // --capture-min-request
  if (span_sinks.size() == 1) {
    engine_.SetSpanListener(span_sinks[0]);
  } else if (!span_sinks.empty()) {
    span_fanout_ = std::make_unique<SpanFanout>(std::move(span_sinks));
    engine_.SetSpanListener(span_fanout_.get());
  }
  feed_.AddObserver(this);
}

Analysis::~Analysis() = default;

void Analysis::AddHost(const std::string& name) {
  accounting_.AddHost(name);
  if (metrics_) metrics_->AddHost(name);
}

void Analysis::OnClocks(const std::vector<HostClock>& clocks) {
  if (capture_) capture_->SetClocks(clocks);
  if (!metrics_) return;
  for (const HostClock& c : clocks) {
    // The reference host reads `reference`, as in the terminal view, not the sync's quality.
    metrics_->health().SetClockSync(
        c.host, c.host == c.reference ? "reference" : SyncQualityName(c.quality), c.accuracy / 1e9);
  }
  // Remote waits never queue here (released in reference time, a missing send counts as
  // network at once): the gauge says so.
  metrics_->health().SetPendingCrossHostWaits(0);
}

void Analysis::OnBatchDone(const Batch& batch) {
  if (live_ && capture_ && !batch.events.empty())
    capture_->ObserveClockOffset(batch.host, batch.events.back().ts, batch.clock_offset_ns);
  if (!metrics_) return;
  metrics_->ObserveBatch(batch);
  // Live, a host's lag is behind the wall clock; offline, behind the most advanced host.
  metrics_->ObserveEngine(live_ ? std::optional<int64_t>(WallNowNs()) : std::nullopt);
}

void Analysis::Finish() {
  accounting_.Finish();
  if (capture_ && !live_) CutCaptures();
  if (spans_) spans_->Finish();
  if (metrics_) metrics_->Finish();
}

// Recorded traces: every wait is known, and every trace complete, once the input ended.
void Analysis::CutCaptures() {
  capture_->Poll(INT64_MAX, 0, WallNowNs());
  const CaptureCounters& c = capture_->counters();
  fmt::print(stderr,
             "waitpath: {} capture(s) written in {} ({} skipped over --capture-max-per-hour, "
             "{} removed under --capture-max-mb)\n",
             c.written, capture_dir_, c.skipped_rate, c.removed);
  if (metrics_) metrics_->ObserveCaptures(c);
}

}  // namespace waitpath
