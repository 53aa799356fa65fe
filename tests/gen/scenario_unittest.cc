#include "tools/gen/scenario.h"

#include <gtest/gtest.h>

#include "tools/gen/script.h"

namespace waitpath::gen {
namespace {

TEST(Duration, ParsesUnitsAndRanges) {
  EXPECT_EQ(ParseDuration("250us"), 250000);
  EXPECT_EQ(ParseDuration("3ms"), 3000000);
  EXPECT_EQ(ParseDuration("1.5s"), 1500000000);
  EXPECT_EQ(ParseDuration("42"), 42);
  DurationRange r = ParseDurationRange("1ms..2ms");
  EXPECT_EQ(r.lo, 1000000);
  EXPECT_EQ(r.hi, 2000000);
  EXPECT_THROW(ParseDuration("3 parsecs"), std::invalid_argument);
}

TEST(ScriptCompiler, MatchesRepeatAndEnd) {
  auto ops = ScriptCompiler::Compile({"repeat 3", "  compute 1ms", "end", "sleep 2ms"}, "t");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].match, 2);
  EXPECT_EQ(ops[2].match, 0);
  EXPECT_THROW(ScriptCompiler::Compile({"repeat 3"}, "t"), std::runtime_error);
  EXPECT_THROW(ScriptCompiler::Compile({"teleport"}, "t"), std::runtime_error);
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
