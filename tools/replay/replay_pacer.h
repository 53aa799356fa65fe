// Decides when each replayed event is due: at its original pace scaled by a speed factor, or
// at once. Deadlines are absolute (from the first event), so a slow stretch is caught up on
// instead of accumulating delay.
#pragma once

#include <atomic>
#include <cstdint>

namespace waitpath {

class ReplayPacer {
 public:
  // speed > 0: trace time runs `speed` times faster than real time; speed <= 0: as fast as
  // possible.
  explicit ReplayPacer(double speed) : speed_(speed) {}

  // Returns once the event at trace time `ts` is due, or false as soon as `stop` is raised.
  bool WaitUntilDue(int64_t ts, const std::atomic<bool>& stop);

  // How long after the first event's emission the event at `ts` is due, in ns (pure).
  int64_t DueAfterNs(int64_t ts) const;

  // The first call fixes the time origin; WaitUntilDue does it implicitly.
  void Start(int64_t first_ts, int64_t now_ns);

  static int64_t MonotonicNs();

 private:
  double speed_;
  bool started_ = false;
  int64_t first_ts_ = 0;
  int64_t start_ns_ = 0;
};

}  // namespace waitpath
