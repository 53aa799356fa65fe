#include "relayd/relayd_link.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

using Turn = RelaydLink::Turn;
using std::chrono::milliseconds;

TEST(RelaydLinkTest, ALongOutageIsOneLossAndFailedAttemptsThenOneReconnect) {
  RelaydLink link;
  EXPECT_EQ(link.OnRunning(), Turn::kNone) << "the first attach is no reconnect";
  EXPECT_EQ(link.OnFailure(), Turn::kLost);
  EXPECT_TRUE(link.lost());
  EXPECT_EQ(link.backoff(), milliseconds(250));
  // The relayd stays away for 13 attempts: nothing more to report, the waits grow to 5 s.
  const milliseconds want[] = {milliseconds(500),  milliseconds(1000), milliseconds(2000),
                               milliseconds(4000), milliseconds(5000), milliseconds(5000)};
  for (int i = 0; i < 13; ++i) {
    EXPECT_EQ(link.OnFailure(), Turn::kNone);
    if (i < 6) {
      EXPECT_EQ(link.backoff(), want[i]) << i;
    }
  }
  EXPECT_EQ(link.counts().losses, 1u);
  EXPECT_EQ(link.counts().failed, 13u);
  EXPECT_EQ(link.counts().reconnects, 0u) << "attempts are not reconnects";
  EXPECT_TRUE(link.counts().lost());
  EXPECT_EQ(link.OnRunning(), Turn::kReattached);
  EXPECT_EQ(link.OnRunning(), Turn::kNone);
  EXPECT_FALSE(link.lost());
  EXPECT_FALSE(link.counts().lost());
  EXPECT_EQ(link.counts().reconnects, 1u);
}

TEST(RelaydLinkTest, ANewLossStartsTheBackoffAgain) {
  RelaydLink link;
  link.OnFailure();
  link.OnFailure();
  link.OnFailure();
  EXPECT_EQ(link.backoff(), milliseconds(1000));
  link.OnRunning();
  EXPECT_EQ(link.OnFailure(), Turn::kLost);
  EXPECT_EQ(link.backoff(), milliseconds(250));
  EXPECT_EQ(link.counts().losses, 2u);
  EXPECT_EQ(link.counts().failed, 2u);
}

TEST(RelaydLinkTest, TurnsBetweenReadingsComeInOrder) {
  using Turns = std::vector<Turn>;
  RelaydLink::Counts before{};
  EXPECT_EQ(RelaydLink::TurnsBetween(before, {0, 0, 0}), Turns{});
  EXPECT_EQ(RelaydLink::TurnsBetween(before, {1, 0, 5}), Turns{Turn::kLost});
  EXPECT_EQ(RelaydLink::TurnsBetween({1, 0, 5}, {1, 1, 5}), Turns{Turn::kReattached});
  // Reattached and lost again between two readings: both, in order.
  EXPECT_EQ(RelaydLink::TurnsBetween({1, 0, 0}, {2, 1, 0}),
            (Turns{Turn::kReattached, Turn::kLost}));
  EXPECT_EQ(RelaydLink::TurnsBetween({1, 1, 0}, {2, 2, 0}),
            (Turns{Turn::kLost, Turn::kReattached}));
}

}  // namespace
}  // namespace waitpath
