// The `waitpath` command: wires the subcommands to the pipeline.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app/analyze_command.h"
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

  waitpath::AnalyzeOptions analyze;
  CLI::App* analyze_cmd =
      app.add_subcommand("analyze", "Active paths of watched tasks: why they waited, and on whom");
  analyze_cmd->add_flag("--json", analyze.json, "JSON Lines: a task record per watched task, wait records");
  analyze_cmd->add_option("--watch", analyze.watch,
                          "Tasks to report: key=value[,key=value] with comm (regex), tid, pid, host; "
                          "repeat to OR; default every task that ran");
  analyze_cmd->add_option("--min-wait", analyze.min_wait, "Also report each wait at least this long (e.g. 5ms)");
  analyze_cmd->add_option("--top", analyze.top, "Tasks listed per watched task (by time on its path)")
      ->capture_default_str();
  analyze_cmd->add_option("--retention", analyze.retention, "History kept behind the newest event")
      ->capture_default_str();
  analyze_cmd->add_option("--max-history-mb", analyze.max_history_mb, "Cap on retained history")
      ->capture_default_str();
  analyze_cmd->add_flag("-v,--verbose", analyze.verbose, "babeltrace2 warnings and full error chains");
  analyze_cmd->add_option("TRACE", analyze.traces, "Trace directories")->required();

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
  if (analyze_cmd->parsed()) return waitpath::RunAnalyze(analyze);
  return 2;
}
