// What the simulation hands to the CTF writer: compact per-host kernel event records and
// the side tables they point into (tasks, packets, block requests, interrupt names).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/gen/common.h"

namespace waitpath::gen {

enum class EventKind : uint8_t {
  kSchedSwitch,         // a = prev task, b = next task, c = prev_state
  kSchedWaking,         // a = task, b = target cpu
  kSchedWakeup,         // a = task, b = target cpu
  kSchedWakeupNew,      // a = task, b = target cpu
  kSchedProcessFork,    // a = parent task, b = child task
  kSchedProcessExit,    // a = task
  kSchedProcessFree,    // a = task
  kSchedProcessWait,    // a = waiting task, c = tid waited for
  kIrqHandlerEntry,     // a = irq, b = irq name index
  kIrqHandlerExit,      // a = irq, b = ret
  kSoftirqEntry,        // a = vec
  kSoftirqExit,         // a = vec
  kSoftirqRaise,        // a = vec
  kHrtimerExpireEntry,  // c = hrtimer address, b = HrtimerFunction
  kHrtimerExpireExit,   // c = hrtimer address
  kBlockRqIssue,        // a = task, c = block request index
  kBlockRqComplete,     // c = block request index
  kNetDevQueue,         // c = packet index
  kNetIfReceiveSkb,     // c = packet index
  kStatedumpStart,
  kStatedumpProcessState,  // a = task, b = status, c = cpu
  kStatedumpEnd,
  // Application spans, written to the host's UST trace (a = task, c = span index).
  kSpanBegin,
  kSpanEnd,
  kSpanHandoff,
  kCount,
};

enum HrtimerFunction : int32_t { kHrtimerWakeup = 0, kTickSchedTimer = 1 };

// 32 bytes: 10 M of them fit comfortably in memory.
struct TraceRecord {
  Ns t;  // true time
  uint16_t cpu;
  EventKind kind;
  uint8_t pad = 0;
  int32_t a = 0;
  int32_t b = 0;
  int64_t c = 0;
};

struct TaskInfo {
  std::string name;  // scenario name ("" for idle tasks)
  std::string comm;
  int host = 0;
  int32_t tid = 0;
  int32_t pid = 0;
  int32_t ppid = 0;
  int32_t prio = 20;    // LTTng reports p->prio - MAX_RT_PRIO: 20 for a nice-0 task
  int32_t parent = -1;  // fork link: task index of the parent for forked tasks
  bool idle = false;
  bool forked = false;
  bool kernel = false;  // a kernel thread the simulator runs itself (threaded NAPI poller)
  bool watched = false;
};

struct PacketInfo {
  std::array<uint8_t, 4> saddr{};
  std::array<uint8_t, 4> daddr{};
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint32_t seq = 0;
  uint32_t ack_seq = 0;
  uint16_t flags = 0;  // TCP flags (9 bits)
  uint16_t ip_id = 0;
  uint16_t payload = 0;
  uint16_t ip_checksum = 0;
  uint16_t tcp_checksum = 0;
  uint64_t tx_skbaddr = 0;
  uint64_t rx_skbaddr = 0;
  int32_t sender_task = -1;  // -1 for ACKs sent from softirq context
  int src_host = 0;
  int dst_host = 0;
  Ns sent = 0;     // true time of net_dev_queue
  Ns arrived = 0;  // true time of net_if_receive_skb
};

struct BlockRequest {
  uint32_t dev = 0;
  uint64_t sector = 0;
  uint32_t nr_sector = 0;
  uint32_t bytes = 0;
  uint32_t rwbs = 0;
  int32_t task = -1;
};

// An application span (script steps `span NAME`, `end_span`, `handoff TASK`).
struct SpanInfo {
  uint64_t id = 0;
  uint64_t trace_hi = 0, trace_lo = 0;
  uint64_t parent = 0;  // 0: a root span
  std::string name;
  int host = 0;
  int32_t task = -1;  // began it
  Ns begin = 0;
  Ns end = -1;  // -1: never ended
  // Each handoff and the end: the task that emitted it and when. The piece of the span before
  // each follows that task's path (docs/requests.md).
  std::vector<std::pair<int32_t, Ns>> marks;
};

struct HostTrace {
  std::vector<TraceRecord> records;  // in emission order; the writer sorts per CPU
  std::vector<std::string> irq_names;
};

}  // namespace waitpath::gen
