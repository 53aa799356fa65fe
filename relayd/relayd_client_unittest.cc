// RelaydClient and RelaydViewer against a scripted fake relayd (relayd/fake_relayd.h): the cases
// a real lttng-relayd will not produce on demand — garbage, giant lengths, silence, a refused
// attach, each protocol version's layouts — and the viewer's event order on a scripted session.
// The real daemons are exercised by tools/relayd_dump/test_relayd_dump.sh.
#include "relayd/relayd_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "relayd/fake_relayd.h"
#include "relayd/relayd_viewer.h"
#include "relayd/viewer_wire.h"

namespace waitpath {
namespace {

namespace w = viewer_wire;
using std::chrono::milliseconds;
using Kind = RelaydError::Kind;

using fake_relayd::Answer;
using fake_relayd::Bytes;
using fake_relayd::Close;
using fake_relayd::FakeRelayd;
using fake_relayd::FakeRelaydLog;
using fake_relayd::FakeSession;
using fake_relayd::Handshake;
using fake_relayd::Hello;
using fake_relayd::RelaydOf;
using fake_relayd::Silent;
using fake_relayd::Status32;

RelaydLimits Quick() {
  RelaydLimits l;
  l.io_timeout = milliseconds(300);
  return l;
}

template <typename F>
RelaydError Catch(F f) {
  try {
    f();
  } catch (const RelaydError& e) {
    return e;
  }
  ADD_FAILURE() << "no RelaydError";
  return RelaydError(Kind::kProtocol, "");
}

TEST(RelaydClientTest, NothingListeningIsOneClearErrorAtOnce) {
  // A port just bound then closed: nothing listens there.
  uint16_t port;
  {
    FakeRelayd f([](uint32_t, const std::string&) { return Close(); });
    port = f.port();
    // Let the fake accept and go, so the port is free again.
    try {
      RelaydClient c("127.0.0.1", port, Quick());
    } catch (const RelaydError&) {
    }
  }
  const auto start = std::chrono::steady_clock::now();
  RelaydError e = Catch([&] { RelaydClient c("127.0.0.1", port, Quick()); });
  EXPECT_EQ(e.kind(), Kind::kUnreachable);
  EXPECT_NE(std::string(e.what()).find("cannot connect to the relayd's live port 127.0.0.1:"),
            std::string::npos)
      << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(300));
}

TEST(RelaydClientTest, ASilentPeerTimesOutInsteadOfHanging) {
  FakeRelayd f([](uint32_t, const std::string&) { return Silent(); });
  const auto start = std::chrono::steady_clock::now();
  RelaydError e = Catch([&] { RelaydClient c("127.0.0.1", f.port(), Quick()); });
  EXPECT_EQ(e.kind(), Kind::kTimeout) << e.what();
  EXPECT_NE(std::string(e.what()).find("did not answer within 300 ms (CONNECT"), std::string::npos)
      << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
}

TEST(RelaydClientTest, APeerThatHangsUpIsAClosedConnection) {
  FakeRelayd f([](uint32_t, const std::string&) { return Close(); });
  RelaydError e = Catch([&] { RelaydClient c("127.0.0.1", f.port(), Quick()); });
  EXPECT_EQ(e.kind(), Kind::kClosed) << e.what();
}

TEST(RelaydClientTest, GarbageForAHandshakeIsAProtocolError) {
  FakeRelayd f([](uint32_t, const std::string&) { return Answer{std::string(20, '\x7f')}; });
  RelaydError e = Catch([&] { RelaydClient c("127.0.0.1", f.port(), Quick()); });
  EXPECT_EQ(e.kind(), Kind::kProtocol) << e.what();
  EXPECT_NE(std::string(e.what()).find("speaks viewer protocol"), std::string::npos) << e.what();
}

TEST(RelaydClientTest, TheHandshakeAsksForProtocol215AndCreatesAViewerSession) {
  std::string hello;
  bool created = false;
  FakeRelayd f([&](uint32_t cmd, const std::string& payload) -> Answer {
    if (cmd == w::kConnect) {
      hello = payload;
      return Hello();  // LTTng 2.13: its own version, 2.13
    }
    if (cmd == w::kCreateSession) created = true;
    return Status32(w::kCreateSessionOk);
  });
  RelaydClient c("127.0.0.1", f.port(), Quick());
  ASSERT_EQ(hello.size(), sizeof(w::ConnectMsg));
  w::ConnectMsg m;
  std::memcpy(&m, hello.data(), sizeof(m));
  EXPECT_EQ(m.major.get(), 2u);
  EXPECT_EQ(m.minor.get(), 15u);
  EXPECT_EQ(m.type.get(), w::kClientCommand);
  EXPECT_TRUE(created);
  EXPECT_EQ(c.minor_version(), 13u) << "the lower of the two versions";
  EXPECT_EQ(c.relayd_minor(), 13u);
}

TEST(RelaydClientTest, ANewerRelaydIsSpokenToIn215AndAnOlderThan24IsRefused) {
  {
    FakeRelayd f(Handshake([](uint32_t, const std::string&) { return Close(); }, 16));
    RelaydClient c("127.0.0.1", f.port(), Quick());
    EXPECT_EQ(c.minor_version(), 15u);
    EXPECT_EQ(c.relayd_minor(), 16u);
  }
  FakeRelayd f(Handshake([](uint32_t, const std::string&) { return Close(); }, 3));
  RelaydError e = Catch([&] { RelaydClient c("127.0.0.1", f.port(), Quick()); });
  EXPECT_EQ(e.kind(), Kind::kProtocol);
  EXPECT_NE(std::string(e.what()).find("older than 2.4"), std::string::npos) << e.what();
}

// The sessions of the fake relayds below: one CTF 1.8 and one CTF 2 session, with names longer
// than the 2.4 layout's fields.
std::vector<FakeSession> TwoFormats() {
  return {{.id = 7,
           .hostname = "db-1",
           .name = "kernel",

           .streams = 4,
           .clients = 1},
          {.id = 9,
           .hostname = std::string(70, 'h'),
           .name = "ust-" + std::string(300, 'n'),
           .trace_format = w::kTraceFormatCtf2,
           .streams = 2}};
}

TEST(RelaydClientTest, ListSessionsReadsTheLayoutOfTheProtocolSpoken) {
  // LTTng 2.4 and 2.14 relayds: the fixed-size layout, every session CTF 1.8 (a 2.15 relayd
  // would hide its CTF 2 sessions in that layout; older ones have none).
  for (uint32_t relayd : {4u, 14u}) {
    std::vector<FakeSession> sessions = TwoFormats();
    sessions[1].trace_format = w::kTraceFormatCtf18;
    auto log = std::make_shared<FakeRelaydLog>();
    FakeRelayd f(RelaydOf(relayd, sessions, log));
    RelaydClient c("127.0.0.1", f.port(), Quick());
    const std::vector<RelaydSessionInfo> got = c.ListSessions();
    EXPECT_EQ(log->asked_minor, 15u);
    EXPECT_EQ(c.minor_version(), relayd);
    ASSERT_EQ(got.size(), 2u) << "relayd 2." << relayd;
    EXPECT_EQ(got[0].id, 7u);
    EXPECT_EQ(got[0].hostname, "db-1");
    EXPECT_EQ(got[0].name, "kernel");
    EXPECT_EQ(got[0].live_timer_us, 1000000u);
    EXPECT_EQ(got[0].streams, 4u);
    EXPECT_EQ(got[0].clients, 1u);
    EXPECT_EQ(got[0].trace_format, RelaydTraceFormat::kCtf18);
    // Names cut to their fields, less the NUL, as the relayd writes them.
    EXPECT_EQ(got[1].hostname, std::string(63, 'h'));
    EXPECT_EQ(got[1].name, ("ust-" + std::string(300, 'n')).substr(0, 254));
    EXPECT_EQ(got[1].trace_format, RelaydTraceFormat::kCtf18);
  }
  // A 2.15 relayd: lengths and whole names, each session's format, the CTF 2 one included.
  auto log = std::make_shared<FakeRelaydLog>();
  FakeRelayd f(RelaydOf(15, TwoFormats(), log));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  const std::vector<RelaydSessionInfo> got = c.ListSessions();
  EXPECT_EQ(log->spoken_minor, 15u);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].hostname, "db-1");
  EXPECT_EQ(got[0].name, "kernel");
  EXPECT_EQ(got[0].streams, 4u);
  EXPECT_EQ(got[0].trace_format, RelaydTraceFormat::kCtf18);
  EXPECT_EQ(got[1].id, 9u);
  EXPECT_EQ(got[1].hostname, std::string(70, 'h'));
  EXPECT_EQ(got[1].name, "ust-" + std::string(300, 'n'));
  EXPECT_EQ(got[1].trace_format, RelaydTraceFormat::kCtf2);
  EXPECT_STREQ(TraceFormatName(got[1].trace_format), "ctf-2");
}

