// The `waitpath` command: each subcommand registers itself (app/*_command.cc).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <vector>

#include "app/command.h"
#include "app/config_check.h"
#include "app/help_formatter.h"
#include "base/output.h"

int main(int argc, char** argv) {
  waitpath::IgnoreSigpipe();
  // Output into a pipe or file goes out in 64 KiB writes, not stdio's 4 KiB: `tail --json`
  // writes a record per wait, and each write into a pipe may wake its reader (a context
  // switch each). Commands still flush when they have said something (app/live_command.cc).
  if (!isatty(fileno(stdout))) std::setvbuf(stdout, nullptr, _IOFBF, std::size_t{1} << 16);
  // Into a pipe, a megabyte of room (Linux's default is 64 KiB, one write's worth): a reader a
  // little behind (`| jq`, a log shipper) no longer blocks every write, a wake-up each time.
  // Refused (a lower fs.pipe-max-size), not a pipe, or a pipe already larger: as it was.
  struct stat out {};
  if (fstat(STDOUT_FILENO, &out) == 0 && S_ISFIFO(out.st_mode) &&
      fcntl(STDOUT_FILENO, F_GETPIPE_SZ) < (1 << 20))
    fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
  CLI::App app{"waitpath: why do programs wait? Active-path analysis of Linux kernel traces."};
  app.formatter(std::make_shared<waitpath::HelpFormatter>());  // before the subcommands: theirs
  app.require_subcommand(1);
  app.set_config("--config", "", "TOML file of options, a [SUBCOMMAND] table each; flags win");
  app.allow_config_extras(CLI::config_extras_mode::error)->fallthrough();  // --config after it

  const std::vector<waitpath::Command> commands = {
      waitpath::AddStatsCommand(app), waitpath::AddAnalyzeCommand(app),
      waitpath::AddSyncCommand(app),  waitpath::AddLiveCommand(app),
      waitpath::AddTailCommand(app),  waitpath::AddDemoCommand(app),
  };

  app.set_version_flag("-V,--version", "waitpath " WAITPATH_VERSION);
  // An unknown command is named, with the closest one (CLI11 would only say one is required).
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--config") {
      ++i;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), arg) == names.end()) {
      const std::string near = waitpath::ClosestName(arg, names);
      waitpath::Say("waitpath: no command '{}'{} (see waitpath --help)\n", arg,
                    near.empty() ? "" : " (did you mean '" + near + "'?)");
      return 2;
    }
    break;
  }
  const std::string config = waitpath::ConfigPathFromArgs(argc, argv);
  std::string config_error;
  if (!config.empty() && !waitpath::CheckConfig(config, app, &config_error)) {
    waitpath::Say("waitpath: {}\n", config_error);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    // A mistyped option is named with the closest one, as a mistyped command is.
    const std::string unknown = waitpath::UnknownOption(app, argc, argv);
    waitpath::Say("waitpath: {} (see waitpath --help)\n", unknown.empty() ? e.what() : unknown);
    return 2;
  } catch (const CLI::ParseError& e) {
    waitpath::Say("waitpath: {} (see waitpath --help)\n", e.what());
    return 2;
  }
  // No command ends by an uncaught exception: one line, exit 1.
  try {
    for (const waitpath::Command& c : commands) {
      if (!c.cli->parsed()) continue;
      const int code = c.run();
      // Everything written and nobody read it (`| head`): the status a SIGPIPE would give.
      return code == 0 && waitpath::StdoutClosed() ? waitpath::kExitOutputClosed : code;
    }
  } catch (const std::exception& e) {
    waitpath::Say("waitpath: internal error: {}\n", e.what());
    return 1;
  } catch (...) {
    waitpath::Say("waitpath: internal error (unknown exception)\n");
    return 1;
  }
  return 2;
}
