#include "exporters/watch.h"

#include <charconv>
#include <sstream>

namespace waitpath {
namespace {
bool ParseInt(std::string_view s, int32_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}
}  // namespace

bool ParseWatch(const std::string& text, WatchSelector* out, std::string* error) {
  std::stringstream ss(text);
  std::string item;
  bool any = false;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      *error = "--watch '" + text + "': expected key=value (keys: comm, tid, pid, host)";
      return false;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "comm") {
      try {
        out->comm = std::regex(value, std::regex::ECMAScript);
        out->comm_text = value;
      } catch (const std::regex_error& e) {
        *error = "--watch comm='" + value + "': not a valid regular expression";
        return false;
      }
    } else if (key == "tid" || key == "pid") {
      int32_t v = 0;
      if (!ParseInt(value, &v)) {
        *error = "--watch " + key + "='" + value + "': not an integer";
        return false;
      }
      (key == "tid" ? out->tid : out->pid) = v;
    } else if (key == "host") {
      out->host = value;
    } else {
      *error = "--watch: unknown key '" + key + "' (keys: comm, tid, pid, host)";
      return false;
    }
    any = true;
  }
  if (!any) {
    *error = "--watch: empty selector";
    return false;
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
    if (s.comm && !std::regex_match(comm.begin(), comm.end(), *s.comm)) continue;
    return true;
  }
  return false;
}

}  // namespace waitpath