TEST(RelaydClientTest, TheSessionNamesOf215AreBytesAndBounded) {
  const std::string odd("a\0/..\xff", 6);
  FakeRelayd f(RelaydOf(
      15, {{.id = 1, .hostname = odd, .name = std::string("x\0y", 3), .trace_format = 7}}));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  const std::vector<RelaydSessionInfo> got = c.ListSessions();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].hostname, odd);
  EXPECT_EQ(got[0].name, std::string("x\0y", 3));
  EXPECT_EQ(got[0].trace_format, RelaydTraceFormat::kUnknown) << "a format number of the future";

  // A name of 4097 bytes: a broken peer, refused before reading it.
  FakeRelayd big(RelaydOf(15, {{.id = 2, .hostname = "h", .name = std::string(4097, 'n')}}));
  RelaydClient c2("127.0.0.1", big.port(), Quick());
  RelaydError e = Catch([&] { c2.ListSessions(); });
  EXPECT_EQ(e.kind(), Kind::kProtocol);
  EXPECT_NE(std::string(e.what()).find("a name of 4097 bytes, more than the limit of 4096"),
            std::string::npos)
      << e.what();
}

TEST(RelaydClientTest, ATrickledListCostsOneTimeoutNotOnePerSession) {
  // Five sessions announced, a record's worth of bytes sent every 200 ms: each record arrives
  // within the 300 ms timeout, the whole list (a second) does not.
  std::string records;
  for (uint64_t id = 1; id <= 5; ++id) records += fake_relayd::SessionRecord24({.id = id});
  FakeRelayd f(Handshake([&](uint32_t, const std::string&) -> Answer {
    return {fake_relayd::SessionsCount(5) + records, false, true, milliseconds(200),
            sizeof(w::SessionRecord24)};
  }));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  const auto start = std::chrono::steady_clock::now();
  RelaydError e = Catch([&] { c.ListSessions(); });
  EXPECT_EQ(e.kind(), Kind::kTimeout) << e.what();
  EXPECT_NE(std::string(e.what()).find("did not answer within 300 ms (LIST_SESSIONS)"),
            std::string::npos)
      << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

// LIST_SESSIONS to `f` with a stop requested 200 ms in: its error, and how long it took.
RelaydError ListSessionsStoppedAfter200Ms(const FakeRelayd& f,
                                          std::chrono::steady_clock::duration* took) {
  std::atomic<bool> stop{false};
  RelaydLimits limits;
  limits.stop = &stop;
  RelaydClient c("127.0.0.1", f.port(), limits);
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(200));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  RelaydError e = Catch([&] { c.ListSessions(); });
  *took = std::chrono::steady_clock::now() - start;
  stopper.join();
  return e;
}

