#include "app/analyze_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/command.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "app/report_flags.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/stop_signal.h"
#include "exporters/clock_report.h"
#include "exporters/metrics.h"
#include "exporters/metrics_server.h"
#include "readers/bt_util.h"
#include "stream/host_stats.h"

namespace waitpath {
namespace {

// Keeps the process (and the metrics server's threads) alive until `ns` elapses (< 0: forever) or
// SIGINT/SIGTERM arrives; either ends with the analysis' own exit code.
void Linger(int64_t ns) {
  InstallStopSignal();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (!StopRequested() && (ns < 0 || std::chrono::steady_clock::now() < deadline)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// What `analyze` says of the clocks of several hosts, whose times are in the reference host's
// clock: in text what the times are in and how well each host maps to it, in JSON a `clock`
// record per host. In one pass this comes twice: the transforms the first events were mapped
// with, then the final ones (JSON: the last `clock` record of a host is the final one).
class ClockLines : public FeedObserver {
 public:
  explicit ClockLines(const AnalysisOptions& report)
      : text_(report.format == TaskFormat::kText), json_(report.json) {}

  void OnClocks(const std::vector<HostClock>& clocks) override {
    if (text_ && !clocks.empty()) {
      if (said_++ == 0) {
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
    if (!json_) return;
    for (const HostClock& c : clocks) std::cout << ClockJson(c) << '\n';
  }

 private:
  const bool text_, json_;
  int said_ = 0;
};

// Writes the Prometheus text exposition to --metrics-file; false when it cannot.
bool WriteMetricsFile(const MetricsExporter& metrics, const std::string& path) {
  std::ofstream file(path);
  metrics.WriteText(file);
  if (file.flush()) return true;
  Say("waitpath: --metrics-file {}: cannot write it\n", path);
  return false;
}

// What the plan takes from the traces found: their hosts, the timeline's reference clock, the
// traces captures are cut from (the ones given) and the timeline of each capture.
void AddTraces(const AnalyzeOptions& options, const std::vector<HostSpec>& hosts,
               AnalysisPlan* plan) {
  plan->hosts = HostNames(hosts);
  if (plan->timeline) {
    plan->timeline->reference = options.reference.empty() ? plan->hosts[0] : options.reference;
  }
  if (plan->capture) {
    plan->capture->locate = [&hosts](const std::string& host) {
      for (const HostSpec& h : hosts) {
        if (h.hostname == host) return h.trace_dirs;
      }
      return std::vector<std::string>{};
    };
    plan->capture->finish =
        CaptureTimelineWriter(options.watch, options.reference, plan->capture->options.min_wait_ns);
  }
}

}  // namespace

bool PlanAnalysis(const AnalyzeOptions& options, AnalysisPlan* plan, std::string* error) {
  if (options.json && options.format != "text" && options.format != "json") {
    *error = fmt::format("--json and --format {} disagree", options.format);
    return false;
  }
  AnalysisOptions& report = plan->report.emplace();
  report.json = options.json || options.format == "json";
  report.format = report.json                  ? TaskFormat::kJson
                  : options.format == "folded" ? TaskFormat::kFolded
                  : options.format == "csv"    ? TaskFormat::kCsv
                                               : TaskFormat::kText;
  const bool rows = report.format == TaskFormat::kFolded || report.format == TaskFormat::kCsv;
  if (!options.min_wait.empty() && rows) {
    *error = "--min-wait prints wait records: with --format text or json only";
    return false;
  }
  report.top = options.top;
  report.time_format = options.time_format;
  if (!ParseReportFlags(options.watch, options.min_wait, options.retention, &plan->watch, &report,
                        &plan->engine, error))
    return false;
  plan->engine.max_history_bytes = options.max_history_mb << 20;
  TimelineOptions timeline;
  if (!ParseTimelineFlags(options.timeline, report.min_wait_ns, &timeline, error)) return false;
  if (!options.timeline.file.empty()) plan->timeline.emplace().options = timeline;
  CaptureOptions capture;
  if (!ParseCaptureFlags(options.capture, false, &capture, error)) return false;
  if (!capture.dir.empty()) plan->capture.emplace().options = capture;
  // Spans (docs/requests.md): JSON has a record per span; text the per-operation summary, and
  // span lines with --min-span or --operation. Folded and CSV rows are tasks' only.
  SpanReportOptions& spans = plan->spans.emplace();
  spans.json = report.json;
  spans.records = report.json;
  spans.top = options.top;
  spans.time_format = report.time_format;
  if (!ParseSpanFlags(options.min_span, options.operation, &spans, error)) return false;
  if (rows) spans.records = spans.summary = false;
  if (!options.metrics.file.empty() || !options.metrics.listen.empty())
    plan->metrics =
        MetricsOptions{options.metrics.max_processes, options.metrics.label_by == "cgroup"};
  return true;
}

int RunAnalyze(const AnalyzeOptions& options) {
  ConfigureBabeltraceLogging(options.verbose);
  AnalysisPlan plan;
  std::string error;
  int64_t linger_ns = -1;
  if (!PlanAnalysis(options, &plan, &error) ||
      (!options.metrics.linger.empty() &&
       !ParseDurationFlag("--metrics-linger", options.metrics.linger, &linger_ns, &error))) {
    Say("waitpath: {}\n", error);
    return 2;
  }

  std::vector<HostSpec> hosts;
  DiscoverOptions discover;
  discover.host_from_dir = options.host_from == "dir";
  discover.merge_recordings = options.merge_recordings;
  const int found = FindHosts(options.traces, discover, &hosts);
  if (hosts.empty()) return found;
  AddTraces(options, hosts, &plan);
  ClockLines clock_lines(*plan.report);
  Analysis analysis(std::move(plan));
  std::unique_ptr<MetricsServer> server;
  if (!options.metrics.listen.empty()) {
    server =
        MetricsServer::StartAnnounced(options.metrics.listen, analysis.metrics()->collectable());
    if (!server) return 1;
  }
  analysis.feed().AddObserver(&clock_lines);

  PipelineOptions pipeline;
  pipeline.reader.verbose = options.verbose;
  pipeline.reader.decoder = DecoderChoice(options.decoder);
  pipeline.reference = options.reference;
  pipeline.keep_decoded_bytes = options.keep_decoded_mb << 20;
  pipeline.policy = options.sync_passes == 2 ? SyncPolicy::kPrePass : SyncPolicy::kOnePass;
  std::vector<HostStats> stats;
  if (!AnalyseTraces(hosts, pipeline, analysis.feed(), &stats, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  analysis.Finish();
  ReportNothingWatched(analysis.accounting(), options.watch);

  int code = std::max(found, ReportHostErrors(stats, HostCheck::kReadAndAnalyse));
  if (analysis.timeline() &&
      !WriteTimelineFile(*analysis.timeline(), options.timeline.file, &error)) {
    Say("waitpath: {}\n", error);
    code = 1;
  }
  if (!options.metrics.file.empty() && !WriteMetricsFile(*analysis.metrics(), options.metrics.file))
    code = 1;
  if (server) {
    std::cout.flush();
    // The report is out; what keeps the command running is said, with how to end it.
    fmt::print(stderr, "waitpath: analysis done; serving metrics on http://{}/metrics {}\n",
               server->bound(),
               linger_ns < 0 ? std::string("until Ctrl-C or SIGTERM")
                             : "for " + options.metrics.linger +
                                   " more (--metrics-linger); Ctrl-C or SIGTERM stops it");
    Linger(linger_ns);
  }
  return code;
}

Command AddAnalyzeCommand(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  MetricsFlags* m = &o->metrics;
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
  cmd->add_flag(
      "--merge-recordings", o->merge_recordings,
      "Read several recordings of one hostname (a machine traced twice, two machines with "
      "one name) as one host; refused otherwise");
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
  return Command{cmd, [o] { return RunAnalyze(*o); }};
}

}  // namespace waitpath
