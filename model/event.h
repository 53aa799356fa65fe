// The decoded kernel event: the small POD that flows from the readers to the engine.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

namespace waitpath {

// What an event means, independent of the trace dialect that spelled it. Its fields are in
// Event::a..x, named per kind by the views of model/event_views.h.
enum class EventKind : uint8_t {
  kSchedSwitch,
  kSchedWaking,  // runs in the waker's context (LTTng >= 2.8, perf)
  kSchedWakeup,  // may run on the target CPU (a weaker source when sched_waking exists)
  kSchedTtwu,    // seed-era addon "try to wake up", waker's context
  kSchedWakeupNew,
  kProcessFork,
  kProcessExit,
  kProcessFree,
  kIrqEntry,
  kIrqExit,
  kSoftirqEntry,
  kSoftirqExit,
  kSoftirqRaise,
  kHrtimerEntry,
  kHrtimerExit,
  kIpiEntry,
  kIpiExit,
  kPacketOut,
  kPacketIn,
  kBlockIssue,
  kBlockComplete,
  kStatedumpProcess,
  kLost,    // data loss on the event's CPU
  kCgroup,  // a task's cgroup: moved there (kmod waitpath_cgroup_attach) or in a state dump
  // Application spans (LTTng-UST waitpath_span:*, jaeger_ust:*), in the emitting thread.
  kSpanBegin,
  kSpanEnd,
  kSpanHandoff,  // the emitting thread takes the request over
  kCount
};

inline constexpr int kEventKindCount = static_cast<int>(EventKind::kCount);

// Stable lower-case names, used by `stats` and JSON output.
std::string_view EventKindName(EventKind kind);

// Which interrupt vector an IPI entry/exit belongs to; the local timer is a timer, not an IPI.
enum IpiType : int32_t {
  kIpiOther = 0,
  kIpiCallFunction = 1,
  kIpiReschedule = 2,
  kIpiLocalTimer = 3
};

// Interrupt-context bits of perf's `common_flags` (kernel trace_flag_type), kept in
// Event::ctx. kCtxKnown says the dialect carried them at all.
enum CtxFlags : uint8_t {
  kCtxHardirq = 0x08,
  kCtxSoftirq = 0x10,
  kCtxNmi = 0x40,
  kCtxKnown = 0x80
};

// Whether an event's own flags say it ran in interrupt context (false when not carried).
constexpr bool InterruptByFlags(uint8_t ctx) {
  return (ctx & kCtxKnown) && (ctx & (kCtxHardirq | kCtxSoftirq | kCtxNmi));
}

struct Event {
  int64_t ts;     // ns since the epoch, per-host monotonic (regressions clamped)
  uint16_t host;  // dense host id
  uint16_t cpu;
  EventKind kind;
  uint8_t ctx;  // CtxFlags
  uint16_t reserved;
  int32_t cur_tid;  // task current on the CPU when the dialect says so (perf), else -1
  int32_t cur_pid;  // its process id when known, else -1
  // Per-kind fields: read and write them through the views of model/event_views.h, which
  // say what each holds for each kind.
  int32_t a, b, c, d;
  int64_t x;
};
static_assert(sizeof(Event) == 48, "keep the decoded event small");
static_assert(std::is_trivially_copyable_v<Event> && std::is_standard_layout_v<Event>,
              "a POD: batches copy events by value across threads");

// A TCP/IP packet's identity, for matching a send with its receive. Fields a dialect
// does not carry are zero (has_* tell which).
struct PacketKey {
  uint32_t saddr = 0, daddr = 0;  // IPv4, host byte order
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack_seq = 0;
  uint16_t flags = 0;
  // IP total length: the same on both sides, and it tells a pure ACK from the data segment
  // that follows it with the very same seq/ack_seq/flags. 0 when not carried.
  uint16_t ip_len = 0;
  bool has_addresses = false;
  bool has_tcp = false;
};

// What a span's begin carries that does not fit an Event: its W3C/Jaeger trace id (the 16
// bytes as two big-endian halves) and its parent's span id (0: a root span).
struct SpanIds {
  uint64_t trace_hi = 0, trace_lo = 0;
  uint64_t parent = 0;
};

// Whether a TCP packet goes from a client to a server: from an ephemeral port (Linux's default
// range starts at 32768: net.ipv4.ip_local_port_range) to a lower one, a listening port. A
// task woken by such a packet was awaiting a request (docs/analyze.md, "Idle waits"). False
// when the ports do not say (both low, both high, no TCP header).
constexpr bool RequestToServer(const PacketKey& key) {
  return key.has_tcp && key.sport >= 32768 && key.dport < 32768;
}

// Hash of a packet's TCP key (has_tcp must be set): the same on the sending and the
// receiving side, so both packet matchers key their tables with it.
uint64_t TcpKeyHash(const PacketKey& key);

}  // namespace waitpath
