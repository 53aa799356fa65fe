// RelaydClient and RelaydViewer against a scripted fake relayd (a test double on a loopback
// port): the cases a real lttng-relayd will not produce on demand — garbage, giant lengths,
// silence, a refused attach — and the viewer's event order on a scripted session. The real
// daemons are exercised by tools/relayd_dump/test_relayd_dump.sh.
#include "live/relayd_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "live/relayd_viewer.h"
#include "live/viewer_wire.h"

namespace waitpath {
namespace {

namespace w = viewer_wire;
using std::chrono::milliseconds;
using Kind = RelaydError::Kind;

template <typename T>
std::string Bytes(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

// What the fake answers to a request: bytes to send, or close / stay silent.
struct Answer {
  std::string bytes;
  bool close = false;
  bool silent = false;
};
Answer Close() {
  return {"", true, false};
}
Answer Silent() {
  return {"", false, true};
}
using Script = std::function<Answer(uint32_t cmd, const std::string& payload)>;

// Accepts one connection on 127.0.0.1 and answers each request by the script.
class FakeRelayd {
 public:
  explicit FakeRelayd(Script script) : script_(std::move(script)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(listen_fd_, 1);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRelayd() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    if (conn_fd_ >= 0) shutdown(conn_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
    if (conn_fd_ >= 0) close(conn_fd_);
  }
  uint16_t port() const { return port_; }

 private:
  bool ReadAll(void* p, size_t n) {
    auto* c = static_cast<char*>(p);
    while (n > 0) {
      ssize_t r = recv(conn_fd_, c, n, 0);
      if (r <= 0) return false;
      c += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  void Serve() {
    conn_fd_ = accept(listen_fd_, nullptr, nullptr);
    if (conn_fd_ < 0) return;
    while (!stop_) {
      w::CmdHeader h{};
      if (!ReadAll(&h, sizeof(h))) return;
      std::string payload(h.data_size.get(), '\0');
      if (!ReadAll(payload.data(), payload.size())) return;
      Answer a = script_(h.cmd.get(), payload);
      send(conn_fd_, a.bytes.data(), a.bytes.size(), MSG_NOSIGNAL);
      if (a.close) {
        shutdown(conn_fd_, SHUT_RDWR);
        return;
      }
      if (a.silent) {
        while (!stop_) std::this_thread::sleep_for(milliseconds(10));
        return;
      }
    }
  }

  Script script_;
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Answer Hello(uint32_t major = w::kMajor, uint32_t minor = 13) {
  w::ConnectMsg m{};
  m.viewer_session_id.set(1);
  m.major.set(major);
  m.minor.set(minor);
  return {Bytes(m)};
}
Answer Status32(uint32_t status) {
  w::StatusReply r{};
  r.status.set(status);
  return {Bytes(r)};
}

// Answers CONNECT and CREATE_SESSION as a relayd does, the rest by `rest`.
Script Handshake(Script rest) {
  return [rest](uint32_t cmd, const std::string& payload) -> Answer {
    if (cmd == w::kConnect) return Hello();
    if (cmd == w::kCreateSession) return Status32(w::kCreateSessionOk);
    return rest(cmd, payload);
  };
}

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

TEST(RelaydClientTest, TheHandshakeAsksForProtocol24AndCreatesAViewerSession) {
  std::string hello;
  bool created = false;
  FakeRelayd f([&](uint32_t cmd, const std::string& payload) -> Answer {
    if (cmd == w::kConnect) {
      hello = payload;
      return Hello();
    }
    if (cmd == w::kCreateSession) created = true;
    return Status32(w::kCreateSessionOk);
  });
  RelaydClient c("127.0.0.1", f.port(), Quick());
  ASSERT_EQ(hello.size(), sizeof(w::ConnectMsg));
  w::ConnectMsg m;
  std::memcpy(&m, hello.data(), sizeof(m));
  EXPECT_EQ(m.major.get(), 2u);
  EXPECT_EQ(m.minor.get(), 4u);
  EXPECT_EQ(m.type.get(), w::kClientCommand);
  EXPECT_TRUE(created);
  EXPECT_EQ(c.minor_version(), 4u) << "the lower of the two versions";
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

}  // namespace
}  // namespace waitpath
