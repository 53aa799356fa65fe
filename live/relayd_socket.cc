#include "live/relayd_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace waitpath {
namespace {

using Clock = std::chrono::steady_clock;

std::string Errno(int err) {
  return std::strerror(err);
}

}  // namespace

RelaydSocket::RelaydSocket(const std::string& host, uint16_t port,
                           std::chrono::milliseconds timeout)
    : peer_(host + ":" + std::to_string(port)), timeout_(timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw RelaydError(RelaydError::Kind::kUnreachable,
                      "cannot resolve relayd host '" + host + "': " + gai_strerror(rc));
  }
  std::string last_error = "no address";
  const auto deadline = Clock::now() + timeout_;
  for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last_error = Errno(errno);
      continue;
    }
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
      fd_ = fd;
      try {
        Wait(POLLOUT, deadline, "connecting");
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err == 0) break;
        last_error = Errno(err);
      } catch (const RelaydError& e) {
        last_error = e.what();
      }
      fd_ = -1;
    } else {
      last_error = Errno(errno);
    }
    close(fd);
  }
  freeaddrinfo(found);
  if (fd_ < 0) {
    throw RelaydError(RelaydError::Kind::kUnreachable,
                      "cannot connect to the relayd's live port " + peer_ + ": " + last_error +
                          " (is lttng-relayd running with its live port there?)");
  }
  // Requests are small and answered one by one: Nagle's delay would cost every round trip.
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

RelaydSocket::~RelaydSocket() {
  if (fd_ >= 0) close(fd_);
}

void RelaydSocket::Wait(short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      throw RelaydError(RelaydError::Kind::kTimeout, "relayd " + peer_ + " did not answer within " +
                                                         std::to_string(timeout_.count()) +
                                                         " ms (" + what + ")");
    }
    pollfd p{fd_, events, 0};
    int rc = poll(&p, 1, static_cast<int>(left));
    if (rc > 0) return;  // ready, or an error/hang-up the next call reports
    if (rc < 0 && errno != EINTR) {
      throw RelaydError(RelaydError::Kind::kClosed,
                        "relayd " + peer_ + ": poll failed: " + Errno(errno) + " (" + what + ")");
    }
  }
}

void RelaydSocket::Send(const void* data, size_t size, const char* what) {
  const auto deadline = Clock::now() + timeout_;
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = send(fd_, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      Wait(POLLOUT, deadline, what);
    } else if (n < 0 && errno != EINTR) {
      throw RelaydError(RelaydError::Kind::kClosed, "lost the relayd " + peer_ + " while sending " +
                                                        what + ": " + Errno(errno));
    }
  }
}

void RelaydSocket::Receive(void* data, size_t size, const char* what) {
  const auto deadline = Clock::now() + timeout_;
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = recv(fd_, p, size, 0);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
    } else if (n == 0) {
      throw RelaydError(
          RelaydError::Kind::kClosed,
          "relayd " + peer_ + " closed the connection (waiting for the reply to " + what + ")");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Wait(POLLIN, deadline, what);
    } else if (errno != EINTR) {
      throw RelaydError(RelaydError::Kind::kClosed, "lost the relayd " + peer_ +
                                                        " while receiving the reply to " + what +
                                                        ": " + Errno(errno));
    }
  }
}

}  // namespace waitpath
