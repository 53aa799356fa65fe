#include "app/capture_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "app/analysis.h"
#include "app/engine_feed.h"
#include "app/flag_checks.h"
#include "app/report_flags.h"
#include "app/timeline_flags.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/untrusted_name.h"
#include "exporters/timeline_writer.h"

namespace waitpath {

namespace fs = std::filesystem;

namespace {

// --capture-min-request: a duration, or pNN (pNN.N): slower than that quantile of the
// operation's recent spans.
bool ParseRequestThreshold(const std::string& value, int64_t* min_ns, double* quantile,
                           std::string* error) {
  if (!value.empty() && value[0] == 'p') {
    char* end = nullptr;
    const double q = std::strtod(value.c_str() + 1, &end);
    if (end != value.c_str() + 1 && *end == '\0' && q >= 50 && q < 100) {
      *quantile = q / 100;
      return true;
    }
    *error = fmt::format(
        "--capture-min-request: '{}' is neither a duration nor a percentile from p50 to p99.99",
        value);
    return false;
  }
  return ParseDurationFlag("--capture-min-request", value, min_ns, error);
}

}  // namespace

void AddCaptureFlags(CLI::App* cmd, CaptureFlags* flags, bool live) {
  cmd->add_option("--capture-dir", flags->dir,
                  "Save the trace of every host on the path of each wait at least "
                  "--capture-min-wait long (or request at least --capture-min-request) there, "
                  "with wait.json and a timeline (docs/capture.md)");
  cmd->add_option("--capture-min-wait", flags->min_wait, "Capture waits at least this long")
      ->check(DurationCheck(false));
  cmd->add_option("--capture-min-request", flags->min_request,
                  "Capture requests (application spans) at least this long, or, as pNN, slower "
                  "than that percentile of their operation's recent ones");
  cmd->add_option("--capture-margin", flags->margin, "Trace kept before and after the wait")
      ->capture_default_str()
      ->check(DurationCheck(false));
  cmd->add_option("--capture-max-mb", flags->max_mb,
                  "All captures together at most this much: the oldest are removed")
      ->capture_default_str()
      ->check(IntegerRange(1, 1 << 24));
  cmd->add_option("--capture-max-per-hour", flags->max_per_hour,
                  "Captures in any hour at most; more are skipped (counted)")
      ->capture_default_str()
      ->check(IntegerRange(1, 1'000'000));
  if (live) {
    cmd->add_option("--capture-traces", flags->traces,
                    "The relayd's output directory (lttng-relayd -o), where captures are cut "
                    "from (default: from the recent packets waitpath keeps, --capture-ring-mb)");
    cmd->add_option("--capture-ring-mb", flags->ring_mb,
                    "Without --capture-traces: the recent packets kept per host to cut captures "
                    "from (the oldest go first)")
        ->capture_default_str()
        ->check(IntegerRange(1, 1 << 20));
  }
}

bool ParseCaptureFlags(const CaptureFlags& flags, bool live, CaptureOptions* options,
                       std::string* error) {
  if (flags.dir.empty()) {
    if (!flags.min_wait.empty() || !flags.min_request.empty() || !flags.traces.empty()) {
      *error =
          "--capture-min-wait, --capture-min-request and --capture-traces go with --capture-dir "
          "DIR";
      return false;
    }
    return true;
  }
  if (flags.min_wait.empty() && flags.min_request.empty()) {
    *error =
        "--capture-dir needs --capture-min-wait DUR or --capture-min-request DUR (which waits or "
        "requests to capture)";
    return false;
  }
  if (live && !flags.traces.empty() && !fs::is_directory(flags.traces)) {
    *error = fmt::format("--capture-traces {}: not a directory", flags.traces);
    return false;
  }
  std::error_code ec;
  fs::create_directories(flags.dir, ec);
  if (ec || !fs::is_directory(flags.dir)) {
    *error = fmt::format("--capture-dir {}: cannot create it", flags.dir);
    return false;
  }
  options->dir = flags.dir;
  options->min_wait_ns = INT64_MAX;  // none, unless asked
  if (!flags.min_wait.empty() &&
      !ParseDurationFlag("--capture-min-wait", flags.min_wait, &options->min_wait_ns, error))
    return false;
  if (!flags.min_request.empty() &&
      !ParseRequestThreshold(flags.min_request, &options->min_request_ns,
                             &options->request_quantile, error))
    return false;
  if (!ParseDurationFlag("--capture-margin", flags.margin, &options->margin_ns, error))
    return false;
  options->max_bytes = flags.max_mb << 20;
  options->max_per_hour = flags.max_per_hour;
  return true;
}

TraceLocator RelaydOutputLocator(std::string root) {
  return [root = std::move(root)](const std::string& host) {
    std::vector<std::string> out;
    std::error_code ec;
    // The relayd writes a host's sessions under ROOT/HOSTNAME; a hostname that is not a plain
    // file name ("../../etc", "/") is not looked for at all (docs/capture.md).
    if (!IsPlainName(host)) return out;
    const fs::path host_dir = fs::path(root) / host;
    // The relayd names a session's directory SESSION-YYYYMMDD-HHMMSS: the newest last.
    std::vector<fs::path> sessions;
    for (const auto& e : fs::directory_iterator(host_dir, ec)) {
      if (e.is_directory(ec)) sessions.push_back(e.path());
    }
    if (sessions.empty()) return out;
    std::sort(sessions.begin(), sessions.end(), [](const fs::path& a, const fs::path& b) {
      std::error_code e1, e2;
      return fs::last_write_time(a, e1) < fs::last_write_time(b, e2);
    });
    for (auto it = fs::recursive_directory_iterator(sessions.back(), ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->is_regular_file(ec) && it->path().filename() == "metadata")
        out.push_back(it->path().parent_path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
}

bool WriteCaptureTimeline(const CaptureMade& capture, const std::vector<std::string>& watch_flags,
                          const std::string& reference, int64_t min_wait_ns, std::string* error) {
  std::vector<HostSpec> hosts;
  DiscoverOptions discover;
  discover.warn = [](const std::string&) {};
  if (!DiscoverHosts({capture.dir}, &hosts, error, discover)) return false;
  AnalysisPlan plan;
  AnalysisOptions report_options;
  if (!ParseReportFlags(watch_flags, "", "30s", &plan.watch, &report_options, &plan.engine, error))
    return false;
  plan.hosts = HostNames(hosts);
  TimelinePlan& timeline = plan.timeline.emplace();
  timeline.options.window.from = capture.from_ns;
  timeline.options.window.to = capture.to_ns;
  // A capture of requests only highlights the waits a timeline would by default.
  timeline.options.min_wait_ns = min_wait_ns == INT64_MAX ? 1'000'000 : min_wait_ns;
  const bool has_reference =
      std::find(plan.hosts.begin(), plan.hosts.end(), reference) != plan.hosts.end();
  timeline.reference = has_reference ? reference : plan.hosts[0];
  Analysis analysis(std::move(plan));
  PipelineOptions pipeline;
  if (has_reference) pipeline.reference = reference;
  std::vector<HostStats> stats;
  if (!AnalyseTraces(hosts, pipeline, analysis.feed(), &stats, error)) return false;
  analysis.Finish();
  return WriteTimelineFile(*analysis.timeline(), (fs::path(capture.dir) / "timeline.json").string(),
                           error);
}

std::function<void(const CaptureMade&)> CaptureTimelineWriter(std::vector<std::string> watch,
                                                              std::string reference,
                                                              int64_t min_wait_ns) {
  return [watch = std::move(watch), reference = std::move(reference),
          min_wait_ns](const CaptureMade& made) {
    std::string why;
    if (!WriteCaptureTimeline(made, watch, reference, min_wait_ns, &why))
      Say("waitpath: capture {}: no timeline: {}\n", made.dir, why);
  };
}

}  // namespace waitpath
