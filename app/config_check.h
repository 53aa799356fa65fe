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

// The --config file named in argv, or empty.
std::string ConfigPathFromArgs(int argc, char** argv);

// True when the file is fine; else false with a one-line `error` naming file and line.
bool CheckConfig(const std::string& path, CLI::App& app, std::string* error);

}  // namespace waitpath