TEST(RelaydClientTest, AStopRequestEndsAnyWaitAtOnce) {
  // A relayd that answers the handshake, then nothing: the 10 s timeout is not waited for.
  FakeRelayd f(Handshake([](uint32_t, const std::string&) { return Silent(); }));
  std::chrono::steady_clock::duration took;
  RelaydError e = ListSessionsStoppedAfter200Ms(f, &took);
  EXPECT_EQ(e.kind(), Kind::kStopped) << e.what();
  EXPECT_NE(std::string(e.what()).find("stopped while waiting for it (LIST_SESSIONS)"),
            std::string::npos)
      << e.what();
  EXPECT_LT(took, milliseconds(200) + 2 * RelaydSocket::kStopPoll + milliseconds(100));
}

// A relayd that trickles a reply, a byte every 20 ms (7 s for this one, within the 10 s
// timeout): a stop ends the wait as when it sends nothing (before: the socket was ready every
// 20 ms, and the stop was looked at only when it was not: the whole reply was waited for).
TEST(RelaydClientTest, AStopRequestEndsATrickledReply) {
  FakeSession s;
  s.id = 1;
  FakeRelayd f(Handshake([&](uint32_t, const std::string&) -> Answer {
    Answer a{fake_relayd::SessionsCount(1) + fake_relayd::SessionRecord24(s)};
    a.trickle = milliseconds(20);
    return a;
  }));
  std::chrono::steady_clock::duration took;
  RelaydError e = ListSessionsStoppedAfter200Ms(f, &took);
  EXPECT_EQ(e.kind(), Kind::kStopped) << e.what();
  EXPECT_LT(took, milliseconds(200) + 2 * RelaydSocket::kStopPoll + milliseconds(100));
}

