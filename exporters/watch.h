// Which tasks to report: `--watch key=value[,key=value]` selectors, OR-ed.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace waitpath {

struct WatchSelector {
  std::optional<std::regex> comm;  // full match of the task's name
  std::string comm_text;
  std::optional<int32_t> tid, pid;
  std::optional<std::string> host;
};

// Parses "comm=REGEX,tid=N,pid=N,host=NAME". Returns false with a one-line error.
bool ParseWatch(const std::string& text, WatchSelector* out, std::string* error);

class WatchSet {
 public:
  void Add(WatchSelector s) { selectors_.push_back(std::move(s)); }
  bool empty() const { return selectors_.empty(); }
  // Without selectors every task matches.
  bool Matches(std::string_view host, int32_t tid, int32_t pid, std::string_view comm) const;

 private:
  std::vector<WatchSelector> selectors_;
};

}  // namespace waitpath
