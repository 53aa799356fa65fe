#include "base/time_format.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace waitpath {
namespace {

TEST(TimeFormat, AsBabeltrace2ShowsThem) {
  // 2013-02-18 19:01:16.525090092 UTC (scp_src's first event).
  const int64_t t = 1361214076525090092;
  TimeFormat gmt;
  gmt.gmt = true;
  EXPECT_EQ(FormatTime(t, gmt), "19:01:16.525090092");
  gmt.date = true;
  EXPECT_EQ(FormatTime(t, gmt), "2013-02-18 19:01:16.525090092");
  TimeFormat seconds;
  seconds.seconds = true;
  EXPECT_EQ(FormatTime(t, seconds), "1361214076.525090092");
  // Local time by default.
  setenv("TZ", "Europe/Paris", 1);
  tzset();
  EXPECT_EQ(FormatTime(t, TimeFormat{}), "20:01:16.525090092");
  unsetenv("TZ");
  tzset();
}

TEST(TimeFormat, ClocksSinceBootSaySo) {
  const int64_t uptime = 3723'000'000'123;  // 1 h 2 min 3 s since boot (perf's clock)
  EXPECT_EQ(FormatTime(uptime, TimeFormat{}), "boot+1:02:03.000000123");
  TimeFormat seconds;
  seconds.seconds = true;
  EXPECT_EQ(FormatTime(uptime, seconds), "boot+3723.000000123");
  EXPECT_EQ(FormatTime(INT64_MAX, TimeFormat{}), "-");
}

}  // namespace
}  // namespace waitpath