// An attach answered with 40 stream records, one every 50 ms: each within the timeout, the
// whole reply (2 s) not. One deadline bounds the reply, as LIST_SESSIONS's (before: one per
// record, so 100,000 records could take 11 days, and a stop, looked at once a wait passed
// RelaydSocket::kStopPoll, was never seen).
TEST(RelaydClientTest, AStreamListInDripsIsBoundedAsAWhole) {
  FakeRelayd f(Handshake([](uint32_t cmd, const std::string&) -> Answer {
    if (cmd != w::kAttachSession) return Close();
    w::AttachReply r{};
    r.status.set(w::kAttachOk);
    r.streams_count.set(40);
    Answer a{Bytes(r)};
    for (uint64_t i = 0; i < 40; ++i)
      a.bytes += fake_relayd::StreamRecordOf(i + 1, 1, i == 0, "host/s/ust", "chan_0");
    a.trickle = milliseconds(50);
    a.chunk = sizeof(w::StreamRecord);
    return a;
  }));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  const auto start = std::chrono::steady_clock::now();
  RelaydError e = Catch([&] { c.Attach(1, RelaydClient::Seek::kLast); });
  EXPECT_EQ(e.kind(), Kind::kTimeout) << e.what();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));
}

TEST(RelaydClientTest, ATotalTimeoutBoundsTheConnectionsWholeLife) {
  // Each answer comes within the per-request timeout; together they pass the total one.
  FakeRelayd f([](uint32_t cmd, const std::string&) -> Answer {
    std::this_thread::sleep_for(milliseconds(150));
    if (cmd == w::kConnect) return Hello();
    if (cmd == w::kCreateSession) return Status32(w::kCreateSessionOk);
    return {fake_relayd::SessionsCount(0)};
  });
  RelaydLimits limits;
  limits.io_timeout = milliseconds(1000);
  limits.total_timeout = milliseconds(400);
  RelaydError e = Catch([&] {
    RelaydClient c("127.0.0.1", f.port(), limits);
    c.ListSessions();
  });
  EXPECT_EQ(e.kind(), Kind::kTimeout) << e.what();
  EXPECT_NE(std::string(e.what()).find("did not finish within the 400 ms it was given"),
            std::string::npos)
      << e.what();
}

