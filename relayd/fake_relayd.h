// Test doubles of an lttng-relayd's live port, for the viewer client's unit tests: FakeRelayd
// accepts one connection on a loopback port and answers each request by a script (bytes, at
// once or trickled, then go on, hang up or fall silent); RelaydOf scripts a relayd of a given
// protocol version serving given sessions, answering CONNECT and LIST_SESSIONS as lttng-relayd
// does (src/bin/lttng-relayd/live.cpp: the 2.4 or 2.15 session layout by the lower of both
// versions, CTF 2 sessions hidden below 2.15). The cases a real lttng-relayd will not produce on
// demand; the real daemons are exercised by tools/relayd_dump/test_relayd_dump.sh.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
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

}  // namespace waitpath::fake_relayd
