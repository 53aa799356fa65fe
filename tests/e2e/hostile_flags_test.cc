// Hostile values in flags, --config files and trace metadata (issue "Hostile and broken
// input"): each is a one-line usage error (exit 2) or is read safely; none crashes or hangs
// (ctest's timeout bounds the slow cases; no timing is asserted).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/e2e/cli_test_util.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void ExpectUsageError(const std::string& args, const std::string& names) {
  const CommandResult r = RunWaitpath(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(Lines(r.err), 1) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(names), std::string::npos) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << args;
}

class HostileFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("waitpath-hostile-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  const std::string trace_ = kFixtures + "/perf/rpc";
};

TEST_F(HostileFlagsTest, BadValuesAreUsageErrors) {
  const std::string t = " " + trace_;
  ExpectUsageError("analyze --top -1" + t, "--top");
  ExpectUsageError("analyze --top 0" + t, "--top");
  ExpectUsageError("analyze --max-history-mb -1" + t, "--max-history-mb");
  ExpectUsageError("analyze --max-history-mb 0" + t, "--max-history-mb");
  ExpectUsageError("analyze --keep-decoded-mb -5" + t, "--keep-decoded-mb");
  ExpectUsageError("analyze --max-processes 0" + t, "--max-processes");
  ExpectUsageError("analyze --retention 0s" + t, "--retention");
  ExpectUsageError("analyze --retention 9999999999999999999s" + t, "--retention");
  ExpectUsageError("analyze --min-wait 5" + t, "--min-wait");
  ExpectUsageError("analyze --min-wait -5ms" + t, "--min-wait");
  ExpectUsageError("analyze --metrics 25466,127.0.0.1:25467" + t, "--metrics");
  ExpectUsageError("analyze --metrics 9464x" + t, "--metrics");
  ExpectUsageError("analyze --metrics 127.0.0.1:99999" + t, "--metrics");
  for (const std::string relayd : {"garbage", "file:///etc/passwd", "net://h:99999",
                                   "127.0.0.1:5344", "net://", "net://[::1]:5344"}) {
    ExpectUsageError("live --all --relayd '" + relayd + "'", "--relayd");
  }
  ExpectUsageError("tail --max-lag soon" + t, "--max-lag");
  ExpectUsageError("tail --state dsk" + t, "--state");
  ExpectUsageError("tail --state disk,,network" + t, "--state");
  ExpectUsageError("demo --state " + t, "--state");
}