TEST(RelaydClientTest, DetachIsNotSentToARelaydOlderThan28) {
  // LTTng 2.4 to 2.7 do not know DETACH_SESSION: they answer an error and hang up.
  for (uint32_t relayd : {7u, 8u}) {
    auto log = std::make_shared<FakeRelaydLog>();
    FakeRelayd f(RelaydOf(relayd, {}, log, [](uint32_t cmd, const std::string&) -> Answer {
      if (cmd == w::kDetachSession) return Status32(w::kDetachOk);
      return Close();
    }));
    RelaydClient c("127.0.0.1", f.port(), Quick());
    c.Detach(3);
    c.ListSessions();  // in step: the reply to the last request is the one read
    const bool sent = std::find(log->commands.begin(), log->commands.end(), w::kDetachSession) !=
                      log->commands.end();
    EXPECT_EQ(sent, relayd >= 8) << "relayd 2." << relayd;
  }
}

TEST(RelaydClientTest, GiantCountsAndLengthsAreRefusedBeforeAllocating) {
  FakeRelayd f(Handshake([](uint32_t cmd, const std::string&) -> Answer {
    if (cmd == w::kListSessions) {
      w::ListSessionsReply r{};
      r.sessions_count.set(0xffffffffu);
      return {Bytes(r)};
    }
    if (cmd == w::kGetMetadata) {
      w::MetadataReply r{};
      r.len.set(1ull << 40);
      r.status.set(w::kMetadataOk);
      return {Bytes(r)};
    }
    if (cmd == w::kGetNextIndex) {
      w::IndexReply r{};
      r.status.set(w::kIndexOk);
      r.packet_size.set(1ull << 50);
      return {Bytes(r)};
    }
    w::PacketReply r{};  // GET_PACKET: more than asked
    r.status.set(w::kPacketOk);
    r.len.set(1u << 30);
    return {Bytes(r)};
  }));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  EXPECT_EQ(Catch([&] { c.ListSessions(); }).kind(), Kind::kProtocol);
  std::string text;
  RelaydError e = Catch([&] { c.GetMetadata(1, &text); });
  EXPECT_EQ(e.kind(), Kind::kProtocol);
  EXPECT_NE(std::string(e.what()).find("bytes of metadata, more than the limit"), std::string::npos)
      << e.what();
  EXPECT_EQ(Catch([&] { c.GetNextIndex(1); }).kind(), Kind::kProtocol);
  PacketBytes packet;
  bool new_metadata = false;
  EXPECT_EQ(Catch([&] { c.GetPacket(1, 0, 4096, &packet, &new_metadata); }).kind(),
            Kind::kProtocol);
}

TEST(RelaydClientTest, ASessionWithAViewerAlreadyIsOneClearError) {
  FakeRelayd f(Handshake([](uint32_t, const std::string&) -> Answer {
    w::AttachReply r{};
    r.status.set(w::kAttachAlready);
    return {Bytes(r)};
  }));
  RelaydClient c("127.0.0.1", f.port(), Quick());
  RelaydError e = Catch([&] { c.Attach(3, RelaydClient::Seek::kLast); });
  EXPECT_EQ(e.kind(), Kind::kAlreadyViewed);
  EXPECT_NE(std::string(e.what()).find("session 3 already has a viewer"), std::string::npos)
      << e.what();
}

TEST(RelaydClientTest, AReplyCutShortIsATimeoutOrAClosedConnectionNeverAHang) {
  // Announces two 4 KiB stream records and sends 10 bytes: then stays (timeout) or hangs up.
  for (bool hang_up : {false, true}) {
    FakeRelayd f(Handshake([hang_up](uint32_t, const std::string&) -> Answer {
      w::AttachReply r{};
      r.status.set(w::kAttachOk);
      r.streams_count.set(2);
      return {Bytes(r) + std::string(10, 'x'), hang_up, !hang_up};
    }));
    RelaydClient c("127.0.0.1", f.port(), Quick());
    RelaydError e = Catch([&] { c.Attach(3, RelaydClient::Seek::kLast); });
    EXPECT_EQ(e.kind(), hang_up ? Kind::kClosed : Kind::kTimeout) << e.what();
    if (hang_up) {
      EXPECT_NE(std::string(e.what()).find("closed the connection (waiting for the reply to "
                                           "ATTACH_SESSION)"),
                std::string::npos)
          << e.what();
    }
  }
}

