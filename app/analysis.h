// One analysis of watched tasks, as every command that analyses builds it: the engine, the
// accounting of watched tasks (docs/architecture.md, "Accounting"), the sinks the plan asks
// for, and the fan-outs that hand them the engine's waits and spans. A command chooses the rest:
// its sources and sync policy (a pipeline into feed()), what it prints of clocks and hosts, and
// when it stops.
#pragma once

#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/engine_feed.h"
#include "exporters/analysis_report.h"
#include "exporters/metrics.h"
#include "exporters/span_report.h"
#include "exporters/timeline_writer.h"
#include "exporters/triage_view.h"
#include "exporters/wait_capture.h"
#include "exporters/wait_fanout.h"
#include "exporters/watch.h"
#include "incremental/engine.h"

namespace waitpath {

struct TimelinePlan {
  TimelineOptions options;
  std::string reference;  // the host whose clock the timeline is in
};

struct CapturePlan {
  CaptureOptions options;
  TraceLocator locate;  // a host's traces, to cut captures from
  // Called on each capture made, before it is put in place (its timeline: app/capture_flags.h).
  std::function<void(const CaptureMade&)> finish;
};

struct AnalysisPlan {
  EngineOptions engine;
  WatchSet watch;
  // The hosts known at the start (recorded traces); live adds each session's (AddHost).
  std::vector<std::string> hosts;
  // Live sources: the metrics measure lag behind the wall clock, captures are cut while the
  // input goes on (by the command) and map their windows through the batches' clock offsets (a
  // replayed host). Recorded traces: captures are cut by Finish.
  bool live = false;
  std::ostream* out = &std::cout;  // where the report and the span report write

  // The sinks, each only when asked for.
  std::optional<AnalysisOptions> report;   // task and wait records
  std::optional<TriageOptions> view;       // the terminal view's model
  std::optional<SpanReportOptions> spans;  // span records, the per-operation summary
  std::optional<TimelinePlan> timeline;
  std::optional<CapturePlan> capture;
  std::optional<MetricsOptions> metrics;
};

class Analysis : private FeedObserver {
 public:
  explicit Analysis(AnalysisPlan plan);
  ~Analysis() override;
  Analysis(const Analysis&) = delete;
  Analysis& operator=(const Analysis&) = delete;

  Engine& engine() { return engine_; }
  WatchedAccounting& accounting() { return accounting_; }
  // The pipeline's sink: the engine and the timeline's CPUs; then the sinks' figures of clocks
  // and batches; then the command's observers (feed().AddObserver).
  EngineFeed& feed() { return feed_; }

  // The sinks; null when not asked for.
  AnalysisReport* report() { return report_.get(); }
  TriageView* view() { return view_.get(); }
  SpanReport* spans() { return spans_.get(); }
  TimelineWriter* timeline() { return timeline_.get(); }
  WaitCapture* capture() { return capture_.get(); }
  MetricsExporter* metrics() { return metrics_.get(); }

  // A host that appeared while running (a live session): named in the accounting and metrics.
  void AddHost(const std::string& name);
  // After the input ended: every watched task accounted to its end (the report's task
  // records), recorded traces' captures cut (their count said on stderr), the span summary,
  // the metrics' final figures.
  void Finish();

 private:
  void OnClocks(const std::vector<HostClock>& clocks) override;
  void OnBatchDone(const Batch& batch) override;
  void CutCaptures();

  const bool live_;
  std::string capture_dir_;
  Engine engine_;
  WatchedAccounting accounting_;
  // Registered with the accounting in this order.
  std::unique_ptr<AnalysisReport> report_;
  std::unique_ptr<TriageView> view_;
  std::unique_ptr<TimelineWriter> timeline_;
  std::unique_ptr<WaitCapture> capture_;
  std::unique_ptr<SpanReport> spans_;
  std::unique_ptr<MetricsExporter> metrics_;
  // Set as the engine's listeners when more than one sink listens.
  std::unique_ptr<WaitFanout> wait_fanout_;
  std::unique_ptr<SpanFanout> span_fanout_;
  EngineFeed feed_;
};

}  // namespace waitpath
