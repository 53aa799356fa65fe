#include "model/event_schema.h"

#include "model/replay_format.h"

namespace waitpath {
namespace {

struct KindName {
  std::string_view name;
  EventKind kind;
  uint32_t dialect;  // what seeing this name says about the writer
};

constexpr KindName kKindNames[] = {
    {"sched_switch", EventKind::kSchedSwitch, kDialectHasSwitch},
    {"sched:sched_switch", EventKind::kSchedSwitch, kDialectHasSwitch | kDialectPerf},
    {"sched_waking", EventKind::kSchedWaking, kDialectHasWaking},
    {"sched:sched_waking", EventKind::kSchedWaking, kDialectHasWaking | kDialectPerf},
    {"sched_wakeup", EventKind::kSchedWakeup, 0},
    {"sched:sched_wakeup", EventKind::kSchedWakeup, kDialectPerf},
    {"sched_ttwu", EventKind::kSchedTtwu, kDialectSeedAddons},
    {"sched_wakeup_new", EventKind::kSchedWakeupNew, 0},
    {"sched:sched_wakeup_new", EventKind::kSchedWakeupNew, kDialectPerf},
    {"sched_process_fork", EventKind::kProcessFork, 0},
    {"sched:sched_process_fork", EventKind::kProcessFork, kDialectPerf},
    {"sched_process_exit", EventKind::kProcessExit, 0},
    {"sched:sched_process_exit", EventKind::kProcessExit, kDialectPerf},
    {"sched_process_free", EventKind::kProcessFree, 0},
    {"sched:sched_process_free", EventKind::kProcessFree, kDialectPerf},
    {"irq_handler_entry", EventKind::kIrqEntry, 0},
    {"irq:irq_handler_entry", EventKind::kIrqEntry, kDialectPerf},
    {"irq_handler_exit", EventKind::kIrqExit, 0},
    {"irq:irq_handler_exit", EventKind::kIrqExit, kDialectPerf},
    {"irq_softirq_entry", EventKind::kSoftirqEntry, kDialectLttngModern},
    {"softirq_entry", EventKind::kSoftirqEntry, kDialectLttngLegacy},
    {"irq:softirq_entry", EventKind::kSoftirqEntry, kDialectPerf},
    {"irq_softirq_exit", EventKind::kSoftirqExit, kDialectLttngModern},
    {"softirq_exit", EventKind::kSoftirqExit, kDialectLttngLegacy},
    {"irq:softirq_exit", EventKind::kSoftirqExit, kDialectPerf},
    {"irq_softirq_raise", EventKind::kSoftirqRaise, kDialectLttngModern},
    {"softirq_raise", EventKind::kSoftirqRaise, kDialectLttngLegacy},
    {"irq:softirq_raise", EventKind::kSoftirqRaise, kDialectPerf},
    {"timer_hrtimer_expire_entry", EventKind::kHrtimerEntry, kDialectLttngModern},
    {"hrtimer_expire_entry", EventKind::kHrtimerEntry, kDialectLttngLegacy},
    {"timer:hrtimer_expire_entry", EventKind::kHrtimerEntry, kDialectPerf},
    {"timer_hrtimer_expire_exit", EventKind::kHrtimerExit, kDialectLttngModern},
    {"hrtimer_expire_exit", EventKind::kHrtimerExit, kDialectLttngLegacy},
    {"timer:hrtimer_expire_exit", EventKind::kHrtimerExit, kDialectPerf},
    {"net_dev_queue", EventKind::kPacketOut, 0},
    {"net:net_dev_queue", EventKind::kPacketOut, kDialectPerf},
    {"inet_sock_local_out", EventKind::kPacketOut, kDialectSeedAddons},
    {"net_if_receive_skb", EventKind::kPacketIn, kDialectLttngModern},
    {"netif_receive_skb", EventKind::kPacketIn, kDialectLttngLegacy},
    {"net:netif_receive_skb", EventKind::kPacketIn, kDialectPerf},
    {"inet_sock_local_in", EventKind::kPacketIn, kDialectSeedAddons},
    {"waitpath_tcp_send", EventKind::kPacketOut, kDialectKmodTcp},
    {"waitpath_tcp_recv", EventKind::kPacketIn, kDialectKmodTcp},
    {"waitpath_cgroup_attach", EventKind::kCgroup, kDialectKmodCgroup},
    {"waitpath_statedump_cgroup", EventKind::kCgroup, kDialectKmodCgroup},
    {"block_rq_issue", EventKind::kBlockIssue, 0},
    {"block:block_rq_issue", EventKind::kBlockIssue, kDialectPerf},
    {"block_rq_complete", EventKind::kBlockComplete, 0},
    {"block:block_rq_complete", EventKind::kBlockComplete, kDialectPerf},
    {"lttng_statedump_process_state", EventKind::kStatedumpProcess, 0},
    // Application spans (LTTng-UST): waitpath's own provider (include/waitpath/span.h) and
    // jaeger-go-lttng-instr's.
    {"waitpath_span:begin", EventKind::kSpanBegin, 0},
    {"waitpath_span:end", EventKind::kSpanEnd, 0},
    {"waitpath_span:handoff", EventKind::kSpanHandoff, 0},
    {"jaeger_ust:start_span", EventKind::kSpanBegin, 0},
    {"jaeger_ust:end_span", EventKind::kSpanEnd, 0},
};

// x86 interrupt vectors: LTTng "x86_irq_vectors_<name>_entry", perf "irq_vectors:<name>_entry".
bool MatchIpi(std::string_view name, EventKind* kind, int32_t* type) {
  std::string_view rest;
  if (name.starts_with("x86_irq_vectors_")) {
    rest = name.substr(16);
  } else if (name.starts_with("irq_vectors:")) {
    rest = name.substr(12);
  } else {
    return false;
  }
  if (rest.ends_with("_entry")) {
    *kind = EventKind::kIpiEntry;
    rest.remove_suffix(6);
  } else if (rest.ends_with("_exit")) {
    *kind = EventKind::kIpiExit;
    rest.remove_suffix(5);
  } else {
    return false;
  }
  if (rest == "local_timer") {
    *type = kIpiLocalTimer;
  } else if (rest == "reschedule") {
    *type = kIpiReschedule;
  } else if (rest.starts_with("call_function")) {
    *type = kIpiCallFunction;
  } else {
    *type = kIpiOther;
  }
  return true;
}

}  // namespace

uint32_t DialectOfName(std::string_view name) {
  // Known before the first replayed event is read, so that nothing else sets the host's clock.
  if (name == kReplayEventName) return kDialectReplayed;
  for (const KindName& k : kKindNames) {
    if (k.name == name) return k.dialect;
  }
  if (name.starts_with("sched:") || name.starts_with("irq:")) return kDialectPerf;
  return 0;
}

bool KindOfName(std::string_view name, EventKind* kind, int32_t* ipi_type) {
  *ipi_type = 0;
  for (const KindName& k : kKindNames) {
    if (k.name == name) {
      *kind = k.kind;
      return true;
    }
  }
  return MatchIpi(name, kind, ipi_type);
}

}  // namespace waitpath
