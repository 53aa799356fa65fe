// How times are shown to people, one format for every command, as babeltrace2 shows them:
// `HH:MM:SS.nnnnnnnnn` in local time by default; `--clock-date` adds the date, `--clock-gmt`
// uses UTC, `--clock-seconds` shows seconds since the epoch instead. A trace whose clock is
// not a wall clock (perf's is the time since boot: values below ~3 years) says so: `boot+…`.
#pragma once

#include <cstdint>
#include <string>

namespace waitpath {

struct TimeFormat {
  bool date = false;     // --clock-date
  bool gmt = false;      // --clock-gmt
  bool seconds = false;  // --clock-seconds
};

// Times below this are not wall-clock times (10^17 ns: 1973): a clock since boot.
inline constexpr int64_t kWallClockFloorNs = 100'000'000'000'000'000;

std::string FormatTime(int64_t ns, const TimeFormat& format);

}  // namespace waitpath
