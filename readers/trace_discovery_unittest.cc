#include "readers/trace_discovery.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "readers/bt_util.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;
const std::string kShared = WAITPATH_SHARED_TRACES;

TEST(TraceDiscoveryTest, ParsesLttngAndPerfEnvironments) {
  TraceEnv lttng = ParseTraceEnv(
      "trace {};\nenv {\n\thostname = \"wilbrod\";\n\tdomain = \"kernel\";\n\ttracer_name = "
      "\"lttng-modules\";\n"
      "\ttracer_major = 2;\n\ttracer_minor = 8;\n};\nclock { name = \"monotonic\"; };");
  EXPECT_EQ(lttng.hostname, "wilbrod");
  EXPECT_EQ(lttng.domain, "kernel");
  EXPECT_EQ(lttng.tracer_major, 2);
  EXPECT_EQ(lttng.tracer_minor, 8);
  TraceEnv perf = ParseTraceEnv(
      "env {\n\thost = \"vm\";\n\tsysname = \"Linux\";\n\ttracer_name = \"perf\";\n};\n");
  EXPECT_EQ(perf.hostname, "vm");
  EXPECT_EQ(perf.tracer_name, "perf");
  EXPECT_EQ(ParseTraceEnv("no env here").hostname, "");
}

// Hostile metadata (issue found by fuzzing): a 60,000-character host name overflowed the
// stack of the regex that read it; an out-of-range version threw out of std::stoi.
TEST(TraceDiscoveryTest, HostileEnvironmentsParseWithoutCrashing) {
  const std::string huge(60000, 'h');
  TraceEnv env = ParseTraceEnv("env {\n\thostname = \"" + huge +
                               "\";\n\ttracer_major = 99999999999;\n\ttracer_minor = -;\n};");
  EXPECT_EQ(env.hostname, std::string(kMaxEnvString, 'h'));
  EXPECT_EQ(env.tracer_major, -1);
  EXPECT_EQ(env.tracer_minor, -1);
  // Keys are whole words; an unterminated string is absent.
  env = ParseTraceEnv("env { myhostname = \"x\"; hostname= \"y\"; domain = \"open");
  EXPECT_EQ(env.hostname, "y");
  EXPECT_EQ(env.domain, "");
}

TEST(TraceDiscoveryTest, MissingPathIsOneClearLine) {
  std::vector<HostSpec> hosts;
  std::string error;
  EXPECT_FALSE(DiscoverHosts({"/nonexistent/trace"}, &hosts, &error));
  EXPECT_EQ(error, "/nonexistent/trace: no such file or directory");
}

TEST(TraceDiscoveryTest, DirectoryWithoutTraceIsReported) {
  const fs::path empty = fs::temp_directory_path() / "waitpath-empty-dir";
  fs::create_directories(empty / "sub");
  std::vector<HostSpec> hosts;
  std::string error;
  EXPECT_FALSE(DiscoverHosts({empty.string()}, &hosts, &error));
  EXPECT_NE(error.find("no CTF trace found"), std::string::npos);
  fs::remove_all(empty);
}

// A trace is looked for at most 6 levels down (a relayd's HOST/SESSION/ust/uid/UID/64-bit):
// `analyze /` must not walk the whole file system.
TEST(TraceDiscoveryTest, TracesAreLookedForAtMostSixLevelsDown) {
  const fs::path dir = fs::temp_directory_path() / "waitpath-discovery-depth";
  fs::remove_all(dir);
  const fs::path rpc = fs::path(WAITPATH_FIXTURES) / "perf" / "rpc";
  fs::create_directories(dir / "1/2/3/4/5");
  fs::copy(rpc, dir / "1/2/3/4/5/rpc");  // the trace 6 levels down: found
  std::vector<HostSpec> hosts;
  std::string error;
  EXPECT_TRUE(DiscoverHosts({dir.string()}, &hosts, &error)) << error;
  fs::create_directories(dir / "deeper/1/2/3/4/5/6");
  fs::rename(dir / "1/2/3/4/5/rpc", dir / "deeper/1/2/3/4/5/6/rpc");  // 8 levels down: not
  hosts.clear();
  EXPECT_FALSE(DiscoverHosts({dir.string()}, &hosts, &error));
  EXPECT_EQ(
      error,
      dir.string() + ": no CTF trace found (no 'metadata' file in it or up to 6 levels below it)");
  fs::remove_all(dir);
}

TEST(TraceDiscoveryTest, SessionOutputIsExpandedAndGroupedByHost) {
  if (!fs::exists(kShared + "/scp_src"))
    GTEST_SKIP() << "needs ../shared/traces/scp_src (the research traces; see docs/testing.md)";
  ConfigureBabeltraceLogging(false);
  // An LTTng-session-like folder: two traces of two hosts below one directory.
  const fs::path session = fs::temp_directory_path() / "waitpath-session";
  fs::remove_all(session);
  fs::create_directories(session / "kernel");
  fs::create_directory_symlink(kShared + "/scp_src", session / "kernel" / "a");
  fs::create_directory_symlink(kShared + "/scp_dest", session / "kernel" / "b");
  std::vector<HostSpec> hosts;
  std::string error;
  ASSERT_TRUE(DiscoverHosts({session.string()}, &hosts, &error)) << error;
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].hostname, "VM1");
  EXPECT_EQ(hosts[1].hostname, "VM3");
  EXPECT_EQ(hosts[0].envs[0].tracer_minor, 1);
  // The same trace given twice is one host with one trace.
  std::vector<HostSpec> again;
  ASSERT_TRUE(DiscoverHosts({kShared + "/scp_src", kShared + "/scp_src/"}, &again, &error));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].trace_dirs.size(), 1u);
  fs::remove_all(session);
}

}  // namespace
}  // namespace waitpath
