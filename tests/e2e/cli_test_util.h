// Runs the built `waitpath` command in end-to-end tests and parses its JSON Lines.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace waitpath::testing {

inline const std::string kWaitpath = WAITPATH_BINARY;
inline const std::string kShared = WAITPATH_SHARED_TRACES;
inline const std::string kFixtures = WAITPATH_FIXTURES;

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `env`: optional "NAME=value" assignments put before the command.
inline CommandResult RunWaitpath(const std::string& args, const std::string& env = "") {
  const std::string err_file = std::filesystem::temp_directory_path() /
                               ("waitpath-e2e-stderr-" + std::to_string(::getpid()));
  const std::string cmd =
      env + (env.empty() ? "" : " ") + kWaitpath + " " + args + " 2>" + err_file;
  CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[65536];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = p ? pclose(p) : -1;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (FILE* e = fopen(err_file.c_str(), "r")) {
    while ((n = fread(buf, 1, sizeof buf, e)) > 0) r.err.append(buf, n);
    fclose(e);
  }
  std::filesystem::remove(err_file);
  return r;
}

inline std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

#ifdef WAITPATH_GEN
// Generates a scenario of tools/gen/scenarios into a fresh temporary directory named after
// `tag` (and this process), with extra arguments (`--set key=value`...).
inline std::filesystem::path GenerateScenario(const std::string& scenario, const std::string& extra,
                                              const std::string& tag) {
  const std::filesystem::path out =
      std::filesystem::temp_directory_path() / (tag + scenario + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  const std::string cmd = std::string(WAITPATH_GEN) + " --scenario " + WAITPATH_SCENARIOS + "/" +
                          scenario + ".toml --out " + out.string() + " " + extra +
                          " >/dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return out;
}
#endif

inline bool HaveShared(const std::string& name) {
  return std::filesystem::exists(kShared + "/" + name + "/metadata");
}

}  // namespace waitpath::testing
