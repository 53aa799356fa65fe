#include "base/time_format.h"

#include <fmt/format.h>

#include <ctime>
#include <limits>

namespace waitpath {

std::string FormatTime(int64_t ns, const TimeFormat& format) {
  if (ns == std::numeric_limits<int64_t>::max() || ns == std::numeric_limits<int64_t>::min())
    return "-";
  const bool negative = ns < 0;
  const uint64_t abs = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  const uint64_t secs = abs / 1'000'000'000, frac = abs % 1'000'000'000;
  const char* sign = negative ? "-" : "";
  if (ns < kWallClockFloorNs) {
    // Since boot (or another origin): no calendar.
    if (format.seconds) return fmt::format("boot+{}{}.{:09}", sign, secs, frac);
    return fmt::format("boot+{}{}:{:02}:{:02}.{:09}", sign, secs / 3600, secs / 60 % 60, secs % 60,
                       frac);
  }
  if (format.seconds) return fmt::format("{}.{:09}", secs, frac);
  const time_t t = static_cast<time_t>(secs);
  std::tm tm{};
  if (format.gmt) {
    gmtime_r(&t, &tm);
  } else {
    localtime_r(&t, &tm);
  }
  if (format.date) {
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09}", tm.tm_year + 1900,
                       tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  }
  return fmt::format("{:02}:{:02}:{:02}.{:09}", tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

}  // namespace waitpath
