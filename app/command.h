// A `waitpath` subcommand: registers its flags on the CLI and runs once parsed.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace waitpath {

struct Command {
  CLI::App* cli;
  std::function<int()> run;  // the process exit code
};

// One registration function per subcommand, each in its own *_command.cc.
Command AddStatsCommand(CLI::App& app);
Command AddAnalyzeCommand(CLI::App& app);
Command AddSyncCommand(CLI::App& app);
Command AddLiveCommand(CLI::App& app);
Command AddTailCommand(CLI::App& app);
Command AddDemoCommand(CLI::App& app);

}  // namespace waitpath
