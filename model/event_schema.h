// What both trace decoders (babeltrace2's, readers/event_decoder.h, and the native CTF one,
// live/ctf/) agree on: which event class names mean which EventKind and dialect, which fields of
// each kind fill which Event slot, and how an Event is assembled from those fields. Each decoder
// only says how to find a field by name (once per event class) and how to read it (per event):
// the mapping itself is written here once, so that the two decoders cannot drift apart.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "model/dialect.h"
#include "model/event.h"
#include "model/event_views.h"
#include "model/replay_format.h"

namespace waitpath {

// The kind an event class name means (false: of no use to the analysis). `ipi_type` is set
// for x86 interrupt vectors.
bool KindOfName(std::string_view name, EventKind* kind, int32_t* ipi_type);
// What seeing an event class of this name says about the writer (DialectFlags).
uint32_t DialectOfName(std::string_view name);

// Where a class's fields are looked up: its payload or its stream's event common context.
enum class FieldRoot : uint8_t { kPayload, kCommonContext };
using FieldNames = std::initializer_list<std::string_view>;

// Field names match with or without CTF 1.8's leading underscore (babeltrace2 strips one; older
// writers used none while newer ones name variant options "_ipv4").
inline bool SameFieldName(std::string_view have, std::string_view want) {
  if (have == want) return true;
  return !have.empty() && have.front() == '_' && have.substr(1) == want;
}

// Where each Event slot of one event class comes from, as the decoder's own field reference
// `Ref` (default-constructed: absent; `valid()` says which). The views of event_views.h apply:
// `AsSchedSwitch(fields).next_tid()` is the reference that fills next_tid.
template <class Ref>
struct ClassFields {
  EventKind kind = EventKind::kCount;
  int32_t ipi_type = 0;
  Ref a, b, c, d, x;          // Event's per-kind fields
  Ref cur_tid, cur_pid, ctx;  // current-task context (perf common_*, LTTng contexts)
  // Packet key fields (network_header or seed-era top-level seq/ack_seq/flags).
  Ref saddr, daddr, sport, dport, seq, ack_seq, flags, ip_len;
  Ref trace_hi, trace_lo, parent_span;  // span begins: ids kept in the batch's SpanIds table
  bool stock_packet = false;            // net_dev_queue, netif_receive_skb (not the kmod's)
};

// Locates the fields of event class `name` of `kind`. `find(root, {names...})` returns the Ref
// of the field at that path of struct members / variant options (invalid when absent); a Ref
// has `bool valid()` and `bool is_string()`. Returns dialect flags learnt from the layout.
template <class Ref, class Find>
uint32_t ResolveClassFields(std::string_view name, EventKind kind, int32_t ipi_type, Find&& find,
                            ClassFields<Ref>* info) {
  using R = FieldRoot;
  uint32_t dialect = 0;
  info->kind = kind;
  info->ipi_type = ipi_type;
  auto any = [&](FieldNames names) {
    for (std::string_view n : names) {
      Ref ref = find(R::kPayload, {n});
      if (ref.valid()) return ref;
    }
    return Ref{};
  };
  // The current task: perf writes it into every payload; LTTng only with added contexts.
  info->cur_tid = any({"common_pid", "perf_tid"});
  if (!info->cur_tid.valid()) info->cur_tid = find(R::kCommonContext, {"tid"});
  info->cur_pid = any({"perf_pid"});
  if (!info->cur_pid.valid()) info->cur_pid = find(R::kCommonContext, {"pid"});
  info->ctx = any({"common_flags"});

  switch (kind) {
    case EventKind::kSchedSwitch: {
      const auto f = AsSchedSwitch(*info);
      f.prev_tid() = any({"prev_tid", "prev_pid"});
      f.next_tid() = any({"next_tid", "next_pid"});
      f.prev_comm() = any({"prev_comm"});
      f.next_comm() = any({"next_comm"});
      f.prev_state() = any({"prev_state"});
      break;
    }
    case EventKind::kSchedWaking:
    case EventKind::kSchedWakeup:
    case EventKind::kSchedWakeupNew:
    case EventKind::kSchedTtwu: {
      const auto f = AsWake(*info);
      f.tid() = any({"tid", "pid"});
      f.target_cpu() = any({"target_cpu"});
      f.comm() = any({"comm"});
      break;
    }
    case EventKind::kProcessFork: {
      const auto f = AsFork(*info);
      f.parent_tid() = any({"parent_tid", "parent_pid"});
      f.child_tid() = any({"child_tid", "child_pid"});
      f.child_comm() = any({"child_comm"});
      // LTTng carries both child_tid and child_pid (the tgid); perf's child_pid is the tid.
      if (any({"child_tid"}).valid()) f.child_pid() = any({"child_pid"});
      break;
    }
    case EventKind::kProcessExit:
    case EventKind::kProcessFree:
      AsProcessEnd(*info).tid() = any({"tid", "pid"});
      break;
    case EventKind::kIrqEntry: {
      const auto f = AsIrqEntry(*info);
      f.irq() = any({"irq"});
      f.name() = any({"name"});
      break;
    }
    case EventKind::kIrqExit: {
      const auto f = AsIrqExit(*info);
      f.irq() = any({"irq"});
      f.ret() = any({"ret"});
      break;
    }
    case EventKind::kSoftirqEntry:
    case EventKind::kSoftirqExit:
    case EventKind::kSoftirqRaise:
      AsSoftirq(*info).vec() = any({"vec"});
      break;
    case EventKind::kHrtimerEntry:
    case EventKind::kHrtimerExit:
      AsHrtimer(*info).hrtimer() = any({"hrtimer"});
      break;
    case EventKind::kIpiEntry:
    case EventKind::kIpiExit:
      AsIpi(*info).vector() = any({"vector"});
      break;
    case EventKind::kPacketOut:
    case EventKind::kPacketIn: {
      const auto f = AsPacket(*info);
      f.skbaddr() = any({"skbaddr", "sk"});
      f.len() = any({"len"});
      // LTTng >= 2.9: network_header variant -> ipv4 -> transport_header variant -> tcp.
      info->saddr = find(R::kPayload, {"network_header", "ipv4", "saddr"});
      info->daddr = find(R::kPayload, {"network_header", "ipv4", "daddr"});
      info->ip_len = find(R::kPayload, {"network_header", "ipv4", "tot_len"});
      auto tcp = [&](std::string_view field) {
        return find(R::kPayload, {"network_header", "ipv4", "transport_header", "tcp", field});
      };
      info->sport = tcp("source_port");
      info->dport = tcp("dest_port");
      info->seq = tcp("seq");
      info->ack_seq = tcp("ack_seq");
      info->flags = tcp("flags");
      info->stock_packet = name.starts_with("net") || name.starts_with("net:");
      if (info->seq.valid()) {
        dialect |= kDialectNetworkHeader;
      } else if (name.starts_with("waitpath_tcp_")) {
        // kmod/: the socket-level packet's headers at the top level, keyed like the above.
        info->saddr = any({"saddr"});
        info->daddr = any({"daddr"});
        info->sport = any({"sport"});
        info->dport = any({"dport"});
        info->seq = any({"seq"});
        info->ack_seq = any({"ack_seq"});
        info->flags = any({"flags"});
        info->ip_len = any({"tot_len"});
      } else {
        // Seed-era inet_sock_local_in/out: TCP fields at the top level, no addresses.
        info->seq = any({"seq"});
        info->ack_seq = any({"ack_seq"});
        info->flags = any({"flags"});
      }
      break;
    }
    case EventKind::kBlockIssue:
    case EventKind::kBlockComplete: {
      const auto f = AsBlock(*info);
      f.dev() = any({"dev"});
      f.nr_sector() = any({"nr_sector"});
      f.sector() = any({"sector"});
      break;
    }
    case EventKind::kCgroup: {
      const auto f = AsCgroup(*info);
      f.tid() = any({"tid"});
      f.pid() = any({"pid"});
      f.path() = any({"path"});
      f.threadgroup() = any({"threadgroup"});
      f.hierarchy() = any({"hierarchy"});
      break;
    }
    case EventKind::kSpanBegin:
    case EventKind::kSpanEnd:
    case EventKind::kSpanHandoff: {
      // The thread is the UST vtid/vpid context (lttng add-context -u -t vtid -t vpid), in the
      // stream's event context; tid/pid contexts are accepted too. A span event never says
      // which task is current for the engine: the UST stream is not the kernel's CPU stream.
      info->cur_tid = info->cur_pid = Ref{};
      const auto f = AsSpan(*info);
      f.tid() = find(R::kCommonContext, {"vtid"});
      if (!f.tid().valid()) f.tid() = find(R::kCommonContext, {"tid"});
      f.pid() = find(R::kCommonContext, {"vpid"});
      if (!f.pid().valid()) f.pid() = find(R::kCommonContext, {"pid"});
      f.span_id() = any({"span_id"});
      if (kind == EventKind::kSpanBegin) {
        f.name() = any({"name", "op_name"});
        info->trace_hi = any({"trace_id_high"});
        info->trace_lo = any({"trace_id_low"});
        info->parent_span = any({"parent_span_id"});
      }
      break;
    }
    case EventKind::kStatedumpProcess: {
      const auto f = AsStatedumpProcess(*info);
      f.tid() = any({"tid"});
      f.pid() = any({"pid"});
      f.name() = any({"name"});
      f.status() = any({"status"});
      break;
    }
    default:
      break;
  }
  return dialect;
}

// Assembles `out` (all but ts, host and cpu) from one event's fields. `read` gives, for a Ref:
// `Int(ref, fallback)` (fallback when absent or not an integer), `Str(ref)` (an interned name,
// -1 when absent or not a string), `Has(ref)` (the field is there: a variant may not have
// selected it) and `Address(ref)` (an IPv4 address, from an integer or a 4-byte array).
// A span begin's trace and parent ids go to `spans` (when given; ids -1 otherwise).
template <class Ref, class Read>
void BuildEvent(const ClassFields<Ref>& info, Read& read, uint32_t dialect, Event& out,
                std::vector<PacketKey>& packets, std::vector<SpanIds>* spans = nullptr) {
  auto num = [&](const Ref& ref, int64_t fallback) {
    return ref.valid() ? read.Int(ref, fallback) : fallback;
  };
  auto slot = [&](const Ref& ref) {
    return ref.is_string() ? read.Str(ref) : static_cast<int32_t>(num(ref, -1));
  };
  out.kind = info.kind;
  out.cur_tid = static_cast<int32_t>(num(info.cur_tid, -1));
  out.cur_pid = static_cast<int32_t>(num(info.cur_pid, -1));
  out.ctx = info.ctx.valid()
                ? static_cast<uint8_t>((num(info.ctx, 0) & (kCtxHardirq | kCtxSoftirq | kCtxNmi)) |
                                       kCtxKnown)
                : 0;
  out.reserved = 0;
  // The per-kind fields, slot for slot as ResolveClassFields located them through the views.
  out.a = static_cast<int32_t>(num(info.a, -1));
  out.b = static_cast<int32_t>(num(info.b, -1));
  out.c = slot(info.c);
  out.d = slot(info.d);
  out.x = num(info.x, 0);

  switch (info.kind) {
    case EventKind::kIpiEntry:
    case EventKind::kIpiExit:
      AsIpi(out).type() = info.ipi_type;
      break;
    case EventKind::kPacketOut:
    case EventKind::kPacketIn:
      AsPacket(out).key() = -1;
      // With the kmod's socket-level events the host's stock net events key nothing: one
      // source of packets per host, each packet counted once.
      if (info.stock_packet && (dialect & kDialectKmodTcp)) break;
      if (info.seq.valid() && read.Has(info.seq)) {
        PacketKey key;
        key.has_tcp = true;
        key.seq = static_cast<uint32_t>(read.Int(info.seq, 0));
        key.ack_seq = static_cast<uint32_t>(num(info.ack_seq, 0));
        key.flags = static_cast<uint16_t>(num(info.flags, 0));
        if (info.saddr.valid()) {
          key.has_addresses = true;
          key.saddr = read.Address(info.saddr);
          key.daddr = info.daddr.valid() ? read.Address(info.daddr) : 0;
          key.sport = static_cast<uint16_t>(num(info.sport, 0));
          key.dport = static_cast<uint16_t>(num(info.dport, 0));
          key.ip_len = static_cast<uint16_t>(num(info.ip_len, 0));
        }
        AsPacket(out).key() = static_cast<int32_t>(packets.size());
        packets.push_back(key);
      }
      break;
    case EventKind::kSpanBegin:
      AsSpan(out).ids() = -1;
      if (spans) {
        AsSpan(out).ids() = static_cast<int32_t>(spans->size());
        spans->push_back(SpanIds{static_cast<uint64_t>(num(info.trace_hi, 0)),
                                 static_cast<uint64_t>(num(info.trace_lo, 0)),
                                 static_cast<uint64_t>(num(info.parent_span, 0))});
      }
      break;
    default:
      break;
  }
}

// ---- The replay dialect: waitpath_replay:event's flat payload (model/replay_format.h) ----

enum class ReplayField : uint8_t {
  kFormatVersion,
  kOrigTs,
  kCpu,
  kKind,
  kCtx,
  kCurTid,
  kCurPid,
  kA,
  kB,
  kC,
  kD,
  kCStr,
  kDStr,
  kX,
  kDialect,
  kHasKey,
  kHasAddresses,
  kSaddr,
  kDaddr,
  kSport,
  kDport,
  kSeq,
  kAckSeq,
  kTcpFlags,
  kIpLen,
  // Format 2 on (span begins); absent from version-1 classes, read as 0 there.
  kHasSpanIds,
  kTraceHi,
  kTraceLo,
  kParentSpan,
  kCount
};
inline constexpr int kReplayFieldCount = static_cast<int>(ReplayField::kCount);

// Payload member names, in ReplayField order.
inline constexpr std::array<std::string_view, kReplayFieldCount> kReplayFieldNames = {
    "format_version",
    "orig_ts",
    "cpu",
    "kind",
    "ctx",
    "cur_tid",
    "cur_pid",
    "a",
    "b",
    "c",
    "d",
    "c_str",
    "d_str",
    "x",
    "dialect",
    "has_key",
    "has_addresses",
    "saddr",
    "daddr",
    "sport",
    "dport",
    "seq",
    "ack_seq",
    "tcp_flags",
    "ip_len",
    "has_span_ids",
    "trace_hi",
    "trace_lo",
    "parent_span"};

inline bool ReplayFieldIsString(int f) {
  return f == static_cast<int>(ReplayField::kCStr) || f == static_cast<int>(ReplayField::kDStr);
}

// A class without this member is still a replay class (of an older format version).
inline bool ReplayFieldIsOptional(int f) {
  return f >= static_cast<int>(ReplayField::kHasSpanIds);
}

// A replayed event already is an Event: copies it over from `get(field)` (integers) and
// `str(field)` (interned names), re-creating its packet key in this batch's table and a span
// begin's ids in `spans` (when given). False for a record this version does not understand.
// ORs the original host's dialect into `dialect`. `get` of a member the class lacks is 0.
template <class Get, class Str>
bool BuildReplayedEvent(Get&& get, Str&& str, Event& out, std::vector<PacketKey>& packets,
                        uint32_t* dialect, std::vector<SpanIds>* spans = nullptr) {
  using F = ReplayField;
  // A record of another format version may mean other things by the same names; version 1
  // differs only for span begins (below).
  const int64_t version = get(F::kFormatVersion);
  if (version < kReplayFormatOldestVersion || version > kReplayFormatVersion) return false;
  const int64_t kind = get(F::kKind);
  if (kind < 0 || kind >= kEventKindCount) return false;
  out.kind = static_cast<EventKind>(kind);
  out.ts = get(F::kOrigTs);
  out.cpu = static_cast<uint16_t>(get(F::kCpu));
  out.ctx = static_cast<uint8_t>(get(F::kCtx));
  out.reserved = 0;
  out.cur_tid = static_cast<int32_t>(get(F::kCurTid));
  out.cur_pid = static_cast<int32_t>(get(F::kCurPid));
  out.a = static_cast<int32_t>(get(F::kA));
  out.b = static_cast<int32_t>(get(F::kB));
  out.c = static_cast<int32_t>(get(F::kC));
  out.d = static_cast<int32_t>(get(F::kD));
  out.x = get(F::kX);
  // c/d of -1 say the original had no such name.
  if (out.kind == EventKind::kSpanBegin && version < 2) {
    // Version 1 carried the replayer's own string index as the name, and no ids.
    out.c = -1;
  } else if (ReplayCIsString(out.kind) && out.c >= 0) {
    out.c = str(F::kCStr);
  }
  if (ReplayDIsString(out.kind) && out.d >= 0) out.d = str(F::kDStr);
  if (out.kind == EventKind::kPacketOut || out.kind == EventKind::kPacketIn) {
    AsPacket(out).key() = -1;
    if (get(F::kHasKey)) {
      PacketKey key;
      key.has_tcp = true;
      key.seq = static_cast<uint32_t>(get(F::kSeq));
      key.ack_seq = static_cast<uint32_t>(get(F::kAckSeq));
      key.flags = static_cast<uint16_t>(get(F::kTcpFlags));
      if (get(F::kHasAddresses)) {
        key.has_addresses = true;
        key.saddr = static_cast<uint32_t>(get(F::kSaddr));
        key.daddr = static_cast<uint32_t>(get(F::kDaddr));
        key.sport = static_cast<uint16_t>(get(F::kSport));
        key.dport = static_cast<uint16_t>(get(F::kDport));
        key.ip_len = static_cast<uint16_t>(get(F::kIpLen));
      }
      AsPacket(out).key() = static_cast<int32_t>(packets.size());
      packets.push_back(key);
    }
  }
  if (out.kind == EventKind::kSpanBegin) {
    // Like the packet key: the ids travel, the batch-local index is rebuilt.
    AsSpan(out).ids() = -1;
    if (spans && get(F::kHasSpanIds)) {
      AsSpan(out).ids() = static_cast<int32_t>(spans->size());
      spans->push_back(SpanIds{static_cast<uint64_t>(get(F::kTraceHi)),
                               static_cast<uint64_t>(get(F::kTraceLo)),
                               static_cast<uint64_t>(get(F::kParentSpan))});
    }
  }
  // The original host's dialect decides how the engine reads the events (e.g. whether
  // sched_wakeup is a waker's context), so it travels with every record.
  *dialect |= static_cast<uint32_t>(get(F::kDialect)) | kDialectReplayed;
  return true;
}

}  // namespace waitpath
