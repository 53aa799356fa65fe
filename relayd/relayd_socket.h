// A blocking TCP connection to a relayd where every operation has a deadline: a relayd that
// is silent, slow or gone costs at most the timeout, never a hang; a stop request ends any wait
// within kStopPoll. Errors are RelaydError with one line naming the relayd and what was being
// done.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace waitpath {

class RelaydError : public std::runtime_error {
 public:
  enum class Kind : uint8_t {
    kUnreachable,    // nothing accepted the connection (or the name did not resolve)
    kTimeout,        // the relayd did not answer in time
    kClosed,         // the relayd closed the connection (it exited, was killed, or refused us)
    kProtocol,       // the relayd sent something this client cannot accept
    kRefused,        // the relayd answered a request with an error status
    kAlreadyViewed,  // the session already has a viewer (one viewer per session)
    kStopped,        // the caller's stop flag was raised while waiting for the relayd
  };
  RelaydError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class RelaydSocket {
 public:
  using Clock = std::chrono::steady_clock;
  // How often a wait looks at the stop flag.
  static constexpr std::chrono::milliseconds kStopPoll{100};

  // Connects to HOST:PORT (IPv4 or IPv6, names resolved) within `timeout`, which then bounds
  // each Send and Receive. A non-zero `lifetime` bounds everything from now on (a one-shot
  // query: connect, handshake and reply together). `stop`, when given and raised, ends any wait
  // with kStopped. Name resolution itself (getaddrinfo) is not bounded.
  RelaydSocket(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
               std::chrono::milliseconds lifetime = {}, const std::atomic<bool>* stop = nullptr);
  ~RelaydSocket();
  RelaydSocket(const RelaydSocket&) = delete;
  RelaydSocket& operator=(const RelaydSocket&) = delete;

  // Sends all of `data`; `what` names the request in errors ("GET_PACKET").
  void Send(const void* data, size_t size, const char* what);
  // Receives exactly `size` bytes within the timeout.
  void Receive(void* data, size_t size, const char* what);
  // Receives exactly `size` bytes, a part of a reply that must be whole by `deadline` (from
  // ReplyDeadline()): a reply in many parts costs one timeout, not one per part.
  void Receive(void* data, size_t size, const char* what, Clock::time_point deadline);
  Clock::time_point ReplyDeadline() const { return Clock::now() + timeout_; }

  const std::string& peer() const { return peer_; }  // "HOST:PORT", for messages

 private:
  // Waits until the socket is ready for `events` (POLLIN/POLLOUT) or throws at the deadline
  // (or the end of the lifetime), or when stopped.
  void Wait(short events, Clock::time_point deadline, const char* what);

  int fd_ = -1;
  std::string peer_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds lifetime_;
  Clock::time_point end_;  // of the lifetime; max() when none
  const std::atomic<bool>* stop_;
};

}  // namespace waitpath
