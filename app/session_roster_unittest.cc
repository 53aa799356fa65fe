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

LiveSession WithId(LiveSession s, uint64_t id) {
  s.id = id;
  return s;
}

TEST(SessionRoster, ASessionThatEndedAsSessionsEndIsFollowedAgainWhenItIsNew) {
  SessionRoster roster(true, {});
  const LiveSession first = WithId(Session("h1", "waitpath"), 7);
  roster.Add(first, 0);
  EXPECT_FALSE(roster.Reopenable(0, first));  // still read
  roster.Ended(0, true);
  EXPECT_TRUE(roster.ended(0));
  // The same session, still listed under its id (a reader that could not read it): not again,
  // or it would reattach at every listing.
  EXPECT_FALSE(roster.Reopenable(0, first));
  // Created again: another id.
  const LiveSession second = WithId(Session("h1", "waitpath"), 8);
  EXPECT_TRUE(roster.Reopenable(0, second));
  roster.Reopened(0, second);
  EXPECT_FALSE(roster.ended(0));
  EXPECT_FALSE(roster.Reopenable(0, second));
  // Ended on an error (refused by the relayd, a protocol error): not followed again.
  roster.Ended(0, false);
  EXPECT_FALSE(roster.Reopenable(0, WithId(second, 9)));
}

// A restarted relayd numbers its sessions from 1 again: a session missing from a listing, or
// a listing that failed, in between makes the same id a new session.
TEST(SessionRoster, AfterAnAbsenceTheSameIdIsANewSession) {
  SessionRoster roster(true, {});
  const LiveSession s = WithId(Session("h1", "waitpath"), 1);
  roster.Add(s, 0);
  roster.Ended(0, true);
  EXPECT_FALSE(roster.Reopenable(0, s));
  roster.Gone({}, SessionRoster::Clock::now());
  EXPECT_TRUE(roster.Reopenable(0, s));
  roster.Reopened(0, s);
  roster.Ended(0, true);
  EXPECT_FALSE(roster.Reopenable(0, s));
  roster.Unreachable();
  EXPECT_TRUE(roster.Reopenable(0, s));
}

}  // namespace
}  // namespace waitpath
