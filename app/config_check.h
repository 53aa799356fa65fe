// Checks a --config TOML file before the command-line parser reads it: TOML syntax (with its
// line and column), keys that name no option of their [SUBCOMMAND] table (with the closest
// one), and value types (a flag takes true/false, an option a string, number or list).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace waitpath {

// The name in `names` closest to `name` (a near miss: at most 2 edits), or empty.
std::string ClosestName(std::string_view name, const std::vector<std::string>& names);

// For a command line CLI11 refused with arguments it did not expect: the first that looks like
// an option and is none of the command's, with the closest one ("analyze: no option --jsn (did
// you mean --json?)", as a mistyped command gets), or empty.
std::string UnknownOption(const CLI::App& app, int argc, char** argv);

// The --config file named in argv, or empty.
std::string ConfigPathFromArgs(int argc, char** argv);

// True when the file is fine; else false with a one-line `error` naming file and line.
bool CheckConfig(const std::string& path, CLI::App& app, std::string* error);

}  // namespace waitpath
