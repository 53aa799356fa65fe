// Which tasks to report: `--watch key=value[,key=value]` selectors, OR-ed (docs/analyze.md).
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waitpath {

struct WatchSelector {
  // Full matches of the task's name: it must match `comm` and none of `not_comm`. RE2 syntax:
  // matching takes time linear in the name, whatever the pattern (no backtracking, so no
  // look-around or back-references).
  std::shared_ptr<const RE2> comm;
  std::string comm_text;
  std::vector<std::shared_ptr<const RE2>> not_comm;
  std::optional<int32_t> tid, pid;
  std::optional<std::string> host;
};

// A pattern longer than this is refused (RE2's memory budget bounds what is left).
inline constexpr size_t kMaxWatchPattern = 1024;

// Parses "comm=REGEX,comm!=REGEX,tid=N,pid=N,host=NAME". A comma separates items only where the
// next item starts with a key and `=` or `!=` (so `comm=a{2,3}` is one item). Returns false with
// a one-line error.
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
