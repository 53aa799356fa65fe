#include "tools/gen/scenario.h"

#include <gtest/gtest.h>

#include "tools/gen/script.h"

namespace waitpath::gen {
namespace {

TEST(Duration, ParsesUnitsAndRanges) {
  EXPECT_EQ(DurationOrThrow("250us"), 250000);
  EXPECT_EQ(DurationOrThrow("3ms"), 3000000);
  EXPECT_EQ(DurationOrThrow("1.5s"), 1500000000);
  EXPECT_EQ(DurationOrThrow("-1.75s", DurationSign::kSigned), -1750000000);
  DurationRange r = ParseDurationRange("1ms..2ms");
  EXPECT_EQ(r.lo, 1000000);
  EXPECT_EQ(r.hi, 2000000);
  r = ParseDurationRange("1ms .. 2ms");
  EXPECT_EQ(r.hi, 2000000);
  EXPECT_THROW(DurationOrThrow("3 parsecs"), std::invalid_argument);
  EXPECT_THROW(DurationOrThrow("-1ms"), std::invalid_argument);
  EXPECT_THROW(ParseDurationRange("2ms..1ms"), std::invalid_argument);
}

// A string needs a unit; a TOML integer is nanoseconds.
TEST(Duration, StringsNeedAUnitIntegersAreNanoseconds) {
  EXPECT_THROW(DurationOrThrow("42"), std::invalid_argument);
  EXPECT_THROW(ParseDurationRange("1..2ms"), std::invalid_argument);
  const char* text = R"(
name = "x"
duration = 5000
[[hosts]]
name = "a"
clock_offset = "-2s"
  [[hosts.tasks]]
  name = "t"
  script = ["compute 1ms"]
)";
  Scenario s = ScenarioLoader::LoadFromString(text, {}, nullptr);
  EXPECT_EQ(s.duration, 5000);
  EXPECT_EQ(s.hosts[0].clock_offset, -2 * kSec);
  EXPECT_EQ(ScenarioLoader::LoadFromString(text, {"duration=7000"}, nullptr).duration, 7000);
  EXPECT_EQ(ScenarioLoader::LoadFromString(text, {"hosts.0.clock_offset=-5"}, nullptr)
                .hosts[0]
                .clock_offset,
            -5);
  EXPECT_THROW(ScenarioLoader::LoadFromString(text, {"duration=-5"}, nullptr), std::runtime_error);
  EXPECT_EQ(ScenarioLoader::LoadFromString(text, {"duration=7us"}, nullptr).duration, 7 * kUs);
  try {
    ScenarioLoader::LoadFromString(text, {"duration=\"7000\""}, nullptr);
    ADD_FAILURE() << "a bare number string was read as a duration";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "scenario: 'duration': '7000' needs a unit (ns, us, ms, s, m, h)");
  }
}

TEST(ScriptCompiler, MatchesRepeatAndEnd) {
  auto ops = ScriptCompiler::Compile({"repeat 3", "  compute 1ms", "end", "sleep 2ms"}, "t");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].match, 2);
  EXPECT_EQ(ops[2].match, 0);
  EXPECT_THROW(ScriptCompiler::Compile({"repeat 3"}, "t"), std::runtime_error);
  EXPECT_THROW(ScriptCompiler::Compile({"teleport"}, "t"), std::runtime_error);
  EXPECT_THROW(ScriptCompiler::Compile({"compute 5"}, "t"), std::runtime_error);  // no unit
}

TEST(ScenarioLoader, AppliesOverrides) {
  const char* text = R"(
name = "x"
[[hosts]]
name = "a"
cpus = 2
  [[hosts.tasks]]
  name = "t"
  script = ["compute 1ms"]
)";
  Scenario s = ScenarioLoader::LoadFromString(
      text, {"hosts.0.cpus=8", "duration=5ms", "loss.host=a", "loss.share=0.25"}, nullptr);
  EXPECT_EQ(s.hosts[0].cpus, 8);
  EXPECT_EQ(s.duration, 5 * kMs);
  EXPECT_EQ(s.loss.host, "a");
  EXPECT_DOUBLE_EQ(s.loss.share, 0.25);
  uint64_t seed = 99;
  EXPECT_EQ(ScenarioLoader::LoadFromString(text, {}, &seed).seed, 99u);
}

}  // namespace
}  // namespace waitpath::gen
