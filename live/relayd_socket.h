// A blocking TCP connection to a relayd where every operation has a deadline: a relayd that
// is silent, slow or gone costs at most the timeout, never a hang. Errors are RelaydError
// with one line naming the relayd and what was being done.
#pragma once

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
  };
  RelaydError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class RelaydSocket {
 public:
  // Connects to HOST:PORT (IPv4 or IPv6, names resolved) within `timeout`.
  RelaydSocket(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);
  ~RelaydSocket();
  RelaydSocket(const RelaydSocket&) = delete;
  RelaydSocket& operator=(const RelaydSocket&) = delete;

  // Sends all of `data`; `what` names the request in errors ("GET_PACKET").
  void Send(const void* data, size_t size, const char* what);
  // Receives exactly `size` bytes.
  void Receive(void* data, size_t size, const char* what);

  const std::string& peer() const { return peer_; }  // "HOST:PORT", for messages

 private:
  // Waits until the socket is ready for `events` (POLLIN/POLLOUT) or throws at the deadline.
  void Wait(short events, std::chrono::steady_clock::time_point deadline, const char* what);

  int fd_ = -1;
  std::string peer_;
  std::chrono::milliseconds timeout_;
};

}  // namespace waitpath
