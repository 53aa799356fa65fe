// The `waitpath` command: wires the subcommands to the pipeline.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/stats_command.h"

int main(int argc, char** argv) {
  CLI::App app{"waitpath: why do programs wait? Active-path analysis of Linux kernel traces."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "waitpath 0.1.0");

  waitpath::StatsOptions stats;
  CLI::App* stats_cmd = app.add_subcommand("stats", "Read traces end to end and report, per host, what they hold");
  stats_cmd->add_flag("--json", stats.json, "One JSON object per host");
  stats_cmd->add_flag("-v,--verbose", stats.verbose, "babeltrace2 warnings and full error chains");
  stats_cmd->add_option("TRACE", stats.traces, "Trace directories (several hosts, or a session output)")
      ->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "waitpath: {} (see waitpath --help)\n", e.what());
    return 2;
  }
  if (stats_cmd->parsed()) return waitpath::RunStats(stats);
  return 2;
}
