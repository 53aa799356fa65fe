// Clock snapshots (cycles) to ns since the epoch, the clock class's offset cached per class.
#pragma once

#include <babeltrace2/babeltrace.h>

#include <cstdint>

namespace waitpath {

// Streams of a trace share one clock class, so the last class's offset is kept: for the usual
// 1 GHz clocks ns = offset + cycles, without a library call; other frequencies are converted by
// babeltrace2.
class ClockConverter {
 public:
  // What is kept of a clock class.
  struct ClockClass {
    int64_t offset_seconds = 0;
    uint64_t offset_cycles = 0;
    uint64_t frequency = 0;
  };

  // `fallback` is the answer when babeltrace2 cannot convert (out of range).
  int64_t ToNs(const bt_clock_snapshot* snapshot, int64_t fallback) {
    return ToNs(
        bt_clock_snapshot_borrow_clock_class_const(snapshot), bt_clock_snapshot_get_value(snapshot),
        [](const void* clock) { return Describe(static_cast<const bt_clock_class*>(clock)); },
        [&] { return SlowToNs(snapshot, fallback); });
  }

  // The same, for any clock: `clock` identifies the class, `describe(clock)` (a ClockClass) is
  // asked when it differs from the last one, `slow()` converts when the clock is not 1 GHz.
  template <typename Describe, typename Slow>
  int64_t ToNs(const void* clock, uint64_t cycles, Describe&& describe, Slow&& slow) {
    if (clock != clock_) {
      clock_ = clock;
      const ClockClass c = describe(clock);
      simple_ = c.frequency == 1000000000ULL;
      base_ns_ = c.offset_seconds * 1000000000LL + static_cast<int64_t>(c.offset_cycles);
    }
    if (simple_) return base_ns_ + static_cast<int64_t>(cycles);
    return slow();
  }

 private:
  static ClockClass Describe(const bt_clock_class* clock);
  static int64_t SlowToNs(const bt_clock_snapshot* snapshot, int64_t fallback);

  const void* clock_ = nullptr;
  int64_t base_ns_ = 0;
  bool simple_ = false;
};

}  // namespace waitpath
