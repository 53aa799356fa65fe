#include "base/duration.h"

#include <gtest/gtest.h>

#include <limits>

namespace waitpath {
namespace {

int64_t Ns(std::string_view text, DurationSign sign = DurationSign::kNonNegative) {
  int64_t ns = -12345;
  std::string why;
  EXPECT_TRUE(ParseDuration(text, &ns, &why, sign)) << text << ": " << why;
  return ns;
}

std::string Why(std::string_view text, DurationSign sign = DurationSign::kNonNegative) {
  int64_t ns = -12345;
  std::string why;
  EXPECT_FALSE(ParseDuration(text, &ns, &why, sign)) << text;
  EXPECT_EQ(ns, -12345) << "changed on failure: " << text;
  return why;
}

TEST(Duration, EveryUnit) {
  EXPECT_EQ(Ns("750ns"), 750);
  EXPECT_EQ(Ns("250us"), 250'000);
  EXPECT_EQ(Ns("5ms"), 5'000'000);
  EXPECT_EQ(Ns("30s"), 30'000'000'000);
  EXPECT_EQ(Ns("2m"), 120'000'000'000);
  EXPECT_EQ(Ns("2min"), 120'000'000'000);
  EXPECT_EQ(Ns("1h"), 3'600'000'000'000);
  EXPECT_EQ(Ns("0s"), 0);
  EXPECT_EQ(Ns("0ns"), 0);
}

TEST(Duration, FractionsAreExactAndRoundedToTheNearestNanosecond) {
  EXPECT_EQ(Ns("1.5s"), 1'500'000'000);
  EXPECT_EQ(Ns("0.1s"), 100'000'000);  // 0.1 is not exact in binary floating point
  EXPECT_EQ(Ns("2.25ms"), 2'250'000);
  EXPECT_EQ(Ns(".5us"), 500);
  EXPECT_EQ(Ns("5.us"), 5'000);
  EXPECT_EQ(Ns("1.4ns"), 1);
  EXPECT_EQ(Ns("1.5ns"), 2);
  EXPECT_EQ(Ns("0.000000001s"), 1);
  EXPECT_EQ(Ns("0.0000000004s"), 0);
  EXPECT_EQ(Ns("1.000000000001h"), 3'600'000'000'004);  // 3.6 ns, rounded
  EXPECT_EQ(Ns("0.12345678901234567890123s"), 123'456'789);
}

TEST(Duration, SurroundingSpacesAreIgnored) {
  EXPECT_EQ(Ns(" 3ms "), 3'000'000);
  EXPECT_EQ(Why("3 ms"), "'3 ms' has an unknown unit (ns, us, ms, s, m, h)");
}

TEST(Duration, ABareNumberNeedsAUnit) {
  EXPECT_EQ(Why("30"), "'30' needs a unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("0"), "'0' needs a unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("1.5"), "'1.5' needs a unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("-5", DurationSign::kSigned), "'-5' needs a unit (ns, us, ms, s, m, h)");
}

TEST(Duration, MalformedText) {
  EXPECT_EQ(Why(""), "'' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("soon"), "'soon' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("."), "'.' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("-"), "'-' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("5parsecs"), "'5parsecs' has an unknown unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("1e3s"), "'1e3s' has an unknown unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("+1s"), "'+1s' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("1.2.3s"), "'1.2.3s' has an unknown unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("5S"), "'5S' has an unknown unit (ns, us, ms, s, m, h)");
  EXPECT_EQ(Why("infs"), "'infs' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
  EXPECT_EQ(Why("nanms"), "'nanms' is not a duration (a number and a unit, e.g. 250us, 5ms, 30s)");
}

TEST(Duration, NegativeOnlyWhenSigned) {
  EXPECT_EQ(Why("-1s"), "'-1s' is negative");
  EXPECT_EQ(Ns("-1.75s", DurationSign::kSigned), -1'750'000'000);
  EXPECT_EQ(Ns("-1.5ns", DurationSign::kSigned), -2);  // half away from zero, as positives
  EXPECT_EQ(Ns("-0s"), 0);
}

TEST(Duration, Int64Limits) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Ns("9223372036854775807ns"), max);
  EXPECT_EQ(Ns("-9223372036854775807ns", DurationSign::kSigned), -max);
  EXPECT_EQ(Ns("2562047h"), 2'562'047 * 3'600'000'000'000);
  const std::string too_long = "is too long (at most about 292 years)";
  EXPECT_EQ(Why("9223372036854775808ns"), "'9223372036854775808ns' " + too_long);
  EXPECT_EQ(Why("9223372036.854775808s"), "'9223372036.854775808s' " + too_long);
  EXPECT_EQ(Why("2562048h"), "'2562048h' " + too_long);
  EXPECT_EQ(Why("99999999999999999999999999999999s"),
            "'99999999999999999999999999999999s' " + too_long);
  EXPECT_EQ(Why("-99999999999999999999h", DurationSign::kSigned),
            "'-99999999999999999999h' " + too_long);
}

TEST(DurationFlag, NamesTheFlagAndTheValue) {
  int64_t ns = 0;
  std::string error;
  EXPECT_TRUE(ParseDurationFlag("--retention", "30s", &ns, &error));
  EXPECT_EQ(ns, 30'000'000'000);
  EXPECT_FALSE(ParseDurationFlag("--retention", "30", &ns, &error));
  EXPECT_EQ(error, "--retention: '30' needs a unit (ns, us, ms, s, m, h)");
  EXPECT_FALSE(ParseDurationFlag("--min-wait", "-1ms", &ns, &error));
  EXPECT_EQ(error, "--min-wait: '-1ms' is negative");
}

}  // namespace
}  // namespace waitpath
