#include "exporters/watch.h"

#include <array>
#include <charconv>

namespace waitpath {
namespace {

constexpr std::array<std::string_view, 5> kKeys = {"comm!", "comm", "tid", "pid", "host"};

bool ParseInt(std::string_view s, int32_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Whether an item starts at `s`: a key followed by '=' ("comm!" is the key of "comm!=").
bool StartsItem(std::string_view s) {
  for (std::string_view key : kKeys) {
    if (s.size() > key.size() && s.substr(0, key.size()) == key && s[key.size()] == '=')
      return true;
  }
  return false;
}

// The items of a selector: split at each comma that starts a new item.
std::vector<std::string> Items(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ',' && StartsItem(std::string_view(text).substr(i + 1))) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  items.push_back(text.substr(start));
  return items;
}

std::shared_ptr<const RE2> Compile(const std::string& key, const std::string& value,
                                   std::string* error) {
  if (value.size() > kMaxWatchPattern) {
    *error = "--watch " + key + "=: pattern of " + std::to_string(value.size()) +
             " characters; at most " + std::to_string(kMaxWatchPattern);
    return nullptr;
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(8 << 20);
  auto re = std::make_shared<const RE2>(value, options);
  if (!re->ok()) {
    *error = "--watch " + key + "='" + value + "': " + re->error() +
             " (RE2 syntax: no look-around or back-references; use comm!= to exclude)";
    return nullptr;
  }
  return re;
}

}  // namespace

bool ParseWatch(const std::string& text, WatchSelector* out, std::string* error) {
  if (text.empty()) {
    *error = "--watch: empty selector";
    return false;
  }
  for (const std::string& item : Items(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || !StartsItem(item)) {
      *error = "--watch '" + text + "': expected key=value (keys: comm, comm!, tid, pid, host)";
      return false;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "comm" || key == "comm!") {
      auto re = Compile(key, value, error);
      if (!re) return false;
      if (key == "comm") {
        out->comm = std::move(re);
        out->comm_text = value;
      } else {
        out->not_comm.push_back(std::move(re));
      }
    } else if (key == "tid" || key == "pid") {
      int32_t v = 0;
      if (!ParseInt(value, &v)) {
        *error = "--watch " + key + "='" + value + "': not an integer";
        return false;
      }
      (key == "tid" ? out->tid : out->pid) = v;
    } else {
      out->host = value;
    }
  }
  return true;
}

bool WatchSet::Matches(std::string_view host, int32_t tid, int32_t pid,
                       std::string_view comm) const {
  if (selectors_.empty()) return true;
  for (const WatchSelector& s : selectors_) {
    if (s.tid && *s.tid != tid) continue;
    if (s.pid && *s.pid != pid) continue;
    if (s.host && *s.host != host) continue;
    if (s.comm && !RE2::FullMatch(comm, *s.comm)) continue;
    bool excluded = false;
    for (const auto& re : s.not_comm) excluded = excluded || RE2::FullMatch(comm, *re);
    if (excluded) continue;
    return true;
  }
  return false;
}

}  // namespace waitpath
