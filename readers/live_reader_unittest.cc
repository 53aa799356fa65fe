#include "readers/live_reader.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

TEST(LiveSessionUrlTest, NamesTheRelaydTheHostAndTheSession) {
  LiveSessionUrl u;
  ASSERT_TRUE(ParseLiveSessionUrl("net://127.0.0.1:16002/host/web-1/s-web", &u));
  EXPECT_EQ(u.relayd, "127.0.0.1");
  EXPECT_EQ(u.port, 16002);
  EXPECT_EQ(u.hostname, "web-1");
  EXPECT_EQ(u.session, "s-web");
  ASSERT_TRUE(ParseLiveSessionUrl("net://relay.example/host/db/s", &u));
  EXPECT_EQ(u.relayd, "relay.example");
  EXPECT_EQ(u.port, 5344);  // the live port
}

TEST(LiveSessionUrlTest, RefusesWhatIsNotASessionUrl) {
  LiveSessionUrl u;
  for (const char* bad :
       {"", "net://127.0.0.1", "net://127.0.0.1:5344", "tcp://h/host/a/b", "net://h/host/a",
        "net://h/host//b", "net://h/session/a/b", "net://h:0/host/a/b", "net://h:70000/host/a/b",
        "net://h:x/host/a/b", "net:///host/a/b"}) {
    EXPECT_FALSE(ParseLiveSessionUrl(bad, &u)) << bad;
  }
}

}  // namespace
}  // namespace waitpath