w::StreamRecord Stream(uint64_t id, bool metadata, const char* channel) {
  w::StreamRecord s{};
  s.id.set(id);
  s.ctf_trace_id.set(1);
  s.metadata_flag.set(metadata ? 1 : 0);
  std::memcpy(s.path_name.chars.data(), "host/s-1/ust/uid/0/64-bit", 25);
  std::memcpy(s.channel_name.chars.data(), channel, std::strlen(channel));
  return s;
}

TEST(RelaydViewerTest, ASessionFromAttachToEndInTheProtocolsOrder) {
  // Stream 10 is the metadata, 11 the data stream of CPU 3. The relayd flags new metadata on
  // the first index, then gives one packet, beacons (the same one twice), and ends.
  int index_calls = 0, metadata_calls = 0;
  uint64_t asked_offset = 0, asked_len = 0;
  FakeRelayd f(Handshake([&](uint32_t cmd, const std::string& payload) -> Answer {
    switch (cmd) {
      case w::kAttachSession: {
        w::AttachReply r{};
        r.status.set(w::kAttachOk);
        r.streams_count.set(2);
        return {Bytes(r) + Bytes(Stream(10, true, "metadata")) +
                Bytes(Stream(11, false, "chan_3"))};
      }
      case w::kGetMetadata: {
        w::MetadataReply r{};
        const std::string text = ++metadata_calls == 1 ? "/* CTF 1.8 */" : "";
        r.len.set(text.size());
        r.status.set(text.empty() ? w::kMetadataNoNew : w::kMetadataOk);
        return {Bytes(r) + text};
      }
      case w::kGetNextIndex: {
        w::IndexReply r{};
        switch (++index_calls) {
          case 1:
            r.status.set(w::kIndexOk);
            r.flags.set(w::kFlagNewMetadata);
            r.offset.set(4096);
            r.packet_size.set(8 * 8);
            r.content_size.set(6 * 8);
            r.timestamp_begin.set(100);
            r.timestamp_end.set(200);
            r.events_discarded.set(5);
            r.stream_id.set(2);
            break;
          case 2:
          case 3:
            r.status.set(w::kIndexInactive);
            r.timestamp_end.set(300);
            break;
          default:
            r.status.set(w::kIndexHup);
        }
        return {Bytes(r)};
      }
      case w::kGetPacket: {
        w::GetPacketRequest q;
        std::memcpy(&q, payload.data(), sizeof(q));
        asked_offset = q.offset.get();
        asked_len = q.len.get();
        w::PacketReply r{};
        r.status.set(w::kPacketOk);
        r.len.set(8);
        return {Bytes(r) + "ABCDEFGH"};
      }
      case w::kGetNewStreams: {
        w::NewStreamsReply r{};
        r.status.set(w::kNewStreamsHup);
        return {Bytes(r)};
      }
    }
    return Close();
  }));
  RelaydViewer viewer("127.0.0.1", f.port(), Quick());
  viewer.Attach(7, RelaydViewer::Seek::kBeginning);
  std::vector<std::string> seen;
  for (int i = 0; i < 20 && viewer.active_sessions() > 0; ++i) {
    auto e = viewer.Poll();
    if (!e) continue;
    if (auto* m = std::get_if<ViewerMetadata>(&*e)) {
      seen.push_back("metadata " + m->path + " " + m->text);
    } else if (auto* p = std::get_if<ViewerPacket>(&*e)) {
      seen.push_back("packet " + std::string(p->channel) + " cpu " + std::to_string(p->cpu) + " " +
                     std::string(reinterpret_cast<const char*>(p->bytes.data()), p->bytes.size()));
      EXPECT_EQ(p->session_id, 7u);
      EXPECT_EQ(p->stream_id, 11u);
      EXPECT_EQ(p->ctf_stream_id, 2u);
      EXPECT_EQ(p->timestamp_begin, 100u);
      EXPECT_EQ(p->timestamp_end, 200u);
      EXPECT_EQ(p->events_discarded, 5u);
      EXPECT_EQ(p->content_size_bits, 48u);
      EXPECT_EQ(p->packet_size_bits, 64u);
    } else if (auto* b = std::get_if<ViewerBeacon>(&*e)) {
      seen.push_back("beacon " + std::to_string(b->timestamp));
    } else if (auto* a = std::get_if<ViewerStreamAdded>(&*e)) {
      seen.push_back("added " + a->stream.channel);
    } else if (auto* s = std::get_if<ViewerStreamEnded>(&*e)) {
      seen.push_back("ended " + std::to_string(s->stream_id));
    } else if (std::holds_alternative<ViewerSessionEnded>(*e)) {
      seen.push_back("session ended");
    }
  }
  const std::vector<std::string> want = {"added metadata",
                                         "added chan_3",
                                         "metadata host/s-1/ust/uid/0/64-bit /* CTF 1.8 */",
                                         "packet chan_3 cpu 3 ABCDEFGH",
                                         "beacon 300",
                                         "ended 11",
                                         "session ended"};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(asked_offset, 4096u);
  EXPECT_EQ(asked_len, 8u);
}

