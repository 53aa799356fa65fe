#include "relayd/relayd_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace waitpath {
namespace {

using Clock = RelaydSocket::Clock;

std::string Errno(int err) {
  return std::strerror(err);
}

}  // namespace

RelaydSocket::RelaydSocket(const std::string& host, uint16_t port,
                           std::chrono::milliseconds timeout, std::chrono::milliseconds lifetime,
                           const std::atomic<bool>* stop)
    : peer_(host + ":" + std::to_string(port)),
      timeout_(timeout),
      lifetime_(lifetime),
      end_(lifetime.count() > 0 ? Clock::now() + lifetime : Clock::time_point::max()),
      stop_(stop) {
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
        if (e.kind() == RelaydError::Kind::kStopped) {
          fd_ = -1;
          close(fd);
          freeaddrinfo(found);
          throw;
        }
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
  // When the request began: every deadline is its start and the timeout.
  const Clock::time_point began = deadline - timeout_;
  const bool lifetime_first = end_ < deadline;
  deadline = std::min(deadline, end_);
  auto stopped = [&] {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) {
      throw RelaydError(RelaydError::Kind::kStopped,
                        "relayd " + peer_ + ": stopped while waiting for it (" + what + ")");
    }
  };
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      const std::string within =
          lifetime_first ? "did not finish within the " + std::to_string(lifetime_.count()) +
                               " ms it was given"
                         : "did not answer within " + std::to_string(timeout_.count()) + " ms";
      throw RelaydError(RelaydError::Kind::kTimeout,
                        "relayd " + peer_ + " " + within + " (" + what + ")");
    }
    if (stop_ != nullptr) left = std::min<decltype(left)>(left, kStopPoll.count());
    pollfd p{fd_, events, 0};
    int rc = poll(&p, 1, static_cast<int>(left));
    if (rc > 0) {
      // Ready, or an error/hang-up the next call reports. A reply that keeps coming in drips
      // is cut short by a stop as one that does not come: a relayd trickling a reply held a
      // stop for the whole timeout (the relayd mutation run, tests/fuzz/relayd_fuzz.cc).
      if (Clock::now() - began >= kStopPoll) stopped();
      return;
    }
    if (rc < 0 && errno != EINTR) {
      throw RelaydError(RelaydError::Kind::kClosed,
                        "relayd " + peer_ + ": poll failed: " + Errno(errno) + " (" + what + ")");
    }
    // Looked at only once the relayd has made us wait: what it answers at once is not cut
    // short (a relayd refusing the connection stays the same one line, stop or not).
    stopped();
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
  Receive(data, size, what, ReplyDeadline());
}

void RelaydSocket::Receive(void* data, size_t size, const char* what, Clock::time_point deadline) {
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
