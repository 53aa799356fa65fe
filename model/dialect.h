// What the event classes of a host's traces say about who wrote them (docs/reading.md,
// "Dialects"). Learnt by the decoder, carried in each batch's ReaderCounters, read by the
// engine: kept apart from the decoder so that its readers need no babeltrace2.
#pragma once

#include <cstdint>
#include <string>

namespace waitpath {

enum DialectFlags : uint32_t {
  kDialectPerf = 1u << 0,           // perf data convert --to-ctf ("sched:sched_switch")
  kDialectLttngModern = 1u << 1,    // LTTng >= 2.7 names (irq_softirq_entry, timer_hrtimer_*)
  kDialectLttngLegacy = 1u << 2,    // LTTng < 2.7 names (softirq_entry, hrtimer_*)
  kDialectSeedAddons = 1u << 3,     // sched_ttwu, inet_sock_local_in/out
  kDialectHasWaking = 1u << 4,      // sched_waking (waker's context) is available
  kDialectHasSwitch = 1u << 5,      // sched_switch present: the trace can be analysed
  kDialectNetworkHeader = 1u << 6,  // LTTng >= 2.9 net events with network_header
  kDialectReplayed = 1u << 7,       // events re-emitted by the UST replayer
  // kmod/ waitpath_tcp_send/recv: the host's TCP packets come from them (socket level, inside
  // any overlay); its net_dev_queue/netif_receive_skb then carry no TCP key, so that a packet
  // is not counted twice.
  kDialectKmodTcp = 1u << 8,
  kDialectKmodCgroup = 1u << 9,  // kmod/ waitpath_cgroup_attach, waitpath_statedump_cgroup
};

// Human-readable summary of DialectFlags, e.g. "lttng>=2.7 +sched_waking".
inline std::string DialectName(uint32_t flags) {
  std::string s;
  if (flags & kDialectReplayed) s += "replayed ";
  if (flags & kDialectPerf) {
    s += "perf";
  } else if (flags & kDialectLttngModern) {
    s += "lttng>=2.7";
  } else if (flags & kDialectLttngLegacy) {
    s += "lttng<2.7";
  } else if (flags & kDialectHasSwitch) {
    s += "lttng";
  } else {
    return "unknown (no kernel scheduler events)";
  }
  if (flags & kDialectNetworkHeader) s += " +network_header";
  if (flags & kDialectSeedAddons) s += " +seed-addons";
  if (flags & kDialectKmodTcp) s += " +kmod-tcp";
  if (flags & kDialectKmodCgroup) s += " +kmod-cgroup";
  s += (flags & kDialectHasWaking) ? " +sched_waking" : " sched_wakeup-only";
  if (!(flags & kDialectHasSwitch)) s += " (no sched_switch)";
  return s;
}

}  // namespace waitpath
