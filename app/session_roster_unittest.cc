#include "app/session_roster.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

using std::chrono::seconds;

LiveSession Session(const std::string& host, const std::string& name) {
  return LiveSession{"net://relayd/host/" + host + "/" + name, host, name, 4, 1};
}

TEST(SessionRoster, WantsTheSessionsNamedOrAllAndOnlyAShardsOwn) {
  const SessionRoster named(false, {"web"});
  EXPECT_TRUE(named.Wants(Session("h1", "web")));
  EXPECT_FALSE(named.Wants(Session("h1", "db")));
  const SessionRoster all(true, {});
  EXPECT_TRUE(all.Wants(Session("h1", "db")));
  const SessionRoster shard(true, {}, [](const std::string& host) { return host == "east-1"; });
  EXPECT_TRUE(shard.Wants(Session("east-1", "waitpath")));
  EXPECT_FALSE(shard.Wants(Session("west-1", "waitpath")));
}

TEST(SessionRoster, FindsASourceByItsSessionsUrl) {
  SessionRoster roster(true, {});
  const LiveSession web = Session("h1", "web"), db = Session("h2", "db");
  roster.Add(web, 0);
  roster.Add(db, 1);
  EXPECT_EQ(roster.size(), 2u);
  EXPECT_EQ(roster.Find(db.url), std::optional<uint16_t>(1));
  EXPECT_FALSE(roster.Find("net://relayd/host/h3/x"));
  EXPECT_EQ(roster.label(0), "h1 (session web)");
  EXPECT_FALSE(roster.ended(0));
}

TEST(SessionRoster, ASessionGoneFromTheRelaydIsLetGoAfterTheGracePeriod) {
  SessionRoster roster(true, {});
  const LiveSession web = Session("h1", "web"), db = Session("h2", "db");
  roster.Add(web, 0);
  roster.Add(db, 1);
  const auto t0 = SessionRoster::Clock::now();
  EXPECT_TRUE(roster.Gone({web, db}, t0).empty());
  // db no longer listed: counted from the first listing without it.
  EXPECT_TRUE(roster.Gone({web}, t0 + seconds(1)).empty());
  EXPECT_TRUE(roster.Gone({web}, t0 + seconds(6)).empty());
  EXPECT_EQ(roster.Gone({web}, t0 + seconds(7)), std::vector<uint16_t>{1});
  // Asked again at every listing until its reader ends.
  EXPECT_EQ(roster.Gone({web}, t0 + seconds(8)), std::vector<uint16_t>{1});
  roster.Ended(1, true);
  EXPECT_TRUE(roster.Gone({web}, t0 + seconds(9)).empty());
  // Listed again in between: the count starts over.
  EXPECT_TRUE(roster.Gone({db}, t0 + seconds(10)).empty());
  EXPECT_TRUE(roster.Gone({web, db}, t0 + seconds(11)).empty());
  EXPECT_TRUE(roster.Gone({db}, t0 + seconds(12)).empty());
  EXPECT_TRUE(roster.Gone({db}, t0 + seconds(17)).empty());
  EXPECT_EQ(roster.Gone({db}, t0 + seconds(18)), std::vector<uint16_t>{0});
}

TEST(SessionRoster, ASessionThatEndedAsSessionsEndIsFollowedAgainOnce) {
  SessionRoster roster(true, {});
  roster.Add(Session("h1", "waitpath"), 0);
  EXPECT_FALSE(roster.Reopenable(0));  // still read
  roster.Ended(0, true);
  EXPECT_TRUE(roster.ended(0));
  EXPECT_TRUE(roster.Reopenable(0));
  roster.Reopened(0);
  EXPECT_FALSE(roster.ended(0));
  EXPECT_FALSE(roster.Reopenable(0));
  // Ended on an error (refused by the relayd, a protocol error): not followed again.
  roster.Ended(0, false);
  EXPECT_FALSE(roster.Reopenable(0));
}

}  // namespace
}  // namespace waitpath
