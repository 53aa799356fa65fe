// The native session listing against scripted relayds (relayd/fake_relayd.h) of protocols 2.4 and
// 2.15: what it lists and in which format, the URLs it gives (babeltrace2's), the sessions it
// refuses, and its bounds (sessions, time, a stop request).
#include "relayd/session_discovery.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/stop_signal.h"
#include "relayd/fake_relayd.h"

namespace waitpath {
namespace {

namespace w = viewer_wire;
using fake_relayd::Answer;
using fake_relayd::FakeRelayd;
using fake_relayd::FakeRelaydLog;
using fake_relayd::FakeSession;
using fake_relayd::Handshake;
using fake_relayd::RelaydOf;
using fake_relayd::SessionRecord215;
using fake_relayd::SessionsCount;
using fake_relayd::Silent;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

SessionQueryOptions Quick() {
  SessionQueryOptions o;
  o.timeout = milliseconds(500);
  return o;
}

TEST(SessionDiscoveryTest, ARelaydOfProtocol24ListsItsSessionsInTheOldLayout) {
  auto log = std::make_shared<FakeRelaydLog>();
  FakeRelayd f(RelaydOf(4,
                        {{.id = 3,
                          .hostname = "web-1",
                          .name = "s-web",

                          .streams = 8,
                          .clients = 1},
                         {.id = 5, .hostname = "db", .name = "s-db"}},
                        log));
  std::vector<LiveSession> sessions;
  std::string error;
  ASSERT_TRUE(QuerySessions(f.url(), &sessions, &error)) << error;
  EXPECT_EQ(log->asked_minor, 15u);
  EXPECT_EQ(log->spoken_minor, 4u);
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].url, f.url() + "/host/web-1/s-web");
  EXPECT_EQ(sessions[0].hostname, "web-1");
  EXPECT_EQ(sessions[0].name, "s-web");
  EXPECT_EQ(sessions[0].id, 3u);
  EXPECT_EQ(sessions[0].streams, 8u);
  EXPECT_EQ(sessions[0].clients, 1u);
  EXPECT_EQ(sessions[0].trace_format, RelaydTraceFormat::kCtf18);
  EXPECT_EQ(sessions[0].relayd_minor, 4u);
  EXPECT_EQ(sessions[1].url, f.url() + "/host/db/s-db");
  EXPECT_EQ(sessions[1].id, 5u);
  EXPECT_EQ(sessions[1].trace_format, RelaydTraceFormat::kCtf18);
}

TEST(SessionDiscoveryTest, ARelaydOfProtocol215ListsItsCtf2SessionsWithTheirFormat) {
  // LTTng 2.15 writes CTF 2 by default and shows such sessions only to viewers of 2.15.
  auto log = std::make_shared<FakeRelaydLog>();
  FakeRelayd f(RelaydOf(15,
                        {{.id = 3,
                          .hostname = "web-1",
                          .name = "s-ctf2",
                          .trace_format = w::kTraceFormatCtf2,
                          .streams = 6},
                         {.id = 4, .hostname = "db", .name = "s-ctf1"}},
                        log));
  std::vector<LiveSession> sessions;
  std::string error;
  ASSERT_TRUE(QuerySessions(f.url(), &sessions, &error)) << error;
  EXPECT_EQ(log->spoken_minor, 15u);
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].url, f.url() + "/host/web-1/s-ctf2");
  EXPECT_EQ(sessions[0].id, 3u);
  EXPECT_EQ(sessions[0].streams, 6u);
  EXPECT_EQ(sessions[0].trace_format, RelaydTraceFormat::kCtf2);
  EXPECT_EQ(sessions[0].relayd_minor, 15u);
  EXPECT_EQ(sessions[1].url, f.url() + "/host/db/s-ctf1");
  EXPECT_EQ(sessions[1].trace_format, RelaydTraceFormat::kCtf18);

  SessionListing listing;
  FakeRelayd again(RelaydOf(15, {{.id = 1, .hostname = "h", .name = "s", .trace_format = 9}}));
  ASSERT_TRUE(ListRelaydSessions(again.url(), Quick(), &listing, &error)) << error;
  EXPECT_EQ(listing.relayd_minor, 15u);
  EXPECT_EQ(listing.minor, 15u);
  ASSERT_EQ(listing.sessions.size(), 1u);
  EXPECT_EQ(listing.sessions[0].trace_format, RelaydTraceFormat::kUnknown);
}