TEST_F(HostileFlagsTest, WatchPatternsAreLinearTimeAndBounded) {
  // Catastrophic backtracking for a backtracking engine; linear with RE2.
  CommandResult r = RunWaitpath("analyze --watch 'comm=(.*)*x' " + trace_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectUsageError("analyze --watch comm=" + std::string(100000, 'a') + " " + trace_,
                   "at most 1024");
  ExpectUsageError("analyze --watch 'comm=wl-(?!idle).*' " + trace_, "comm!=");
  // Commas inside a pattern; an item starts only at ",key=".
  r = RunWaitpath("analyze --json --watch 'comm=wl-(rpc){1,2}.*,comm!=wl-idle.*' " + trace_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int tasks = 0;
  for (const auto& j : JsonLines(r.out)) {
    if (j["type"] != "task") continue;
    ++tasks;
    const std::string comm = j["comm"];
    EXPECT_EQ(comm.rfind("wl-rpc", 0), 0u) << comm;
  }
  EXPECT_GT(tasks, 0);
}

TEST_F(HostileFlagsTest, WatchTakesOneValuePerFlag) {
  // The argument after --watch's value is a trace, not a second selector.
  const CommandResult r = RunWaitpath("analyze --watch comm=wl-rpc.* " + trace_ + " " + trace_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(HostileFlagsTest, ConfigErrorsNameTheFileAndLine) {
  struct Case {
    std::string text, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"[analyze]\nwatch = \"comm=x\n", ":2:"},  // unterminated string
           {"[analyze]\njson = \"yes\"\n", ":2: [analyze] json takes true or false"},
           {"[analyze]\ntopp = 3\n", "(did you mean 'top'?)"},
           {"[analyse]\ntop = 3\n", ":1: [analyse] is not a command's table"},
           {"[analyze]\ntop = -1\n", "--top"},
       }) {
    const fs::path config = dir_ / "bad.toml";
    std::ofstream(config) << c.text;
    const CommandResult r = RunWaitpath("--config " + config.string() + " analyze " + trace_);
    EXPECT_EQ(r.exit_code, 2) << c.text << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.text << r.err;
  }
  // A file that cannot be read has no line; a bad value is named once.
  const CommandResult missing =
      RunWaitpath("--config " + (dir_ / "none.toml").string() + " analyze " + trace_);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "waitpath: --config " + (dir_ / "none.toml").string() +
                             ": File could not be opened for reading\n");
  const fs::path negative = dir_ / "negative.toml";
  std::ofstream(negative) << "[analyze]\nmin-wait = \"-5ms\"\n";
  EXPECT_EQ(RunWaitpath("--config " + negative.string() + " analyze " + trace_).err,
            "waitpath: --min-wait: '-5ms' is negative (see waitpath --help)\n");
  EXPECT_EQ(RunWaitpath("analyze --min-wait 5 " + trace_).err,
            "waitpath: --min-wait: '5' needs a unit (ns, us, ms, s, m, h) (see waitpath --help)\n");
  const fs::path good = dir_ / "good.toml";
  std::ofstream(good) << "[analyze]\njson = true\ntop = 2\nwatch = [\"comm=wl-rpc.*\"]\n";
  EXPECT_EQ(RunWaitpath("--config " + good.string() + " analyze " + trace_).exit_code, 0);
}

// Metadata made to break the reader of its environment: a 60,000-character host name (a
// regex once overflowed the stack on it) and a version number past int.
TEST_F(HostileFlagsTest, HostileMetadataEnvironmentIsReadSafely) {
  const fs::path copy = dir_ / "trace";
  fs::copy(trace_, copy, fs::copy_options::recursive);
  std::ifstream in(copy / "metadata");
  std::stringstream text;
  text << in.rdbuf();
  std::string metadata = text.str();
  const size_t env = metadata.find("env {");
  ASSERT_NE(env, std::string::npos);
  metadata.insert(env + 5, "\n\thostname = \"" + std::string(60000, 'h') +
                               "\";\n\ttracer_major = 99999999999;\n");
  std::ofstream(copy / "metadata", std::ios::trunc) << metadata;
  const CommandResult r = RunWaitpath("stats --json " + copy.string());
  ASSERT_NE(r.exit_code, -1) << "killed by a signal";
  EXPECT_LE(r.exit_code, 1) << r.err;
  EXPECT_LE(Lines(r.err), 1) << r.err;
}

TEST_F(HostileFlagsTest, CommandsAndInputsNameWhatWasMeant) {
  ExpectUsageError("analyse " + trace_, "did you mean 'analyze'?");
  const CommandResult v = RunWaitpath("-V");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out.rfind("waitpath ", 0), 0u) << v.out;
  // A perf.data file is not a trace yet: say how to convert it.
  const fs::path perf = dir_ / "perf.data";
  std::ofstream(perf) << "PERFILE2 and the rest";
  CommandResult r = RunWaitpath("analyze " + perf.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("perf data convert --to-ctf"), std::string::npos) << r.err;
  r = RunWaitpath("analyze " + dir_.string());
  EXPECT_NE(r.err.find("perf data convert --to-ctf"), std::string::npos) << r.err;
}

// A mistyped option is named with the closest one, as a mistyped command is (it read "The
// following argument was not expected: --jsn").
TEST_F(HostileFlagsTest, MistypedOptionsNameTheClosestOne) {
  ExpectUsageError("analyze --jsn " + trace_,
                   "waitpath: analyze: no option --jsn (did you mean --json?)");
  ExpectUsageError("analyze --min-wiat=5ms " + trace_,
                   "waitpath: analyze: no option --min-wiat (did you mean --min-wait?)");
  ExpectUsageError("tail --retension 3s " + trace_,
                   "waitpath: tail: no option --retension (did you mean --retention?)");
  // A value is not taken for an option; nothing near: no guess.
  ExpectUsageError("analyze --watch -comm --zzzzzz " + trace_,
                   "waitpath: analyze: no option --zzzzzz (see");
}