TEST(RelaydViewerTest, StreamsAfterTheAttachAndAPacketNotReadableYet) {
  // Attached with no stream (no application yet): the viewer asks for new streams while
  // nothing is readable. The first GET_PACKET says RETRY: the same index is asked again.
  // The fake announces the streams again and again: they are added once.
  int new_streams_calls = 0, packet_calls = 0;
  std::vector<uint64_t> offsets;
  uint64_t detached = 0;
  FakeRelayd f(Handshake([&](uint32_t cmd, const std::string& payload) -> Answer {
    switch (cmd) {
      case w::kAttachSession: {
        w::AttachReply r{};
        r.status.set(w::kAttachOk);
        return {Bytes(r)};
      }
      case w::kGetNewStreams: {
        w::NewStreamsReply r{};
        if (++new_streams_calls < 3) {
          r.status.set(w::kNewStreamsNoNew);
          return {Bytes(r)};
        }
        r.status.set(w::kNewStreamsOk);
        r.streams_count.set(2);
        return {Bytes(r) + Bytes(Stream(10, true, "metadata")) +
                Bytes(Stream(11, false, "chan_0"))};
      }
      case w::kGetMetadata: {
        w::MetadataReply r{};
        r.status.set(w::kMetadataNoNew);
        return {Bytes(r)};
      }
      case w::kGetNextIndex: {
        w::IndexReply r{};
        r.status.set(w::kIndexOk);
        r.offset.set(8 * offsets.size());
        r.packet_size.set(64);
        r.content_size.set(64);
        return {Bytes(r)};
      }
      case w::kGetPacket: {
        w::GetPacketRequest q;
        std::memcpy(&q, payload.data(), sizeof(q));
        offsets.push_back(q.offset.get());
        w::PacketReply r{};
        if (++packet_calls == 1) {
          r.status.set(w::kPacketRetry);
          return {Bytes(r)};
        }
        r.status.set(w::kPacketOk);
        r.len.set(8);
        return {Bytes(r) + "12345678"};
      }
      case w::kDetachSession: {
        w::SessionIdRequest q;
        std::memcpy(&q, payload.data(), sizeof(q));
        detached = q.session_id.get();
        return Status32(w::kDetachOk);
      }
    }
    return Close();
  }));
  RelaydViewer viewer("127.0.0.1", f.port(), Quick());
  viewer.Attach(4, RelaydViewer::Seek::kLast);
  EXPECT_FALSE(viewer.Poll()) << "no stream yet";
  EXPECT_FALSE(viewer.Poll());
  int added = 0, packets = 0;
  for (int i = 0; i < 10 && packets < 2; ++i) {
    auto e = viewer.Poll();
    if (!e) continue;
    added += std::holds_alternative<ViewerStreamAdded>(*e);
    packets += std::holds_alternative<ViewerPacket>(*e);
  }
  EXPECT_EQ(added, 2);
  EXPECT_EQ(packets, 2);
  // The retried packet is asked at the same offset, then the next index's.
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 0, 16}));
  viewer.Detach(4);
  EXPECT_EQ(detached, 4u);
  EXPECT_EQ(viewer.active_sessions(), 0u);
}

