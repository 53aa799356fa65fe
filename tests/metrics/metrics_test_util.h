// Helpers of the metrics tests: run waitpath (in the foreground, or in the background while a
// test scrapes it), parse the Prometheus text exposition, generate scenarios.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace waitpath::testing {

namespace fs = std::filesystem;

// One sample: its metric name, its labels, its value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

inline std::vector<Sample> ParseExposition(const std::string& text) {
  static const std::regex kLine(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$)");
  static const std::regex kLabel(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  std::vector<Sample> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (line.empty() || line[0] == '#' || !std::regex_match(line, m, kLine)) continue;
    Sample s;
    s.name = m[1];
    s.value = std::stod(m[4]);
    const std::string labels = m[3];
    for (std::sregex_iterator it(labels.begin(), labels.end(), kLabel), end; it != end; ++it) {
      s.labels[(*it)[1]] = (*it)[2];
    }
    out.push_back(std::move(s));
  }
  return out;
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A command run in the background with stdout and stderr in files; killed by its pid.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Background() { Kill(); }

  bool started() const { return pid_ > 0; }
  // True (with the exit code) once it has exited.
  bool Exited(int* code) {
    if (pid_ <= 0) return true;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
    pid_ = -1;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }
  int Wait() {
    int status = 0;
    if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    return -1;
  }
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    Wait();
  }

 private:
  pid_t pid_ = -1;
};

// Waits for "metrics on http://ADDR/metrics" in waitpath's stderr; "" after the timeout.
inline std::string WaitForMetricsAddress(const fs::path& err, std::chrono::seconds timeout) {
  static const std::regex kAddress(R"(metrics on http://(\S+)/metrics)");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = ReadFile(err);
    std::smatch m;
    if (std::regex_search(text, m, kAddress)) return m[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// GET http://ADDR/metrics with curl; "" when it fails.
inline std::string Scrape(const std::string& address) {
  const std::string cmd = "curl -sf --max-time 10 http://" + address + "/metrics 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (pclose(p) != 0) return "";
  }
  return out;
}

}  // namespace waitpath::testing
