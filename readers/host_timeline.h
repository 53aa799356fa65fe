// A host's time as read: it never goes back (a regression is clamped and counted); the first
// and last event times and the watermark follow it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace waitpath {

class HostTimeline {
 public:
  // Clamps `ts` to the host's last time (counting a regression) and makes it the last time.
  int64_t Clamp(int64_t ts) {
    if (ts < last_) {
      ++regressions_;
      ts = last_;
    }
    last_ = ts;
    return ts;
  }
  // An event at `ts`: clamped; the first and last event times and the watermark follow.
  int64_t Event(int64_t ts) {
    ts = Clamp(ts);
    first_event_ = std::min(first_event_, ts);
    last_event_ = ts;
    watermark_ = std::max(watermark_, ts);
    return ts;
  }
  // Nothing earlier than `ts` will come (babeltrace2 inactivity messages).
  void Idle(int64_t ts) { watermark_ = std::max(watermark_, ts); }

  // The host's last time (of an event or a loss marker); min() before anything.
  int64_t last() const { return last_; }
  // Every later event has a time >= this.
  int64_t watermark() const { return watermark_; }
  uint64_t regressions() const { return regressions_; }
  int64_t first_event() const { return first_event_; }  // max() before any event
  int64_t last_event() const { return last_event_; }    // min() before any event

 private:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  int64_t last_ = kMin;
  int64_t watermark_ = kMin;
  int64_t first_event_ = std::numeric_limits<int64_t>::max();
  int64_t last_event_ = kMin;
  uint64_t regressions_ = 0;
};

}  // namespace waitpath
