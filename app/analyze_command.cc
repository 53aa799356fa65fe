#include "app/analyze_command.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/command.h"
#include "app/engine_feed.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "app/report_flags.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/stop_signal.h"
#include "exporters/analysis_report.h"
#include "exporters/clock_report.h"
#include "exporters/metrics.h"
#include "exporters/metrics_server.h"
#include "exporters/wait_fanout.h"
#include "live/bt_util.h"
#include "stream/host_stats.h"

namespace waitpath {
namespace {

// What `analyze` exports to Prometheus (docs/metrics.md).
struct MetricsFlags {
  std::string file;    // --metrics-file: text exposition written once at the end
  std::string listen;  // --metrics ADDR:PORT: served during the analysis and after it
  std::string linger;  // --metrics-linger: how long to keep serving after; empty: until a signal
  size_t max_processes = 50;
  std::string label_by = "process";  // --label-by: process or cgroup
};

// Keeps the process (and the Exposer's threads) alive until `ns` elapses (< 0: forever) or
// SIGINT/SIGTERM arrives; either ends with the analysis' own exit code.
void Linger(int64_t ns) {
  InstallStopSignal();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (!StopRequested() && (ns < 0 || std::chrono::steady_clock::now() < deadline)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int RunAnalyzeWithMetrics(const AnalyzeOptions& options, const MetricsFlags& metrics_flags);

}  // namespace

int RunAnalyze(const AnalyzeOptions& options) {
  return RunAnalyzeWithMetrics(options, {});
}

namespace {

int RunAnalyzeWithMetrics(const AnalyzeOptions& options, const MetricsFlags& metrics_flags) {
  ConfigureBabeltraceLogging(options.verbose);
  WatchSet watch;
  std::string error;
  AnalysisOptions report_options;
  if (options.json && options.format != "text" && options.format != "json") {
    Say("waitpath: --json and --format {} disagree\n", options.format);
    return 2;
  }
  report_options.json = options.json || options.format == "json";
  report_options.format = report_options.json          ? TaskFormat::kJson
                          : options.format == "folded" ? TaskFormat::kFolded
                          : options.format == "csv"    ? TaskFormat::kCsv
                                                       : TaskFormat::kText;
  if (!options.min_wait.empty() &&
      (report_options.format == TaskFormat::kFolded || report_options.format == TaskFormat::kCsv)) {
    Say("waitpath: --min-wait prints wait records: with --format text or json only\n");
    return 2;
  }
  report_options.top = options.top;
  report_options.time_format = options.time_format;
  EngineOptions engine_options;
  if (!ParseReportFlags(options.watch, options.min_wait, options.retention, &watch, &report_options,
                        &engine_options, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  engine_options.max_history_bytes = options.max_history_mb << 20;
  TimelineOptions timeline_options;
  if (!ParseTimelineFlags(options.timeline, report_options.min_wait_ns, &timeline_options,
                          &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  CaptureOptions capture_options;
  if (!ParseCaptureFlags(options.capture, false, &capture_options, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  // Spans (docs/requests.md): JSON has a record per span; text the per-operation summary, and
  // span lines with --min-span or --operation. Folded and CSV rows are tasks' only.
  SpanReportOptions span_options;
  span_options.json = report_options.json;
  span_options.records = report_options.json;
  span_options.top = options.top;
  span_options.time_format = report_options.time_format;
  const bool rows =
      report_options.format == TaskFormat::kFolded || report_options.format == TaskFormat::kCsv;
  if (!ParseSpanFlags(options.min_span, options.operation, &span_options, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  if (rows) span_options.records = span_options.summary = false;
  int64_t linger_ns = -1;
  if (!metrics_flags.linger.empty() &&
      !ParseDurationFlag("--metrics-linger", metrics_flags.linger, &linger_ns, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  const bool want_metrics = !metrics_flags.file.empty() || !metrics_flags.listen.empty();

  std::vector<HostSpec> hosts;
  DiscoverOptions discover;
  discover.host_from_dir = options.host_from == "dir";
  if (!DiscoverHosts(options.traces, &hosts, &error, discover)) {
    Say("waitpath: {}\n", error);
    return 1;
  }
  const std::vector<std::string> names = HostNames(hosts);

  Engine engine(engine_options);
  WatchedAccounting accounting(engine, std::move(watch), names);
  AnalysisReport report(accounting, report_options, std::cout);
  std::unique_ptr<TimelineWriter> timeline;
  if (!options.timeline.file.empty()) {
    timeline = std::make_unique<TimelineWriter>(accounting, timeline_options);
    timeline->SetReference(options.reference.empty() ? names[0] : options.reference);
  }
  std::unique_ptr<WaitCapture> capture;
  if (!capture_options.dir.empty()) {
    // Recorded traces: captures are cut from the traces given.
    capture = std::make_unique<WaitCapture>(accounting, capture_options,
                                            [&hosts](const std::string& host) {
                                              for (const HostSpec& h : hosts) {
                                                if (h.hostname == host) return h.trace_dirs;
                                              }
                                              return std::vector<std::string>{};
                                            });
  }
  SpanReport spans(engine, accounting.hosts(), span_options, std::cout);
  std::unique_ptr<MetricsExporter> metrics;
  std::unique_ptr<MetricsServer> server;
  if (want_metrics) {
    metrics = std::make_unique<MetricsExporter>(
        engine, accounting,
        MetricsOptions{metrics_flags.max_processes, metrics_flags.label_by == "cgroup"});
    // Until the sync pass reports (on_clocks below): one host is its own reference; several
    // are only as aligned as their CTF clock offsets.
    for (const std::string& host : names) {
      metrics->health().SetClockSync(host, names.size() == 1 ? "accurate" : "incomplete",
                                     names.size() == 1 ? std::optional<double>(0) : std::nullopt);
    }
    metrics->health().SetPendingCrossHostWaits(0);
  }
  if (!metrics_flags.listen.empty()) {
    server = MetricsServer::StartAnnounced(metrics_flags.listen, metrics->collectable());
    if (!server) return 1;
  }
  WaitFanout listeners(metrics ? std::vector<WaitListener*>{&accounting, metrics.get()}
                               : std::vector<WaitListener*>{&accounting});
  engine.SetListener(&listeners);
  std::vector<SpanListener*> span_sinks{&spans};
  if (metrics) span_sinks.push_back(metrics->requests());
  if (capture) span_sinks.push_back(capture.get());  // --capture-min-request
  SpanFanout span_listeners(std::move(span_sinks));
  engine.SetSpanListener(&span_listeners);

  PipelineOptions pipeline;
  pipeline.reader.verbose = options.verbose;
  pipeline.reader.decoder = DecoderChoice(options.decoder);
  pipeline.reference = options.reference;
  pipeline.keep_decoded_bytes = options.keep_decoded_mb << 20;
  pipeline.policy = options.sync_passes == 2 ? SyncPolicy::kPrePass : SyncPolicy::kOnePass;
  std::vector<HostStats> stats;
  EngineFeed feed(engine);
  int clock_reports = 0;
  if (timeline) feed.SetCpuActivity(&timeline->cpus());
  feed.on_clocks = [&](const std::vector<HostClock>& clocks) {
    // Several hosts: times are in the reference host's clock; say how well each maps to it.
    // Text: what the times are in, and how well each host maps to it. In one pass this comes
    // twice: the transforms the first events were mapped with, then the final ones (JSON:
    // the last `clock` record of a host is the final one).
    if (report_options.format == TaskFormat::kText && !clocks.empty()) {
      if (clock_reports++ == 0) {
        std::cout << "times are in the clock of host " << clocks[0].reference
                  << " (the reference: the first host given, or --reference)\n";
      } else {
        std::cout << "at the end of the input (the transforms improved while reading):\n";
      }
      for (const HostClock& c : clocks) {
        if (c.host != c.reference) std::cout << "  " << ClockSummary(c) << '\n';
      }
      std::cout << '\n';
    }
    if (capture) capture->SetClocks(clocks);
    for (const HostClock& c : clocks) {
      if (report_options.json) std::cout << ClockJson(c) << '\n';
      if (metrics)
        metrics->health().SetClockSync(c.host, std::string(SyncQualityName(c.quality)),
                                       c.accuracy / 1e9);
    }
  };
  feed.on_batch = [&](const Batch& batch) {
    if (metrics) {
      metrics->ObserveBatch(batch);
      metrics->ObserveEngine();
    }
  };
  if (!AnalyseTraces(hosts, pipeline, feed, &stats, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  accounting.Finish();
  if (capture) {
    const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    capture->SetFinisher([&](const CaptureMade& made) {
      std::string why;
      if (!WriteCaptureTimeline(made, options.watch, options.reference, capture_options.min_wait_ns,
                                &why))
        Say("waitpath: capture {}: no timeline: {}\n", made.dir, why);
    });
    capture->Poll(INT64_MAX, 0, wall);
    const CaptureCounters& c = capture->counters();
    fmt::print(stderr,
               "waitpath: {} capture(s) written in {} ({} skipped over --capture-max-per-hour, "
               "{} removed under --capture-max-mb)\n",
               c.written, capture_options.dir, c.skipped_rate, c.removed);
    if (metrics) metrics->ObserveCaptures(c);
  }
  spans.Finish();
  if (metrics) metrics->Finish();

  int code = ReportHostErrors(stats, HostCheck::kReadAndAnalyse);
  if (timeline && !WriteTimelineFile(*timeline, options.timeline.file, &error)) {
    Say("waitpath: {}\n", error);
    code = 1;
  }
  if (!metrics_flags.file.empty()) {
    std::ofstream file(metrics_flags.file);
    metrics->WriteText(file);
    if (!file.flush()) {
      Say("waitpath: --metrics-file {}: cannot write it\n", metrics_flags.file);
      code = 1;
    }
  }
  if (server) {
    std::cout.flush();
    fmt::print(
        stderr, "waitpath: analysis done; serving metrics on http://{}/metrics {}\n",
        server->bound(),
        linger_ns < 0 ? "until SIGINT/SIGTERM" : "for --metrics-linger " + metrics_flags.linger);
    Linger(linger_ns);
  }
  return code;
}

}  // namespace

Command AddAnalyzeCommand(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  auto m = std::make_shared<MetricsFlags>();
  CLI::App* cmd =
      app.add_subcommand("analyze", "Active paths of watched tasks: why they waited, and on whom");
  cmd->add_flag("--json", o->json, "JSON Lines: a task record per watched task, wait records");
  AddClockFlags(cmd, &o->time_format);
  cmd->add_option("--format", o->format,
                  "text, json (as --json), folded (flame-graph stacks: HOST/COMM;HOST/COMM;STATE "
                  "NS per watched task, credited task and state) or csv (the same rows)")
      ->check(CLI::IsMember({"text", "json", "folded", "csv"}))
      ->capture_default_str();
  cmd->add_option("--watch", o->watch,
                  "Tasks to report: key=value[,key=value] with comm (RE2 regex), comm! (exclude), "
                  "tid, pid, host; repeat to OR; default every task that ran")
      ->allow_extra_args(false);
  cmd->add_option("--min-wait", o->min_wait, "Also report each wait at least this long (e.g. 5ms)")
      ->check(DurationCheck(false));
  AddSpanFlags(cmd, &o->min_span, &o->operation);
  cmd->add_option("--top", o->top, "Tasks listed per watched task (by time on its path)")
      ->capture_default_str()
      ->check(IntegerRange(1, 1'000'000'000));
  cmd->add_option("--retention", o->retention, "History kept behind the newest event")
      ->capture_default_str()
      ->check(DurationCheck(true));
  cmd->add_option("--max-history-mb", o->max_history_mb, "Cap on retained history")
      ->capture_default_str()
      ->check(IntegerRange(1, 1 << 24));
  cmd->add_option(
         "--keep-decoded-mb", o->keep_decoded_mb,
         "Several hosts: the decoded events held in memory: in one pass, those waiting for "
         "the clock sync (past this, the oldest go with the transforms known then); with "
         "--sync-passes 2, those the sync pass decoded (larger input is decoded twice; 0: "
         "always)")
      ->capture_default_str()
      ->check(IntegerRange(0, 1 << 24));
  cmd->add_option("--sync-passes", o->sync_passes,
                  "Several hosts: 1 reads the traces once, the clock sync improving as it reads; "
                  "2 synchronizes from a whole first pass, then analyses (docs/sync.md)")
      ->capture_default_str()
      ->check(IntegerRange(1, 2));
  cmd->add_option("--reference", o->reference,
                  "Several hosts: the host whose clock times are reported in");
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  AddDecoderOption(cmd, &o->decoder);
  cmd->add_option("--metrics-file", m->file,
                  "Write the Prometheus text exposition there at the end");
  cmd->add_option("--metrics", m->listen,
                  "Serve Prometheus metrics on ADDR:PORT (default address 127.0.0.1), during and "
                  "after the analysis")
      ->check(ListenAddressCheck());
  cmd->add_option("--metrics-linger", m->linger,
                  "With --metrics: keep serving this long after the analysis (e.g. 30s); "
                  "default until SIGINT/SIGTERM")
      ->check(DurationCheck(false));
  cmd->add_option("--max-processes", m->max_processes,
                  "Process label values per metric family; later processes count as `other`")
      ->capture_default_str()
      ->check(IntegerRange(1, 100'000));
  cmd->add_option("--label-by", m->label_by,
                  "Label the active-path metrics by `process` (name) or by `cgroup` (path, from "
                  "the kmod/ probe module's events; docs/metrics.md)")
      ->check(CLI::IsMember({"process", "cgroup"}))
      ->capture_default_str();
  cmd->add_option("--host-from", o->host_from,
                  "Name hosts by the hostname in their traces, or by the directory given for "
                  "them (two machines with one hostname)")
      ->check(CLI::IsMember({"hostname", "dir"}))
      ->capture_default_str();
  cmd->add_option("--timeline", o->timeline.file,
                  "Write a timeline there: Chrome trace-event JSON for ui.perfetto.dev or "
                  "chrome://tracing (docs/timeline.md)");
  cmd->add_option("--from", o->timeline.from,
                  "Timeline from this time: nanoseconds since the epoch, or a duration from the "
                  "first event (e.g. 1.5s)");
  cmd->add_option("--to", o->timeline.to, "Timeline up to this time (as --from)");
  cmd->add_option("--timeline-max-mb", o->timeline.max_mb,
                  "Refuse a timeline larger than this (narrow it with --from/--to)")
      ->capture_default_str()
      ->check(IntegerRange(1, 1 << 20));
  AddCaptureFlags(cmd, &o->capture, false);
  cmd->add_option("TRACE", o->traces, "Trace directories")->required();
  return Command{cmd, [o, m] { return RunAnalyzeWithMetrics(*o, *m); }};
}

}  // namespace waitpath