TEST(SessionDiscoveryTest, TheUrlIsBabeltrace2sAndSessionsOfOneHostAndNameAreOne) {
  // babeltrace2 appends /host/HOSTNAME/SESSION to the URL as given (net4:// kept), and merges
  // the sessions of one host and name: streams summed, the most clients.
  FakeRelayd f(RelaydOf(15, {{.id = 3,
                              .hostname = "web-1",
                              .name = "s",

                              .streams = 4},
                             {.id = 8,
                              .hostname = "web-1",
                              .name = "s",

                              .streams = 2,
                              .clients = 1},
                             {.id = 9, .hostname = "web-2", .name = "s"}}));
  const std::string relayd = "net4://127.0.0.1:" + std::to_string(f.port());
  SessionListing listing;
  std::string error;
  ASSERT_TRUE(ListRelaydSessions(relayd, Quick(), &listing, &error)) << error;
  ASSERT_EQ(listing.sessions.size(), 2u);
  EXPECT_EQ(listing.sessions[0].url, relayd + "/host/web-1/s");
  EXPECT_EQ(listing.sessions[0].id, 3u);
  EXPECT_EQ(listing.sessions[0].streams, 6u);
  EXPECT_EQ(listing.sessions[0].clients, 1u);
  EXPECT_EQ(listing.sessions[1].url, relayd + "/host/web-2/s");
  EXPECT_TRUE(listing.refused.empty());
}

TEST(SessionDiscoveryTest, SessionsWhoseNamesCannotBeAUrlAreRefusedWithTheReason) {
  FakeRelayd f(RelaydOf(15, {{.id = 1, .hostname = "web-1", .name = "ok"},
                             {.id = 2, .hostname = "web-1", .name = "a/b"},
                             {.id = 3, .hostname = "h/1", .name = "s"},
                             {.id = 4, .hostname = "web-1", .name = ".."},
                             {.id = 5, .hostname = ".", .name = "s"},
                             {.id = 6, .hostname = "web-1", .name = ""},
                             {.id = 7, .hostname = "", .name = "s"},
                             {.id = 8, .hostname = "web-1", .name = std::string("x\0y", 3)},
                             {.id = 9, .hostname = "h\\", .name = "s"},
                             {.id = 10, .hostname = "web-1", .name = "a/b"},
                             // Not UTF-8, a terminal escape: bytes, a URL as any other.
                             {.id = 11, .hostname = "h\xff", .name = "s\x1b[2J"}}));
  SessionListing listing;
  std::string error;
  ASSERT_TRUE(ListRelaydSessions(f.url(), Quick(), &listing, &error)) << error;
  ASSERT_EQ(listing.sessions.size(), 2u);
  EXPECT_EQ(listing.sessions[0].url, f.url() + "/host/web-1/ok");
  EXPECT_EQ(listing.sessions[1].url, f.url() + "/host/h\xff/s\x1b[2J");
  std::vector<std::string> reasons;
  for (const RefusedSession& r : listing.refused) {
    reasons.push_back(std::to_string(r.id) + ": " + r.reason);
  }
  const std::vector<std::string> want = {
      "2: its session name contains '/'",
      "3: its hostname contains '/'",
      "4: its session name is '..'",
      "5: its hostname is '.'",
      "6: its session name is empty",
      "7: its hostname is empty",
      "8: its session name contains a NUL byte",
      "9: its hostname ends with '\\' (babeltrace2 would read the '/' after it as part of it)",
  };
  EXPECT_EQ(reasons, want) << "session 10 is session 2 again: refused once";
  EXPECT_EQ(DescribeRefusal(f.url(), listing.refused[0]),
            "relayd " + f.url() +
                " lists session 'a/b' of host 'web-1': refused, because its session name "
                "contains '/'");
}

TEST(SessionDiscoveryTest, QuerySessionsLeavesRefusedSessionsOut) {
  FakeRelayd f(RelaydOf(15, {{.id = 1, .hostname = "web-1", .name = "../x"},
                             {.id = 2, .hostname = "web-1", .name = "ok"}}));
  std::vector<LiveSession> sessions;
  std::string error;
  ASSERT_TRUE(QuerySessions(f.url(), &sessions, &error)) << error;
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].name, "ok");
}

TEST(SessionDiscoveryTest, MoreThan10000SessionsIsAnErrorNamingTheCount) {
  std::vector<FakeSession> many;
  for (uint64_t i = 0; i < 10001; ++i) {
    many.push_back({.id = i, .hostname = "h", .name = "s" + std::to_string(i)});
  }
  std::vector<LiveSession> sessions;
  std::string error;
  {
    FakeRelayd f(RelaydOf(15, many));
    EXPECT_FALSE(QuerySessions(f.url(), &sessions, &error));
    EXPECT_NE(error.find("it announced 10001 sessions, more than the limit of 10000"),
              std::string::npos)
        << error;
  }
  many.pop_back();
  FakeRelayd f(RelaydOf(15, many));
  ASSERT_TRUE(QuerySessions(f.url(), &sessions, &error)) << error;
  EXPECT_EQ(sessions.size(), 10000u);
}

