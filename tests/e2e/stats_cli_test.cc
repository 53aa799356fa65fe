// `waitpath stats` end to end: the real binary on real traces.
#include <gtest/gtest.h>

#include "tests/e2e/cli_test_util.h"

namespace waitpath::testing {
namespace {

TEST(StatsCliTest, TwoHostsGiveTwoJsonRecordsWithExactCounts) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest")) GTEST_SKIP() << "../shared/traces not present";
  CommandResult r = RunWaitpath("stats --json " + kShared + "/scp_src " + kShared + "/scp_dest");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto records = JsonLines(r.out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["host"], "VM1");
  EXPECT_EQ(records[0]["events"], 110771);
  EXPECT_EQ(records[1]["events"], 85729);
  for (const auto& j : records) {
    for (const char* key : {"host", "events", "first_ns", "last_ns", "discarded", "regressions", "dialect", "cpus"}) {
      EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_LT(j["first_ns"].get<int64_t>(), j["last_ns"].get<int64_t>());
    EXPECT_TRUE(j["analysable"].get<bool>());
  }
}

TEST(StatsCliTest, LossIsReportedPerCpu) {
  if (!HaveShared("hello-lost")) GTEST_SKIP() << "../shared/traces not present";
  CommandResult r = RunWaitpath("stats --json " + kShared + "/hello-lost");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = JsonLines(r.out).at(0);
  EXPECT_EQ(j["events"], 32300);
  EXPECT_GT(j["discarded"].get<uint64_t>(), 0u);
  uint64_t per_cpu = 0;
  for (const auto& [cpu, n] : j["discarded_by_cpu"].items()) per_cpu += n.get<uint64_t>();
  EXPECT_EQ(per_cpu, j["discarded"].get<uint64_t>());
  EXPECT_FALSE(j["analysable"].get<bool>());
}

TEST(StatsCliTest, TextOutputWarnsAboutUnanalysableTraces) {
  if (!HaveShared("hello-lost")) GTEST_SKIP() << "../shared/traces not present";
  CommandResult r = RunWaitpath("stats " + kShared + "/hello-lost");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("host loki"), std::string::npos);
  EXPECT_NE(r.out.find("warning: no scheduler switch events"), std::string::npos);
}

TEST(StatsCliTest, BadInputIsOneLineAndNonZero) {
  CommandResult missing = RunWaitpath("stats /nonexistent/trace");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "waitpath: /nonexistent/trace: no such file or directory\n");
  CommandResult usage = RunWaitpath("stats");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(std::count(usage.err.begin(), usage.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace waitpath::testing