// Every option of every --help has its description after two spaces at least, or on the next
// line: help2man (the man pages) reads one space as part of the name, and `tail`'s --max-lag
// was left undescribed in waitpath-tail(1).
TEST_F(HostileFlagsTest, HelpKeepsEachOptionsDescriptionApart) {
  for (const std::string command : {"", "stats", "analyze", "sync", "live", "tail", "demo"}) {
    const CommandResult r = RunWaitpath(command + " --help");
    ASSERT_EQ(r.exit_code, 0) << command;
    std::istringstream in(r.out);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& line = lines[i];
      if (line.rfind("  -", 0) != 0) continue;
      const bool own_line =
          i + 1 < lines.size() && lines[i + 1].rfind(std::string(30, ' '), 0) == 0;
      if (own_line || line.size() <= 30) continue;  // the description follows, or there is none
      EXPECT_EQ(line.substr(28, 2), "  ") << command << ": " << line;
    }
  }
  // tail says what it shows where (it said it printed each wait, and opens a full-screen view
  // in a terminal), and which states --state takes.
  const CommandResult tail = RunWaitpath("tail --help");
  EXPECT_EQ(tail.out.rfind("Follow the waits of watched tasks as they resolve, live or over "
                           "recorded traces: in a terminal a full-screen view",
                           0),
            0u)
      << tail.out;
  EXPECT_NE(tail.out.find("(e.g. disk,network): running, interrupted, preempted, timer, disk, "
                          "network, irq, ipi, user_input, blocked, unknown"),
            std::string::npos)
      << tail.out;
}

// Several hosts in text: the report says which clock its times are in, and how well each
// host maps to it.
TEST_F(HostileFlagsTest, MultiHostTextNamesTheReferenceAndAccuracy) {
  if (!HaveShared("scp_src"))
    GTEST_SKIP()
        << "needs ../shared/traces/scp_src and scp_dest (the research traces; see docs/testing.md)";
  const CommandResult r =
      RunWaitpath("analyze " + kShared + "/scp_dest " + kShared + "/scp_src --reference VM1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("times are in the clock of host VM1", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("VM3: clock accurate +/-"), std::string::npos) << r.out.substr(0, 300);
}

// Output closed early (`| head -1`): the command stops, exit 141 (as a SIGPIPE would), without
// an abort or an error message; stderr closed too changes nothing.
TEST_F(HostileFlagsTest, ClosedOutputEndsWith141) {
  if (!HaveShared("many-threads") || !HaveShared("scp_src"))
    GTEST_SKIP() << "needs ../shared/traces/many-threads and scp_src (the research traces; see "
                    "docs/testing.md)";
  // Each output is larger than the room waitpath gives a pipe (1 MiB, below): a smaller one
  // may be written whole before `head` gets to close its end (a loaded machine), and exit 0.
  // `tail` of the two scp hosts (406 KB) did, now and then.
  for (const std::string& args :
       {"analyze --json --min-wait 0ns " + kShared + "/many-threads",                      // 48 MB
        "tail " + kShared + "/many-threads",                                               // 13 MB
        "analyze --json --min-wait 0ns " + kShared + "/scp_src " + kShared + "/scp_dest",  // 1.9 MB
        "analyze --json --min-wait 0ns " + kShared + "/many-threads 2>/dev/full"}) {
    const fs::path err = dir_ / "err";
    const std::string cmd = "bash -c '" + kWaitpath + " " + args + " 2>" + err.string() +
                            " | head -1 >/dev/null; exit ${PIPESTATUS[0]}'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << cmd;
    EXPECT_EQ(WEXITSTATUS(status), 141) << cmd;
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "") << cmd;
  }
}

// Output into a pipe: the pipe gets a megabyte of room (a reader a little behind then does not
// block every write), and a pipe already larger is left as it is.
TEST_F(HostileFlagsTest, PipedOutputGetsAMegabyteOfRoomNeverLess) {
  for (const int before : {64 << 10, 2 << 20}) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    if (fcntl(fds[1], F_SETPIPE_SZ, before) < before) {  // 2 MiB: over fs.pipe-max-size, not root
      close(fds[0]);
      close(fds[1]);
      continue;
    }
    const std::string cmd =
        "bash -c '" + kWaitpath + " --version >&" + std::to_string(fds[1]) + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(fcntl(fds[0], F_GETPIPE_SZ), std::max(before, 1 << 20)) << before;
    close(fds[0]);
    close(fds[1]);
  }
}

}  // namespace
}  // namespace waitpath::testing
