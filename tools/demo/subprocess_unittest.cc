#include "tools/demo/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace waitpath::demo {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

class SubprocessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "waitpath-subprocess-test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Log(const std::string& name = "log") const { return (dir_ / name).string(); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Waits (up to 5 s) until `path` holds `text`.
  static bool WaitForText(const std::string& path, const std::string& text) {
    for (int i = 0; i < 250; ++i) {
      if (Read(path).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }

  // Waits (up to 5 s) until `pid` runs `comm`: until the child has exec'ed, it is a copy of
  // this test.
  static bool WaitForExec(pid_t pid, const std::string& comm) {
    for (int i = 0; i < 250; ++i) {
      if (ProcessAlive(pid, comm)) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }

  static std::vector<std::string> Shell(const std::string& script) {
    return {"/bin/sh", "-c", script};
  }

  fs::path dir_;
};

TEST_F(SubprocessTest, OutputGoesToTheLogAndTheStatusIsKept) {
  Subprocess p;
  EXPECT_TRUE(p.Exited()) << "not started yet: nothing to wait for";
  EXPECT_EQ(p.pid(), -1);
  ASSERT_TRUE(p.Start(Shell("echo out; echo err >&2; exit 3"), Log()));
  EXPECT_GT(p.pid(), 0);
  EXPECT_EQ(p.log(), Log());
  ASSERT_TRUE(p.Wait(seconds(5)));
  EXPECT_FALSE(p.Succeeded());
  EXPECT_EQ(p.Describe(), "exit status 3");
  EXPECT_EQ(Read(Log()), "out\nerr\n");
}

TEST_F(SubprocessTest, TheLogIsAppendedTo) {
  std::ofstream(Log()) << "before\n";
  ASSERT_TRUE(RunToEnd(Shell("echo after"), Log(), seconds(5)));
  EXPECT_EQ(Read(Log()), "before\nafter\n");
}

TEST_F(SubprocessTest, StdinIsEmpty) {
  ASSERT_TRUE(RunToEnd(Shell("cat; echo done"), Log(), seconds(5)));
  EXPECT_EQ(Read(Log()), "done\n");
}

TEST_F(SubprocessTest, OwnProcessGroup) {
  Subprocess p;
  ASSERT_TRUE(p.Start({"/bin/sleep", "10"}, Log()));
  ASSERT_TRUE(WaitForExec(p.pid(), "sleep"));
  EXPECT_EQ(getpgid(p.pid()), p.pid());
  EXPECT_NE(getpgid(p.pid()), getpgrp());
}

TEST_F(SubprocessTest, CannotStart) {
  Subprocess p;
  EXPECT_FALSE(p.Start({"/bin/true"}, (dir_ / "no/such/dir/log").string()));
  EXPECT_EQ(p.pid(), -1);
  // Fork succeeds; exec does not.
  ASSERT_TRUE(p.Start({(dir_ / "no-such-program").string()}, Log()));
  ASSERT_TRUE(p.Wait(seconds(5)));
  EXPECT_EQ(p.Describe(), "exit status 127");
}

TEST_F(SubprocessTest, WaitTimesOut) {
  Subprocess p;
  ASSERT_TRUE(p.Start({"/bin/sleep", "10"}, Log()));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(p.Wait(milliseconds(100)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
  EXPECT_FALSE(p.Exited());
  EXPECT_EQ(p.Describe(), "still running");
}

TEST_F(SubprocessTest, TerminateSendsSigterm) {
  Subprocess p;
  ASSERT_TRUE(p.Start({"/bin/sleep", "10"}, Log()));
  p.Terminate(seconds(5));
  EXPECT_TRUE(p.Exited());
  EXPECT_EQ(p.Describe(), "killed by signal 15");
}

TEST_F(SubprocessTest, TerminateKillsWhatIgnoresSigterm) {
  Subprocess p;
  ASSERT_TRUE(p.Start(Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"), Log()));
  ASSERT_TRUE(WaitForText(Log(), "ready"));
  const auto start = std::chrono::steady_clock::now();
  p.Terminate(milliseconds(200));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));
  EXPECT_EQ(p.Describe(), "killed by signal 9");
}

TEST_F(SubprocessTest, SignalReachesTheChild) {
  Subprocess p;
  ASSERT_TRUE(p.Start(Shell("trap 'echo got INT; exit 0' INT; echo ready; "
                            "while :; do sleep 0.05; done"),
                      Log()));
  ASSERT_TRUE(WaitForText(Log(), "ready"));
  p.Signal(SIGINT);
  ASSERT_TRUE(p.Wait(seconds(5)));
  EXPECT_TRUE(p.Succeeded());
  EXPECT_TRUE(WaitForText(Log(), "got INT"));
  p.Signal(SIGKILL);  // exited: nothing is sent to a pid that may be reused
}

TEST_F(SubprocessTest, DestroyingARunningChildEndsIt) {
  pid_t pid = -1;
  {
    Subprocess p;
    ASSERT_TRUE(p.Start({"/bin/sleep", "10"}, Log()));
    pid = p.pid();
    ASSERT_TRUE(WaitForExec(pid, "sleep"));
  }
  EXPECT_FALSE(ProcessAlive(pid, "sleep"));
  EXPECT_NE(kill(pid, 0), 0) << "reaped, not left a zombie";
}

TEST_F(SubprocessTest, MovingHandsTheChildOver) {
  Subprocess a;
  ASSERT_TRUE(a.Start({"/bin/sleep", "10"}, Log()));
  const pid_t pid = a.pid();
  ASSERT_TRUE(WaitForExec(pid, "sleep"));
  Subprocess b(std::move(a));
  EXPECT_EQ(a.pid(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(b.pid(), pid);
  std::vector<Subprocess> many;
  many.push_back(std::move(b));
  many.emplace_back();
  many.emplace_back();  // reallocates: the child must survive the moves
  EXPECT_TRUE(ProcessAlive(pid, "sleep"));
  many[0].Terminate(seconds(5));
  EXPECT_EQ(many[0].Describe(), "killed by signal 15");
}

TEST_F(SubprocessTest, RunToEnd) {
  EXPECT_TRUE(RunToEnd({"/bin/true"}, Log(), seconds(5)));
  EXPECT_FALSE(RunToEnd({"/bin/false"}, Log(), seconds(5)));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(RunToEnd({"/bin/sleep", "10"}, Log(), milliseconds(100)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
}

TEST_F(SubprocessTest, ProcessesByPid) {
  Subprocess p;
  ASSERT_TRUE(p.Start({"/bin/sleep", "10"}, Log()));
  ASSERT_TRUE(WaitForExec(p.pid(), "sleep"));
  EXPECT_FALSE(ProcessAlive(p.pid(), "lttng-sessiond")) << "the pid is someone else's";

  const std::vector<ProcessInfo> children = ChildProcesses(getpid());
  EXPECT_TRUE(std::any_of(children.begin(), children.end(), [&](const ProcessInfo& c) {
    return c.pid == p.pid() && c.comm == "sleep";
  }));

  const std::string identity = ProcessIdentity(p.pid());
  EXPECT_EQ(identity.rfind(std::to_string(p.pid()) + " ", 0), 0u) << identity;
  EXPECT_EQ(ProcessIdentity(p.pid()), identity);
  EXPECT_NE(ProcessIdentity(getpid()), identity);

  // A process this one did not fork is ended by pid; an exited one (a zombie until reaped)
  // counts as gone.
  EXPECT_TRUE(EndProcess(p.pid(), "sleep"));
  EXPECT_FALSE(ProcessAlive(p.pid(), "sleep"));
  EXPECT_TRUE(EndProcess(p.pid(), "sleep"));
  ASSERT_TRUE(p.Wait(seconds(5)));
  EXPECT_EQ(p.Describe(), "killed by signal 15");
  EXPECT_EQ(ProcessIdentity(p.pid()), "");
}

TEST_F(SubprocessTest, EndProcessKillsWhatIgnoresSigterm) {
  Subprocess p;
  ASSERT_TRUE(p.Start(Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"), Log()));
  ASSERT_TRUE(WaitForText(Log(), "ready"));
  EXPECT_TRUE(EndProcess(p.pid(), "sh", milliseconds(200)));
  ASSERT_TRUE(p.Wait(seconds(5)));
  EXPECT_EQ(p.Describe(), "killed by signal 9");
}

}  // namespace
}  // namespace waitpath::demo
