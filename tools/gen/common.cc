#include "tools/gen/common.h"

#include <charconv>
#include <stdexcept>

namespace waitpath::gen {

Ns ParseDuration(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) {
    throw std::invalid_argument("not a duration: '" + std::string(text) + "'");
  }
  std::string_view unit(ptr, static_cast<size_t>(end - ptr));
  double scale = 1;
  if (unit.empty() || unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = kUs;
  } else if (unit == "ms") {
    scale = kMs;
  } else if (unit == "s") {
    scale = kSec;
  } else {
    throw std::invalid_argument("unknown duration unit in '" + std::string(text) +
                                "' (use ns, us, ms or s)");
  }
  return static_cast<Ns>(value * scale + 0.5);
}

DurationRange ParseDurationRange(std::string_view text) {
  auto dots = text.find("..");
  if (dots == std::string_view::npos) {
    Ns d = ParseDuration(text);
    return {d, d};
  }
  DurationRange r{ParseDuration(text.substr(0, dots)), ParseDuration(text.substr(dots + 2))};
  if (r.hi < r.lo) throw std::invalid_argument("empty duration range '" + std::string(text) + "'");
  return r;
}

}  // namespace waitpath::gen
