#include "model/event.h"

namespace waitpath {

std::string_view EventKindName(EventKind kind) {
  static constexpr std::string_view kNames[] = {
      "sched_switch",   "sched_waking",      "sched_wakeup",  "sched_ttwu",    "sched_wakeup_new",
      "process_fork",   "process_exit",      "process_free",  "irq_entry",     "irq_exit",
      "softirq_entry",  "softirq_exit",      "softirq_raise", "hrtimer_entry", "hrtimer_exit",
      "ipi_entry",      "ipi_exit",          "packet_out",    "packet_in",     "block_issue",
      "block_complete", "statedump_process", "lost",          "cgroup",        "span_begin",
      "span_end",       "span_handoff"};
  static_assert(std::size(kNames) == kEventKindCount);
  const auto i = static_cast<size_t>(kind);
  return i < std::size(kNames) ? kNames[i] : "invalid";
}

uint64_t TcpKeyHash(const PacketKey& key) {
  uint64_t h = (static_cast<uint64_t>(key.seq) << 32) | key.ack_seq;
  h ^= static_cast<uint64_t>(key.flags) * 0x9e3779b97f4a7c15ULL;
  if (key.has_addresses) {
    h ^= ((static_cast<uint64_t>(key.saddr) << 32) | key.daddr) * 0xc2b2ae3d27d4eb4fULL;
    h ^= ((static_cast<uint64_t>(key.sport) << 16) | key.dport |
          (static_cast<uint64_t>(key.ip_len) << 32)) *
         0x165667b19e3779f9ULL;
  }
  return h;
}

}  // namespace waitpath