TEST(SessionDiscoveryTest, ARelaydAnnouncing2To32SessionsThenStallingIsAnErrorAtOnce) {
  FakeRelayd f(Handshake(
      [](uint32_t, const std::string&) -> Answer {
        return {SessionsCount(0xffffffffu) + SessionRecord215({.id = 1, .hostname = "h"}), false,
                true};
      },
      15));
  std::vector<LiveSession> sessions;
  std::string error;
  const auto start = Clock::now();
  EXPECT_FALSE(QuerySessions(f.url(), &sessions, &error));
  EXPECT_LT(Clock::now() - start, milliseconds(3500));
  EXPECT_NE(error.find("4294967295 sessions"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(SessionDiscoveryTest, ARelaydSendingFewerSessionsThanAnnouncedIsAnErrorWithinTheBound) {
  FakeRelayd f(Handshake(
      [](uint32_t, const std::string&) -> Answer {
        return {SessionsCount(3) + SessionRecord215({.id = 1, .hostname = "h", .name = "s"}), false,
                true};
      },
      15));
  std::vector<LiveSession> sessions;
  std::string error;
  const auto start = Clock::now();
  EXPECT_FALSE(QuerySessions(f.url(), &sessions, &error));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, milliseconds(2900));
  EXPECT_LT(took, milliseconds(3500)) << "the whole query within its 3 s";
  EXPECT_EQ(error, "cannot list the sessions of relayd " + f.url() +
                       ": relayd 127.0.0.1:" + std::to_string(f.port()) +
                       " did not finish within the 3000 ms it was given (LIST_SESSIONS)");
}

TEST(SessionDiscoveryTest, ATricklingRelaydIsBoundedByTheWholeQuery) {
  // Every answer a byte every 30 ms: each within the timeout, all of them not.
  const auto trickled = [](Answer a) {
    a.trickle = milliseconds(30);
    return a;
  };
  const fake_relayd::Script inner = RelaydOf(15, {{.id = 1, .hostname = "h", .name = "s"}});
  FakeRelayd slow(
      [&](uint32_t cmd, const std::string& payload) { return trickled(inner(cmd, payload)); });
  SessionListing listing;
  std::string error;
  SessionQueryOptions options;
  options.timeout = milliseconds(1000);
  const auto start = Clock::now();
  EXPECT_FALSE(ListRelaydSessions(slow.url(), options, &listing, &error));
  EXPECT_LT(Clock::now() - start, milliseconds(1300));
  EXPECT_NE(error.find("did not finish within the 1000 ms it was given"), std::string::npos)
      << error;
}

TEST(SessionDiscoveryTest, AStopRequestEndsTheQueryWithinASecond) {
  FakeRelayd f(Handshake([](uint32_t, const std::string&) { return Silent(); }, 15));
  std::thread stopper([] {
    std::this_thread::sleep_for(milliseconds(300));
    StopRequested() = true;
  });
  std::vector<LiveSession> sessions;
  std::string error;
  const auto start = Clock::now();
  EXPECT_FALSE(QuerySessions(f.url(), &sessions, &error));
  const auto took = Clock::now() - start;
  stopper.join();
  StopRequested() = false;
  EXPECT_LT(took, milliseconds(300) + milliseconds(1000));
  EXPECT_NE(error.find("stopped while waiting for it (LIST_SESSIONS)"), std::string::npos) << error;
}

TEST(SessionDiscoveryTest, ABadRelaydUrlOrNoRelaydIsOneLine) {
  SessionListing listing;
  std::string error;
  for (const char* url : {"", "127.0.0.1", "tcp://h", "net://", "net://h:0", "net://h:65536",
                          "net://h:x", "net://h/host/a/b", "net://h:5344/"}) {
    EXPECT_FALSE(ListRelaydSessions(url, Quick(), &listing, &error)) << url;
    EXPECT_EQ(error, "bad relayd URL '" + std::string(url) + "' (expected net://HOST[:PORT])");
  }
  uint16_t port;
  {
    FakeRelayd f([](uint32_t, const std::string&) { return fake_relayd::Close(); });
    port = f.port();
  }
  EXPECT_FALSE(
      ListRelaydSessions("net://127.0.0.1:" + std::to_string(port), Quick(), &listing, &error));
  EXPECT_NE(error.find("cannot connect to the relayd's live port 127.0.0.1:"), std::string::npos)
      << error;
}

// Opt-in, against a real relayd: WAITPATH_TEST_RELAYD_URL=net://HOST:PORT prints its listing.
TEST(SessionDiscoveryTest, ARealRelaydWhenOneIsGiven) {
  const char* url = std::getenv("WAITPATH_TEST_RELAYD_URL");
  if (url == nullptr) GTEST_SKIP() << "WAITPATH_TEST_RELAYD_URL not set";
  SessionListing listing;
  std::string error;
  ASSERT_TRUE(ListRelaydSessions(url, SessionQueryOptions(), &listing, &error)) << error;
  std::printf("relayd protocol 2.%u, spoken 2.%u\n", listing.relayd_minor, listing.minor);
  for (const LiveSession& s : listing.sessions) {
    std::printf("%s id %llu %s, %llu streams, %llu clients\n", s.url.c_str(),
                static_cast<unsigned long long>(s.id), TraceFormatName(s.trace_format),
                static_cast<unsigned long long>(s.streams),
                static_cast<unsigned long long>(s.clients));
  }
  for (const RefusedSession& r : listing.refused) {
    std::printf("%s\n", DescribeRefusal(url, r).c_str());
  }
}

}  // namespace
}  // namespace waitpath
