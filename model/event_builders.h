// Events built by name, for tests and benchmarks: each builder sets its kind's fields through
// the views of model/event_views.h; what it does not take is absent (MakeEvent).
#pragma once

#include <cstdint>

#include "model/event_views.h"

namespace waitpath {

inline Event SwitchEvent(int64_t ts, uint16_t cpu, int32_t prev_tid, int32_t next_tid,
                         int64_t prev_state, int32_t prev_comm = -1, int32_t next_comm = -1) {
  Event e = MakeEvent(EventKind::kSchedSwitch, ts, cpu);
  const auto f = AsSchedSwitch(e);
  f.prev_tid() = prev_tid;
  f.next_tid() = next_tid;
  f.prev_state() = prev_state;
  f.prev_comm() = prev_comm;
  f.next_comm() = next_comm;
  return e;
}

// kind: kSchedWaking, kSchedWakeup, kSchedTtwu or kSchedWakeupNew.
inline Event WakeEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t tid, int32_t target_cpu,
                       int32_t comm = -1) {
  Event e = MakeEvent(kind, ts, cpu);
  const auto f = AsWake(e);
  f.tid() = tid;
  f.target_cpu() = target_cpu;
  f.comm() = comm;
  return e;
}

inline Event ForkEvent(int64_t ts, uint16_t cpu, int32_t parent_tid, int32_t child_tid,
                       int32_t child_pid = -1, int32_t child_comm = -1) {
  Event e = MakeEvent(EventKind::kProcessFork, ts, cpu);
  const auto f = AsFork(e);
  f.parent_tid() = parent_tid;
  f.child_tid() = child_tid;
  f.child_pid() = child_pid;
  f.child_comm() = child_comm;
  return e;
}

// kind: kProcessExit or kProcessFree.
inline Event ProcessEndEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t tid) {
  Event e = MakeEvent(kind, ts, cpu);
  AsProcessEnd(e).tid() = tid;
  return e;
}

inline Event IrqEntryEvent(int64_t ts, uint16_t cpu, int32_t irq, int32_t name = -1) {
  Event e = MakeEvent(EventKind::kIrqEntry, ts, cpu);
  AsIrqEntry(e).irq() = irq;
  AsIrqEntry(e).name() = name;
  return e;
}

inline Event IrqExitEvent(int64_t ts, uint16_t cpu, int32_t irq) {
  Event e = MakeEvent(EventKind::kIrqExit, ts, cpu);
  AsIrqExit(e).irq() = irq;
  return e;
}

// kind: kSoftirqEntry, kSoftirqExit or kSoftirqRaise.
inline Event SoftirqEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t vec) {
  Event e = MakeEvent(kind, ts, cpu);
  AsSoftirq(e).vec() = vec;
  return e;
}

// kind: kIpiEntry or kIpiExit.
inline Event IpiEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t vector, IpiType type) {
  Event e = MakeEvent(kind, ts, cpu);
  AsIpi(e).vector() = vector;
  AsIpi(e).type() = type;
  return e;
}

// kind: kPacketOut or kPacketIn; without a key (matched by skbaddr alone, like perf's).
inline Event PacketEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t len, int64_t skbaddr) {
  Event e = MakeEvent(kind, ts, cpu);
  AsPacket(e).len() = len;
  AsPacket(e).skbaddr() = skbaddr;
  return e;
}

// kind: kBlockIssue or kBlockComplete.
inline Event BlockEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t dev, int32_t nr_sector,
                        int64_t sector) {
  Event e = MakeEvent(kind, ts, cpu);
  const auto f = AsBlock(e);
  f.dev() = dev;
  f.nr_sector() = nr_sector;
  f.sector() = sector;
  return e;
}

inline Event StatedumpProcessEvent(int64_t ts, uint16_t cpu, int32_t tid, int32_t pid,
                                   int32_t status, int32_t name = -1) {
  Event e = MakeEvent(EventKind::kStatedumpProcess, ts, cpu);
  const auto f = AsStatedumpProcess(e);
  f.tid() = tid;
  f.pid() = pid;
  f.status() = status;
  f.name() = name;
  return e;
}

// A task's cgroup (kmod/): `threadgroup` 1 moves the whole process, -1 a state dump's.
inline Event CgroupEvent(int64_t ts, uint16_t cpu, int32_t tid, int32_t pid, int32_t path,
                         int32_t threadgroup = -1, int64_t hierarchy = 0) {
  Event e = MakeEvent(EventKind::kCgroup, ts, cpu);
  const auto f = AsCgroup(e);
  f.tid() = tid;
  f.pid() = pid;
  f.path() = path;
  f.threadgroup() = threadgroup;
  f.hierarchy() = hierarchy;
  return e;
}

inline Event LostEvent(int64_t ts, uint16_t cpu, int32_t count, int64_t begin) {
  Event e = MakeEvent(EventKind::kLost, ts, cpu);
  AsLost(e).count() = count;
  AsLost(e).begin() = begin;
  return e;
}

// kind: kSpanBegin, kSpanEnd or kSpanHandoff, emitted by thread `tid`; `ids` indexes the
// batch's SpanIds (begins only, -1: none).
inline Event SpanEvent(EventKind kind, int64_t ts, uint16_t cpu, int32_t tid, uint64_t span_id,
                       int32_t name = -1, int32_t ids = -1, int32_t pid = -1) {
  Event e = MakeEvent(kind, ts, cpu);
  const auto f = AsSpan(e);
  f.tid() = tid;
  f.pid() = pid;
  f.span_id() = static_cast<int64_t>(span_id);
  f.name() = name;
  f.ids() = ids;
  return e;
}

}  // namespace waitpath