TEST(RelaydViewerTest, TheCpuComesFromTheStreamsFileName) {
  EXPECT_EQ(StreamCpu("chan_3"), 3);
  EXPECT_EQ(StreamCpu("channel0_12"), 12);
  EXPECT_EQ(StreamCpu("metadata"), -1);
  EXPECT_EQ(StreamCpu("chan_"), -1);
  EXPECT_EQ(StreamCpu("chan_3x"), -1);
}

// A relayd answering GET_METADATA with more text forever: refused once a trace's metadata
// passes its bound (before: appended until memory ran out, 2 GB in 8 s, then SIGABRT).
TEST(RelaydViewerTest, MetadataWithoutEndIsRefusedAtItsBound) {
  int replies = 0;
  FakeRelayd f(Handshake([&](uint32_t cmd, const std::string&) -> Answer {
    switch (cmd) {
      case w::kAttachSession: {
        w::AttachReply r{};
        r.status.set(w::kAttachOk);
        r.streams_count.set(1);
        return {Bytes(r) + Bytes(Stream(10, true, "metadata"))};
      }
      case w::kGetMetadata: {
        // 64 KiB a reply, 100 replies before it would stop: 6.4 MiB in all.
        const std::string text(64 << 10, ' ');
        w::MetadataReply r{};
        r.len.set(text.size());
        r.status.set(++replies <= 100 ? w::kMetadataOk : w::kMetadataNoNew);
        return {Bytes(r) + (replies <= 100 ? text : std::string())};
      }
    }
    return Close();
  }));
  RelaydLimits limits = Quick();
  limits.max_metadata_total_bytes = 1 << 20;
  RelaydViewer viewer("127.0.0.1", f.port(), limits);
  RelaydError e = Catch([&] { viewer.Attach(7, RelaydViewer::Seek::kBeginning); });
  EXPECT_EQ(e.kind(), Kind::kProtocol) << e.what();
  EXPECT_NE(std::string(e.what()).find("more than 1 MiB of metadata"), std::string::npos)
      << e.what();
  EXPECT_LE(replies, 17);  // stopped at the bound, not at the relayd's end
}

// A relayd announcing new streams at every ask and hanging each up at once: the viewer holds
// only the live ones (before: every stream ever announced, memory climbing for ever).
TEST(RelaydViewerTest, StreamsThatComeAndGoAreForgotten) {
  uint64_t next_id = 100;
  FakeRelayd f(Handshake([&](uint32_t cmd, const std::string&) -> Answer {
    switch (cmd) {
      case w::kAttachSession: {
        w::AttachReply r{};
        r.status.set(w::kAttachOk);
        r.streams_count.set(0);
        return {Bytes(r)};
      }
      case w::kGetNewStreams: {
        w::NewStreamsReply r{};
        r.status.set(w::kNewStreamsOk);
        r.streams_count.set(50);
        std::string bytes = Bytes(r);
        for (int i = 0; i < 50; ++i) bytes += Bytes(Stream(next_id++, false, "chan_0"));
        return {bytes};
      }
      case w::kGetNextIndex: {
        w::IndexReply r{};
        r.status.set(w::kIndexHup);
        return {Bytes(r)};
      }
    }
    return Close();
  }));
  RelaydViewer viewer("127.0.0.1", f.port(), Quick());
  viewer.Attach(7, RelaydViewer::Seek::kBeginning);
  size_t most = 0;
  for (int i = 0; i < 3000; ++i) {
    viewer.Poll();
    most = std::max(most, viewer.streams_held());
  }
  EXPECT_GT(next_id, 1000u);  // the relayd announced many
  EXPECT_LE(most, 100u);      // the viewer never held more than two replies' worth
}

}  // namespace
}  // namespace waitpath
