#include "tools/replay/replay_pacer.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace waitpath {
namespace {

// Below this, sleeping costs more than it saves (a syscall and a timer slack of ~50 us).
constexpr int64_t kMinSleepNs = 20'000;
// Sleeps are sliced so that SIGINT/SIGTERM (which only raise a flag) stop us promptly even
// when the signal is delivered to another thread (lttng-ust and the reader have their own).
constexpr int64_t kMaxSleepNs = 50'000'000;

}  // namespace

int64_t ReplayPacer::MonotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void ReplayPacer::Start(int64_t first_ts, int64_t now_ns) {
  started_ = true;
  first_ts_ = first_ts;
  start_ns_ = now_ns;
}

int64_t ReplayPacer::DueAfterNs(int64_t ts) const {
  if (speed_ <= 0 || ts <= first_ts_) return 0;
  return static_cast<int64_t>(std::llround(static_cast<double>(ts - first_ts_) / speed_));
}

bool ReplayPacer::WaitUntilDue(int64_t ts, const std::atomic<bool>& stop) {
  if (stop.load(std::memory_order_relaxed)) return false;
  if (speed_ <= 0) return true;
  if (!started_) {
    Start(ts, MonotonicNs());
    // For latency measurements downstream: the wall-clock instant the first event is due.
    if (std::getenv("WAITPATH_REPLAY_ANNOUNCE")) {
      const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
      std::fprintf(
          stderr,
          "waitpath-replay: host %s: first event at trace time %lld due at wall %lld speed %g\n",
          std::getenv("WAITPATH_REPLAY_ANNOUNCE"), static_cast<long long>(ts),
          static_cast<long long>(wall), speed_);
    }
  }
  const int64_t due = start_ns_ + DueAfterNs(ts);
  for (;;) {
    const int64_t left = due - MonotonicNs();
    if (left < kMinSleepNs) return true;
    const int64_t slice = std::min(left, kMaxSleepNs);
    const timespec t{static_cast<time_t>(slice / 1'000'000'000),
                     static_cast<long>(slice % 1'000'000'000)};
    nanosleep(&t, nullptr);
    if (stop.load(std::memory_order_relaxed)) return false;
  }
}

}  // namespace waitpath
