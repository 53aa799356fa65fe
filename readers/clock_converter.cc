#include "readers/clock_converter.h"

namespace waitpath {

ClockConverter::ClockClass ClockConverter::Describe(const bt_clock_class* clock) {
  ClockClass c;
  bt_clock_class_get_offset(clock, &c.offset_seconds, &c.offset_cycles);
  c.frequency = bt_clock_class_get_frequency(clock);
  return c;
}

int64_t ClockConverter::SlowToNs(const bt_clock_snapshot* snapshot, int64_t fallback) {
  int64_t ns = 0;
  if (bt_clock_snapshot_get_ns_from_origin(snapshot, &ns) !=
      BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
    bt_current_thread_clear_error();
    return fallback;
  }
  return ns;
}

}  // namespace waitpath
