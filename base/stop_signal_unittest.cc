#include "base/stop_signal.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace waitpath {
namespace {

// Each signal only raises the flag: the test process goes on.
TEST(StopSignal, SignalsRaiseTheFlagInsteadOfEndingTheProcess) {
  InstallStopSignal({SIGHUP});
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    StopRequested() = false;
    ASSERT_EQ(raise(sig), 0);
    EXPECT_TRUE(StopRequested()) << "signal " << sig;
  }
  StopRequested() = false;
}

TEST(StopSignal, OtherSignalsAreLeftAlone) {
  InstallStopSignal();
  struct sigaction current {};
  ASSERT_EQ(sigaction(SIGUSR1, nullptr, &current), 0);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
  ASSERT_EQ(sigaction(SIGINT, nullptr, &current), 0);
  EXPECT_NE(current.sa_handler, SIG_DFL);
  EXPECT_TRUE(current.sa_flags & SA_RESTART);
}

}  // namespace
}  // namespace waitpath
