#include "live/event.h"

namespace waitpath {

std::string_view EventKindName(EventKind kind) {
  static constexpr std::string_view kNames[] = {
      "sched_switch",  "sched_waking",   "sched_wakeup",     "sched_ttwu",
      "sched_wakeup_new", "process_fork", "process_exit",    "process_free",
      "irq_entry",     "irq_exit",       "softirq_entry",    "softirq_exit",
      "softirq_raise", "hrtimer_entry",  "hrtimer_exit",     "ipi_entry",
      "ipi_exit",      "packet_out",     "packet_in",        "block_issue",
      "block_complete", "statedump_process", "lost"};
  static_assert(std::size(kNames) == kEventKindCount);
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "invalid";
}

}  // namespace waitpath
