// Named views of an Event's per-kind fields: the one place that says what Event::a, b, c, d
// and x hold for each kind.
//
// A view is a reference to the event and nothing else: `AsSchedSwitch(e).next_tid()` compiles
// to a read of `e.b`. Each accessor returns a reference to its slot, const over a const Event
// (readers) and assignable over an Event (writers: `AsSchedSwitch(e).next_tid() = tid`). The
// decoder uses the same views over its per-class field locations, and the replayer over its
// records (any record with members a, b, c, d, x), so that a field is mapped to its slot here
// only.
//
// Conventions: an int32 field the dialect does not carry is -1, an int64 one 0 (MakeEvent);
// names (comm, irq names) are StringTable ids; tids of 0 are the idle task.
#pragma once

#include <cassert>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "model/event.h"

namespace waitpath {

// sched_switch: `prev` leaves the CPU, `next` takes it.
template <class E>
struct SchedSwitchView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kSchedSwitch; }
  E& e;
  auto& prev_tid() const { return e.a; }
  auto& next_tid() const { return e.b; }
  auto& prev_comm() const { return e.c; }
  auto& next_comm() const { return e.d; }
  // The kernel's task state bits (the engine's OnSchedSwitch says how it reads them).
  auto& prev_state() const { return e.x; }
};

// sched_waking, sched_wakeup, seed-era sched_ttwu, sched_wakeup_new: `tid` is made runnable.
template <class E>
struct WakeView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kSchedWaking || k == EventKind::kSchedWakeup ||
           k == EventKind::kSchedTtwu || k == EventKind::kSchedWakeupNew;
  }
  E& e;
  auto& tid() const { return e.a; }
  auto& target_cpu() const { return e.b; }
  auto& comm() const { return e.c; }
};

// sched_process_fork, in the parent's context.
template <class E>
struct ForkView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kProcessFork; }
  E& e;
  auto& parent_tid() const { return e.a; }
  auto& child_tid() const { return e.b; }
  auto& child_comm() const { return e.c; }
  auto& child_pid() const { return e.d; }  // its process (tgid); LTTng only
};

// sched_process_exit and sched_process_free.
template <class E>
struct ProcessEndView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kProcessExit || k == EventKind::kProcessFree;
  }
  E& e;
  auto& tid() const { return e.a; }
};

template <class E>
struct IrqEntryView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kIrqEntry; }
  E& e;
  auto& irq() const { return e.a; }
  auto& name() const { return e.c; }  // the handler's name, as in /proc/interrupts
};

template <class E>
struct IrqExitView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kIrqExit; }
  E& e;
  auto& irq() const { return e.a; }
  auto& ret() const { return e.b; }
};

// softirq entry, exit and raise.
template <class E>
struct SoftirqView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kSoftirqEntry || k == EventKind::kSoftirqExit ||
           k == EventKind::kSoftirqRaise;
  }
  E& e;
  auto& vec() const { return e.a; }  // Linux softirq vector (NET_RX = 3...)
};

template <class E>
struct HrtimerView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kHrtimerEntry || k == EventKind::kHrtimerExit;
  }
  E& e;
  auto& hrtimer() const { return e.x; }  // the timer's address
};

// x86 interrupt vectors other than device irqs (the event's name gives `type`).
template <class E>
struct IpiView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kIpiEntry || k == EventKind::kIpiExit;
  }
  E& e;
  auto& vector() const { return e.a; }
  auto& type() const { return e.b; }  // IpiType
};

// A packet sent (net_dev_queue, inet_sock_local_out, waitpath_tcp_send) or received
// (netif_receive_skb, inet_sock_local_in, waitpath_tcp_recv).
template <class E>
struct PacketView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kPacketOut || k == EventKind::kPacketIn;
  }
  E& e;
  auto& key() const { return e.a; }  // index of its PacketKey in Batch::packets, -1 if none
  auto& len() const { return e.b; }
  auto& skbaddr() const { return e.x; }  // seed-era addons: the socket's address
};

// block_rq_issue and block_rq_complete.
template <class E>
struct BlockView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kBlockIssue || k == EventKind::kBlockComplete;
  }
  E& e;
  auto& dev() const { return e.a; }
  auto& nr_sector() const { return e.b; }
  auto& sector() const { return e.x; }
};

// LTTng's state dump: one task that existed when tracing started.
template <class E>
struct StatedumpProcessView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kStatedumpProcess; }
  E& e;
  auto& tid() const { return e.a; }
  auto& pid() const { return e.b; }
  auto& name() const { return e.c; }
  auto& status() const { return e.d; }  // kStatedumpWait: asleep
};
inline constexpr int32_t kStatedumpWait = 5;

