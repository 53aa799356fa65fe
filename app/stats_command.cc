#include "app/stats_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "app/command.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "app/report_flags.h"
#include "base/output.h"
#include "exporters/stats_report.h"
#include "readers/bt_util.h"
#include "stream/pipeline.h"

namespace waitpath {

int RunStats(const StatsOptions& options) {
  ConfigureBabeltraceLogging(options.verbose);
  std::vector<HostSpec> hosts;
  std::string error;
  DiscoverOptions discover;
  discover.host_from_dir = options.host_from == "dir";
  discover.merge_recordings = options.merge_recordings;
  const int found = FindHosts(options.traces, discover, &hosts);
  if (hosts.empty()) return found;
  PipelineOptions pipeline_options;  // kIdentity: counting needs no clock sync
  pipeline_options.reader.verbose = options.verbose;
  pipeline_options.reader.decoder = DecoderChoice(options.decoder);
  Pipeline pipeline(pipeline_options, nullptr);
  for (const HostSpec& host : hosts) pipeline.AddSource(host);
  pipeline.ReadAll(&error);
  const std::vector<HostStats>& stats = pipeline.stats();

  if (options.json) {
    WriteStatsJson(std::cout, hosts, stats);
  } else {
    WriteStatsText(std::cout, hosts, stats, options.time_format);
  }
  return std::max(found, ReportHostErrors(stats));
}

Command AddStatsCommand(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* cmd =
      app.add_subcommand("stats", "Read traces end to end and report, per host, what they hold");
  cmd->add_flag("--json", options->json, "One JSON object per host");
  AddClockFlags(cmd, &options->time_format);
  cmd->add_flag("-v,--verbose", options->verbose, "babeltrace2 warnings and full error chains");
  AddDecoderOption(cmd, &options->decoder);
  cmd->add_option("--host-from", options->host_from,
                  "Name hosts by the hostname in their traces, or by the directory given for "
                  "them (two machines with one hostname)")
      ->check(CLI::IsMember({"hostname", "dir"}))
      ->capture_default_str();
  cmd->add_flag(
      "--merge-recordings", options->merge_recordings,
      "Read several recordings of one hostname (a machine traced twice, two machines with "
      "one name) as one host; refused otherwise");
  cmd->add_option("TRACE", options->traces,
                  "Trace directories (several hosts, or a session output)")
      ->required();
  return Command{cmd, [options] { return RunStats(*options); }};
}

}  // namespace waitpath
