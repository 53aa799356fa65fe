#include "tools/gen/common.h"

#include <stdexcept>

namespace waitpath::gen {

Ns DurationOrThrow(std::string_view text, DurationSign sign) {
  Ns ns = 0;
  std::string why;
  if (!ParseDuration(text, &ns, &why, sign)) throw std::invalid_argument(why);
  return ns;
}

DurationRange ParseDurationRange(std::string_view text) {
  auto dots = text.find("..");
  if (dots == std::string_view::npos) {
    Ns d = DurationOrThrow(text);
    return {d, d};
  }
  DurationRange r{DurationOrThrow(text.substr(0, dots)), DurationOrThrow(text.substr(dots + 2))};
  if (r.hi < r.lo) throw std::invalid_argument("empty duration range '" + std::string(text) + "'");
  return r;
}

}  // namespace waitpath::gen