// A task's cgroup (kmod/): moved there by cgroup_attach_task (with its whole thread group
// when `threadgroup` is 1), or listed by a state dump. Only the default (v2) hierarchy, 0,
// names what waitpath labels by.
template <class E>
struct CgroupView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kCgroup; }
  E& e;
  auto& tid() const { return e.a; }
  auto& pid() const { return e.b; }
  auto& path() const { return e.c; }         // interned
  auto& threadgroup() const { return e.d; }  // 1: every thread of `pid`; -1 not carried
  auto& hierarchy() const { return e.x; }    // cgroup hierarchy id; 0: cgroup v2
};

// An application span event (LTTng-UST), emitted by thread `tid` of process `pid` (the
// vtid/vpid contexts: the tid as the thread's own pid namespace sees it).
template <class E>
struct SpanView {
  static constexpr bool Describes(EventKind k) {
    return k == EventKind::kSpanBegin || k == EventKind::kSpanEnd || k == EventKind::kSpanHandoff;
  }
  E& e;
  auto& tid() const { return e.a; }
  auto& pid() const { return e.b; }
  auto& name() const { return e.c; }     // begin: the operation, interned; -1 otherwise
  auto& ids() const { return e.d; }      // begin: index of its SpanIds in Batch::spans, -1 if none
  auto& span_id() const { return e.x; }  // the 64-bit span id, as signed
};

// Data loss on the event's CPU (not a trace event: readers and the merger make these).
template <class E>
struct LostView {
  static constexpr bool Describes(EventKind k) { return k == EventKind::kLost; }
  E& e;
  auto& count() const { return e.a; }  // events discarded, -1 unknown
  auto& begin() const { return e.x; }  // when the loss began (INT64_MIN: before any event)
};

namespace detail {
// Makes a view of an event (or of the decoder's field locations); checks the kind in debug.
template <template <class> class View>
struct ViewMaker {
  template <class E>
  View<E> operator()(E& e) const {
    if constexpr (requires {
                    { e.kind } -> std::convertible_to<EventKind>;
                  }) {
      assert(View<E>::Describes(e.kind));
    }
    return View<E>{e};
  }
};
}  // namespace detail

inline constexpr detail::ViewMaker<SchedSwitchView> AsSchedSwitch;
inline constexpr detail::ViewMaker<WakeView> AsWake;
inline constexpr detail::ViewMaker<ForkView> AsFork;
inline constexpr detail::ViewMaker<ProcessEndView> AsProcessEnd;
inline constexpr detail::ViewMaker<IrqEntryView> AsIrqEntry;
inline constexpr detail::ViewMaker<IrqExitView> AsIrqExit;
inline constexpr detail::ViewMaker<SoftirqView> AsSoftirq;
inline constexpr detail::ViewMaker<HrtimerView> AsHrtimer;
inline constexpr detail::ViewMaker<IpiView> AsIpi;
inline constexpr detail::ViewMaker<PacketView> AsPacket;
inline constexpr detail::ViewMaker<BlockView> AsBlock;
inline constexpr detail::ViewMaker<StatedumpProcessView> AsStatedumpProcess;
inline constexpr detail::ViewMaker<LostView> AsLost;
inline constexpr detail::ViewMaker<CgroupView> AsCgroup;
inline constexpr detail::ViewMaker<SpanView> AsSpan;

// An event of `kind` with every per-kind field absent and no current task known: what a
// writer starts from before setting fields through a view.
inline Event MakeEvent(EventKind kind, int64_t ts, uint16_t cpu, uint16_t host = 0) {
  Event e{};
  e.ts = ts;
  e.host = host;
  e.cpu = cpu;
  e.kind = kind;
  e.cur_tid = e.cur_pid = -1;
  e.a = e.b = e.c = e.d = -1;
  e.x = 0;
  return e;
}

// Views cost nothing: one reference, copied in registers.
namespace detail {
template <template <class> class... View>
constexpr bool kViewsAreReferences = ((sizeof(View<const Event>) == sizeof(const Event*) &&
                                       std::is_trivially_copyable_v<View<const Event>>)&&...);
}  // namespace detail
static_assert(
    detail::kViewsAreReferences<SchedSwitchView, WakeView, ForkView, ProcessEndView, IrqEntryView,
                                IrqExitView, SoftirqView, HrtimerView, IpiView, PacketView,
                                BlockView, StatedumpProcessView, LostView, CgroupView, SpanView>);

}  // namespace waitpath
