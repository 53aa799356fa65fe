// Test doubles of an lttng-relayd's live port, for the viewer client's unit tests: FakeRelayd
// accepts one connection on a loopback port and answers each request by a script (bytes, at
// once or trickled, then go on, hang up or fall silent); RelaydOf scripts a relayd of a given
// protocol version serving given sessions, answering CONNECT and LIST_SESSIONS as lttng-relayd
// does (src/bin/lttng-relayd/live.cpp: the 2.4 or 2.15 session layout by the lower of both
// versions, CTF 2 sessions hidden below 2.15). The cases a real lttng-relayd will not produce on
// demand; the real daemons are exercised by tools/relayd_dump/test_relayd_dump.sh. TraceRelayd
// serves a recorded trace as a live session, every command answered as lttng-relayd does: the
// peer the mutation run (tests/fuzz/relayd_fuzz.cc) damages one reply of.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "relayd/viewer_wire.h"

namespace waitpath::fake_relayd {

template <typename T>
std::string Bytes(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
}

// What the fake answers to a request: bytes to send (`chunk` bytes at a time, `trickle` apart,
// when `trickle` is given), then go on, close, or stay silent.
struct Answer {
  std::string bytes;
  bool close = false;
  bool silent = false;
  std::chrono::milliseconds trickle{0};
  size_t chunk = 1;
};
inline Answer Close() {
  return {"", true, false};
}
inline Answer Silent() {
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
  FakeRelayd(const FakeRelayd&) = delete;
  FakeRelayd& operator=(const FakeRelayd&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "net://127.0.0.1:" + std::to_string(port_); }

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
  void Send(const Answer& a) {
    if (a.trickle.count() == 0) {
      send(conn_fd_, a.bytes.data(), a.bytes.size(), MSG_NOSIGNAL);
      return;
    }
    for (size_t i = 0; i < a.bytes.size() && !stop_; i += a.chunk) {
      const size_t n = std::min(a.chunk, a.bytes.size() - i);
      if (send(conn_fd_, a.bytes.data() + i, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) return;
      std::this_thread::sleep_for(a.trickle);
    }
  }
  void Serve() {
    conn_fd_ = accept(listen_fd_, nullptr, nullptr);
    if (conn_fd_ < 0) return;
    while (!stop_) {
      viewer_wire::CmdHeader h{};
      if (!ReadAll(&h, sizeof(h))) return;
      std::string payload(h.data_size.get(), '\0');
      if (!ReadAll(payload.data(), payload.size())) return;
      Answer a = script_(h.cmd.get(), payload);
      Send(a);
      if (a.close) {
        shutdown(conn_fd_, SHUT_RDWR);
        return;
      }
      if (a.silent) {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return;
      }
    }
  }

  Script script_;
  int listen_fd_ = -1;
  std::atomic<int> conn_fd_{-1};
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

inline Answer Hello(uint32_t major = viewer_wire::kMajor, uint32_t minor = 13) {
  viewer_wire::ConnectMsg m{};
  m.viewer_session_id.set(1);
  m.major.set(major);
  m.minor.set(minor);
  return {Bytes(m)};
}
inline Answer Status32(uint32_t status) {
  viewer_wire::StatusReply r{};
  r.status.set(status);
  return {Bytes(r)};
}

// Answers CONNECT (as a relayd of protocol 2.<minor>) and CREATE_SESSION as a relayd does, the
// rest by `rest`.
inline Script Handshake(const Script& rest, uint32_t minor = 13) {
  return [rest, minor](uint32_t cmd, const std::string& payload) -> Answer {
    if (cmd == viewer_wire::kConnect) return Hello(viewer_wire::kMajor, minor);
    if (cmd == viewer_wire::kCreateSession) return Status32(viewer_wire::kCreateSessionOk);
    return rest(cmd, payload);
  };
}

// A session of a scripted relayd.
struct FakeSession {
  uint64_t id = 0;
  std::string hostname = "host";
  std::string name = "session";
  uint32_t trace_format = viewer_wire::kTraceFormatCtf18;
  uint32_t streams = 4;
  uint32_t clients = 0;
};

inline std::string SessionRecord24(const FakeSession& s) {
  viewer_wire::SessionRecord24 r{};
  r.common.id.set(s.id);
  r.common.live_timer.set(1000000);
  r.common.clients.set(s.clients);
  r.common.streams.set(s.streams);
  std::memcpy(r.hostname.chars.data(), s.hostname.data(),
              std::min(s.hostname.size(), r.hostname.chars.size() - 1));
  std::memcpy(r.session_name.chars.data(), s.name.data(),
              std::min(s.name.size(), r.session_name.chars.size() - 1));
  return Bytes(r);
}
inline std::string SessionRecord215(const FakeSession& s) {
  viewer_wire::SessionRecord215 r{};
  r.common.id.set(s.id);
  r.common.live_timer.set(1000000);
  r.common.clients.set(s.clients);
  r.common.streams.set(s.streams);
  r.hostname_len.set(static_cast<uint32_t>(s.hostname.size()));
  r.session_name_len.set(static_cast<uint32_t>(s.name.size()));
  r.trace_format.set(s.trace_format);
  return Bytes(r) + s.hostname + s.name;
}
inline std::string SessionsCount(uint32_t count) {
  viewer_wire::ListSessionsReply r{};
  r.sessions_count.set(count);
  return Bytes(r);
}

// What a scripted relayd saw of its client.
struct FakeRelaydLog {
  uint32_t asked_minor = 0;  // in CONNECT
  uint32_t spoken_minor = 0;
  std::vector<uint32_t> commands;
};

// A relayd of protocol 2.<relayd_minor> serving `sessions`: CONNECT answered with its own
// version, the lower of both spoken; LIST_SESSIONS in that version's layout, CTF 2 sessions
// left out below 2.15; any other command by `rest` (when given), else the connection closed.
inline Script RelaydOf(
    uint32_t relayd_minor, const std::vector<FakeSession>& sessions,
    const std::shared_ptr<FakeRelaydLog>& log = std::make_shared<FakeRelaydLog>(),
    const Script& rest = nullptr) {
  namespace w = viewer_wire;
  return [=](uint32_t cmd, const std::string& payload) -> Answer {
    log->commands.push_back(cmd);
    switch (cmd) {
      case w::kConnect: {
        w::ConnectMsg m{};
        std::memcpy(&m, payload.data(), std::min(payload.size(), sizeof(m)));
        log->asked_minor = m.minor.get();
        log->spoken_minor = std::min(relayd_minor, log->asked_minor);
        return Hello(w::kMajor, relayd_minor);
      }
      case w::kCreateSession:
        return Status32(w::kCreateSessionOk);
      case w::kListSessions: {
        const bool v215 = log->spoken_minor >= 15;
        std::string records;
        uint32_t count = 0;
        for (const FakeSession& s : sessions) {
          if (!v215 && s.trace_format == w::kTraceFormatCtf2) continue;
          records += v215 ? SessionRecord215(s) : SessionRecord24(s);
          ++count;
        }
        return {SessionsCount(count) + records};
      }
    }
    return rest ? rest(cmd, payload) : Close();
  };
}

// A recorded trace as a relayd holds it: the metadata file's bytes (sent as they are, packetized
// or text), and each stream's file with its index (index/NAME.idx: the CTF index lttng-relayd
// writes beside a stream and answers GET_NEXT_INDEX from).
struct ServedStream {
  uint64_t id = 0;  // the relayd's handle
  std::string channel;
  std::string bytes;
  std::vector<viewer_wire::IndexReply> index;  // status OK, one per packet, in file order
  size_t next = 0;                             // the next index to send
};
struct ServedTrace {
  std::string path = "host/session-20260101-000000/ust/uid/1000/64-bit";
  uint64_t trace_id = 1;
  uint64_t metadata_id = 1;  // the metadata stream's handle
  std::string metadata;
  std::vector<ServedStream> streams;
};

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Loads trace directory `dir` with the streams named in `channels` ("waitpath_0_0"...), handles
// 2, 3... False with `why` when a file is missing or an index is not one.
inline bool LoadServedTrace(const std::string& dir, const std::vector<std::string>& channels,
                            ServedTrace* out, std::string* why) {
  namespace w = viewer_wire;
  ServedTrace t;
  t.metadata = ReadFileBytes(dir + "/metadata");
  if (t.metadata.empty()) {
    *why = dir + "/metadata: missing or empty";
    return false;
  }
  uint64_t id = t.metadata_id;
  for (const std::string& channel : channels) {
    ServedStream s;
    s.id = ++id;
    s.channel = channel;
    s.bytes = ReadFileBytes(dir + "/" + channel);
    const std::string idx = ReadFileBytes(dir + "/index/" + channel + ".idx");
    // The index file: magic, major, minor, entry size (32 bits each, big-endian), then the
    // entries, each starting with the fields of an IndexReply up to its status.
    constexpr size_t kFields = offsetof(w::IndexReply, status);
    w::Be32 header[4];
    if (s.bytes.empty() || idx.size() < sizeof(header)) {
      *why = dir + "/" + channel + ": stream or index missing";
      return false;
    }
    std::memcpy(header, idx.data(), sizeof(header));
    const size_t entry = header[3].get();
    if (header[0].get() != 0xC1F1DCC1 || entry < kFields) {
      *why = dir + "/index/" + channel + ".idx: not a CTF index";
      return false;
    }
    for (size_t at = sizeof(header); at + entry <= idx.size(); at += entry) {
      w::IndexReply r{};
      std::memcpy(static_cast<void*>(&r), idx.data() + at, kFields);
      r.status.set(w::kIndexOk);
      s.index.push_back(r);
    }
    t.streams.push_back(std::move(s));
  }
  *out = std::move(t);
  return true;
}

inline std::string StreamRecordOf(uint64_t id, uint64_t trace_id, bool metadata,
                                  const std::string& path, const std::string& channel) {
  viewer_wire::StreamRecord r{};
  r.id.set(id);
  r.ctf_trace_id.set(trace_id);
  r.metadata_flag.set(metadata ? 1 : 0);
  std::memcpy(r.path_name.chars.data(), path.data(),
              std::min(path.size(), r.path_name.chars.size() - 1));
  std::memcpy(r.channel_name.chars.data(), channel.data(),
              std::min(channel.size(), r.channel_name.chars.size() - 1));
  return Bytes(r);
}

// How a TraceRelayd paces what it serves, with replies the protocol allows that a quick
// session does not need: all zero, everything at once.
struct Pacing {
  // ATTACH_SESSION gives the metadata stream and the first data stream; the others come with
  // the next GET_NEW_STREAMS, which the index replies flag (NEW_STREAM, status RETRY until
  // then: a stream is announced before its data, as lttng-relayd has it before its packets).
  bool late_streams = false;
  // Every Nth GET_NEXT_INDEX of a stream is answered INACTIVE (a beacon at the end of its last
  // packet sent) or, before its first packet, RETRY; every Nth GET_PACKET RETRY. 0: never; 1
  // would retry for ever.
  uint32_t retry_every = 0;
  // GET_METADATA sends at most this many bytes at a time (0: all), NEW_METADATA flagged on the
  // index replies until all is sent.
  size_t metadata_chunk = 0;
};

// A relayd of protocol 2.<minor> serving `trace` as live session `session` to one viewer, as
// lttng-relayd (src/bin/lttng-relayd/live.cpp) serves a session whose viewer attached when it
// began and whose tracing ends once the viewer has read it all: ATTACH_SESSION gives the
// streams (the metadata one too); GET_METADATA the metadata, then NO_NEW; GET_NEXT_INDEX each
// packet's index in turn, flagged NEW_METADATA while metadata is unsent and NEW_STREAM while a
// stream is unannounced, then HUP; GET_PACKET the bytes asked (ERR past the file's end);
// GET_NEW_STREAMS the streams not announced yet, else NO_NEW until every stream was answered
// HUP, then HUP; DETACH_SESSION OK. `pacing` adds retries, beacons, late streams and metadata
// in parts. An unknown session or stream is answered with the command's error status, an
// unknown command by closing. The state is shared by the copies of the script.
class TraceRelayd {
 public:
  TraceRelayd(ServedTrace trace, FakeSession session, uint32_t minor, Pacing pacing = {})
      : trace_(std::move(trace)), session_(std::move(session)), minor_(minor), pacing_(pacing) {
    announced_.assign(trace_.streams.size(), false);
    hup_.assign(trace_.streams.size(), false);
    asks_.assign(trace_.streams.size(), 0);
  }

  // The script, to give to a FakeRelayd (which calls it from its thread).
  static Script Serve(const std::shared_ptr<TraceRelayd>& relayd) {
    return
        [relayd](uint32_t cmd, const std::string& payload) { return relayd->Reply(cmd, payload); };
  }

  Answer Reply(uint32_t cmd, const std::string& payload) {
    namespace w = viewer_wire;
    switch (cmd) {
      case w::kConnect: {
        const auto m = Parse<w::ConnectMsg>(payload);
        spoken_minor_ = std::min(minor_, m.minor.get());
        return Hello(w::kMajor, minor_);
      }
      case w::kCreateSession:
        return Status32(w::kCreateSessionOk);
      case w::kListSessions:
        return {SessionsCount(1) + (spoken_minor_ >= w::kMinorSessionFormat
                                        ? SessionRecord215(session_)
                                        : SessionRecord24(session_))};
      case w::kAttachSession: {
        w::AttachReply r{};
        if (Parse<w::AttachRequest>(payload).session_id.get() != session_.id) {
          r.status.set(w::kAttachUnknown);
          return {Bytes(r)};
        }
        attached_ = true;
        r.status.set(w::kAttachOk);
        std::string records =
            StreamRecordOf(trace_.metadata_id, trace_.trace_id, true, trace_.path, "metadata");
        const uint32_t count =
            1 + Announce(pacing_.late_streams ? 1 : trace_.streams.size(), &records);
        r.streams_count.set(count);
        return {Bytes(r) + records};
      }
      case w::kGetMetadata: {
        w::MetadataReply r{};
        if (!attached_ ||
            Parse<w::StreamIdRequest>(payload).stream_id.get() != trace_.metadata_id) {
          r.status.set(w::kMetadataErr);
          return {Bytes(r)};
        }
        const size_t left = trace_.metadata.size() - metadata_sent_;
        const size_t n = pacing_.metadata_chunk ? std::min(left, pacing_.metadata_chunk) : left;
        r.len.set(n);
        r.status.set(n > 0 ? w::kMetadataOk : w::kMetadataNoNew);
        metadata_sent_ += n;
        return {Bytes(r) + trace_.metadata.substr(metadata_sent_ - n, n)};
      }
      case w::kGetNewStreams: {
        w::NewStreamsReply r{};
        if (!attached_ || Parse<w::SessionIdRequest>(payload).session_id.get() != session_.id) {
          r.status.set(w::kNewStreamsErr);
          return {Bytes(r)};
        }
        std::string records;
        const uint32_t count = Announce(trace_.streams.size(), &records);
        // HUP once no stream is left: each was answered HUP, so its last packet was read
        // (lttng-relayd's "no more streams with data").
        r.status.set(count > 0   ? w::kNewStreamsOk
                     : AllRead() ? w::kNewStreamsHup
                                 : w::kNewStreamsNoNew);
        r.streams_count.set(count);
        return {Bytes(r) + records};
      }
      case w::kGetNextIndex: {
        w::IndexReply r{};
        const size_t i = Find(Parse<w::StreamIdRequest>(payload).stream_id.get());
        if (i == kNone) {
          r.status.set(w::kIndexErr);
          return {Bytes(r)};
        }
        ServedStream& s = trace_.streams[i];
        const bool unannounced =
            std::find(announced_.begin(), announced_.end(), false) != announced_.end();
        if (unannounced) {
          // The streams come before their data (lttng-relayd has a session's streams before
          // their first packet): the viewer is sent for them first.
          r.status.set(w::kIndexRetry);
        } else if (pacing_.retry_every && ++asks_[i] % pacing_.retry_every == 0 &&
                   s.next < s.index.size()) {
          if (s.next == 0) {
            r.status.set(w::kIndexRetry);
          } else {
            r.status.set(w::kIndexInactive);
            r.timestamp_end = s.index[s.next - 1].timestamp_end;
            r.stream_id = s.index[s.next - 1].stream_id;
          }
        } else if (s.next < s.index.size()) {
          r = s.index[s.next++];
        } else {
          r.status.set(w::kIndexHup);
          hup_[i] = true;
        }
        uint32_t flags = 0;
        if (metadata_sent_ < trace_.metadata.size()) flags |= w::kFlagNewMetadata;
        if (unannounced) flags |= w::kFlagNewStream;
        r.flags.set(flags);
        return {Bytes(r)};
      }
      case w::kGetPacket: {
        const auto req = Parse<w::GetPacketRequest>(payload);
        w::PacketReply r{};
        const size_t i = Find(req.stream_id.get());
        const uint64_t offset = req.offset.get();
        const uint64_t len = req.len.get();
        const std::string* bytes = i == kNone ? nullptr : &trace_.streams[i].bytes;
        if (!bytes || offset > bytes->size() || len > bytes->size() - offset) {
          r.status.set(w::kPacketErr);
          return {Bytes(r)};
        }
        if (pacing_.retry_every && ++packet_asks_ % pacing_.retry_every == 0) {
          r.status.set(w::kPacketRetry);
          return {Bytes(r)};
        }
        r.status.set(w::kPacketOk);
        r.len.set(static_cast<uint32_t>(len));
        return {Bytes(r) + bytes->substr(offset, len)};
      }
      case w::kDetachSession:
        attached_ = false;
        return Status32(w::kDetachOk);
    }
    return Close();
  }

  // Every stream was announced and every packet's index sent.
  bool AllSent() const {
    for (size_t i = 0; i < trace_.streams.size(); ++i) {
      if (!announced_[i] || trace_.streams[i].next != trace_.streams[i].index.size()) return false;
    }
    return true;
  }
  // And every stream was answered HUP after its last index.
  bool AllRead() const {
    return AllSent() && std::find(hup_.begin(), hup_.end(), false) == hup_.end();
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  template <typename T>
  static T Parse(const std::string& payload) {
    T v{};
    std::memcpy(&v, payload.data(), std::min(payload.size(), sizeof(v)));
    return v;
  }
  // Announces the first `upto` streams not announced yet: their records appended to `records`.
  uint32_t Announce(size_t upto, std::string* records) {
    uint32_t n = 0;
    for (size_t i = 0; i < std::min(upto, trace_.streams.size()); ++i) {
      if (announced_[i]) continue;
      announced_[i] = true;
      const ServedStream& s = trace_.streams[i];
      *records += StreamRecordOf(s.id, trace_.trace_id, false, trace_.path, s.channel);
      ++n;
    }
    return n;
  }
  // The index of an announced stream, or kNone.
  size_t Find(uint64_t id) const {
    if (!attached_) return kNone;
    for (size_t i = 0; i < trace_.streams.size(); ++i) {
      if (trace_.streams[i].id == id && announced_[i]) return i;
    }
    return kNone;
  }

  ServedTrace trace_;
  FakeSession session_;
  uint32_t minor_;
  Pacing pacing_;
  uint32_t spoken_minor_ = 0;
  bool attached_ = false;
  size_t metadata_sent_ = 0;
  std::vector<bool> announced_;
  std::vector<bool> hup_;       // answered HUP
  std::vector<uint32_t> asks_;  // GET_NEXT_INDEX of each stream
  uint32_t packet_asks_ = 0;
};

}  // namespace waitpath::fake_relayd
