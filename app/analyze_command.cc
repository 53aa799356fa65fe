#include "app/analyze_command.h"

#include "app/command.h"

#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "exporters/analysis_report.h"
#include "live/bt_util.h"
#include "stream/host_stats.h"
#include "stream/host_streams.h"

namespace waitpath {

bool ParseDuration(const std::string& text, int64_t* ns) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (...) {
    return false;
  }
  const std::string unit = text.substr(pos);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s" || unit.empty()) scale = 1e9;
  else if (unit == "m" || unit == "min") scale = 60e9;
  if (scale == 0 || value < 0 || !std::isfinite(value)) return false;
  *ns = static_cast<int64_t>(std::llround(value * scale));
  return true;
}

int RunAnalyze(const AnalyzeOptions& options) {
  ConfigureBabeltraceLogging(options.verbose);
  WatchSet watch;
  std::string error;
  for (const std::string& w : options.watch) {
    WatchSelector s;
    if (!ParseWatch(w, &s, &error)) {
      fmt::print(stderr, "waitpath: {}\n", error);
      return 2;
    }
    watch.Add(std::move(s));
  }
  AnalysisOptions report_options;
  report_options.json = options.json;
  report_options.top = options.top;
  if (!options.min_wait.empty() && !ParseDuration(options.min_wait, &report_options.min_wait_ns)) {
    fmt::print(stderr, "waitpath: --min-wait '{}': expected a duration such as 5ms, 200us or 1s\n", options.min_wait);
    return 2;
  }
  EngineOptions engine_options;
  if (!ParseDuration(options.retention, &engine_options.retention_ns)) {
    fmt::print(stderr, "waitpath: --retention '{}': expected a duration such as 30s\n", options.retention);
    return 2;
  }
  engine_options.max_history_bytes = options.max_history_mb << 20;

  std::vector<HostSpec> hosts;
  if (!DiscoverHosts(options.traces, &hosts, &error)) {
    fmt::print(stderr, "waitpath: {}\n", error);
    return 1;
  }
  std::vector<std::string> names;
  for (const HostSpec& h : hosts) names.push_back(h.hostname);

  Engine engine(engine_options);
  AnalysisReport report(engine, names, std::move(watch), report_options, std::cout);
  engine.SetListener(&report);

  ReaderOptions reader_options;
  reader_options.verbose = options.verbose;
  HostStreams streams(hosts, reader_options);
  std::vector<HostStats> stats(hosts.size());
  streams.Start();
  while (auto batch = streams.Next()) {
    stats[batch->host].Add(*batch);
    engine.Push(*batch);
    streams.Recycle(std::move(batch));
  }
  report.Finish();

  int code = 0;
  for (size_t i = 0; i < stats.size(); ++i) {
    if (!stats[i].error.empty()) {
      fmt::print(stderr, "waitpath: host {}: {}\n", names[i], stats[i].error);
      code = 1;
    } else if (!stats[i].analysable()) {
      fmt::print(stderr, "waitpath: host {}: no sched_switch events: nothing to analyse (not a kernel trace?)\n",
                 names[i]);
      code = 1;
    }
  }
  return code;
}

Command AddAnalyzeCommand(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Active paths of watched tasks: why they waited, and on whom");
  cmd->add_flag("--json", o->json, "JSON Lines: a task record per watched task, wait records");
  cmd->add_option("--watch", o->watch,
                  "Tasks to report: key=value[,key=value] with comm (regex), tid, pid, host; "
                  "repeat to OR; default every task that ran");
  cmd->add_option("--min-wait", o->min_wait, "Also report each wait at least this long (e.g. 5ms)");
  cmd->add_option("--top", o->top, "Tasks listed per watched task (by time on its path)")->capture_default_str();
  cmd->add_option("--retention", o->retention, "History kept behind the newest event")->capture_default_str();
  cmd->add_option("--max-history-mb", o->max_history_mb, "Cap on retained history")->capture_default_str();
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  cmd->add_option("TRACE", o->traces, "Trace directories")->required();
  return Command{cmd, [o] { return RunAnalyze(*o); }};
}

}  // namespace waitpath
