#include "app/stats_command.h"

#include <fmt/format.h>

#include <iostream>

#include "app/command.h"
#include "app/host_errors.h"
#include "exporters/stats_report.h"
#include "live/bt_util.h"
#include "stream/host_streams.h"

namespace waitpath {

int RunStats(const StatsOptions& options) {
  ConfigureBabeltraceLogging(options.verbose);
  std::vector<HostSpec> hosts;
  std::string error;
  if (!DiscoverHosts(options.traces, &hosts, &error)) {
    fmt::print(stderr, "waitpath: {}\n", error);
    return 1;
  }
  std::vector<HostStats> stats(hosts.size());
  for (size_t i = 0; i < hosts.size(); ++i) stats[i].host = hosts[i].hostname;

  ReaderOptions reader_options;
  reader_options.verbose = options.verbose;
  HostStreams streams(hosts, reader_options);
  streams.Start();
  while (auto batch = streams.Next(/*ordered=*/false)) {
    stats[batch->host].Add(*batch);
    streams.Recycle(std::move(batch));
  }

  if (options.json) {
    WriteStatsJson(std::cout, hosts, stats);
  } else {
    WriteStatsText(std::cout, hosts, stats);
  }
  return ReportHostErrors(stats);
}

Command AddStatsCommand(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* cmd =
      app.add_subcommand("stats", "Read traces end to end and report, per host, what they hold");
  cmd->add_flag("--json", options->json, "One JSON object per host");
  cmd->add_flag("-v,--verbose", options->verbose, "babeltrace2 warnings and full error chains");
  cmd->add_option("TRACE", options->traces,
                  "Trace directories (several hosts, or a session output)")
      ->required();
  return Command{cmd, [options] { return RunStats(*options); }};
}

}  // namespace waitpath
