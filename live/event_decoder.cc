#include "live/event_decoder.h"

#include <initializer_list>
#include <string_view>

#include "live/event_views.h"
#include "live/replay_format.h"

namespace waitpath {
namespace {

using Names = std::initializer_list<std::string_view>;

bool IsStruct(const bt_field_class* fc) {
  return bt_field_class_get_type(fc) == BT_FIELD_CLASS_TYPE_STRUCTURE;
}
bool IsVariant(const bt_field_class* fc) {
  return bt_field_class_type_is(bt_field_class_get_type(fc), BT_FIELD_CLASS_TYPE_VARIANT);
}

// babeltrace2 already strips CTF 1.8's leading underscore; older writers may not have used one
// while newer ones name options "_ipv4": accept both spellings.
bool SameName(const char* have, std::string_view want) {
  std::string_view h(have ? have : "");
  if (h == want) return true;
  return !h.empty() && h.front() == '_' && h.substr(1) == want;
}

// Finds member or option `name` of `fc`; fills `step` and returns its class.
const bt_field_class* Child(const bt_field_class* fc, std::string_view name, FieldStep* step) {
  if (IsStruct(fc)) {
    const uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_structure_member* m =
          bt_field_class_structure_borrow_member_by_index_const(fc, i);
      if (SameName(bt_field_class_structure_member_get_name(m), name)) {
        *step = {static_cast<uint16_t>(i), false};
        return bt_field_class_structure_member_borrow_field_class_const(m);
      }
    }
  } else if (IsVariant(fc)) {
    const uint64_t n = bt_field_class_variant_get_option_count(fc);
    for (uint64_t i = 0; i < n; ++i) {
      const bt_field_class_variant_option* o =
          bt_field_class_variant_borrow_option_by_index_const(fc, i);
      if (SameName(bt_field_class_variant_option_get_name(o), name)) {
        *step = {static_cast<uint16_t>(i), true};
        return bt_field_class_variant_option_borrow_field_class_const(o);
      }
    }
  }
  return nullptr;
}

// Resolves a path of member/option names below `root_fc`; invalid FieldRef if absent.
FieldRef ResolvePath(const bt_field_class* root_fc, FieldRef::Root root, Names path) {
  FieldRef ref;
  if (!root_fc || path.size() > ref.steps.size()) return ref;
  const bt_field_class* fc = root_fc;
  uint8_t depth = 0;
  for (std::string_view name : path) {
    fc = Child(fc, name, &ref.steps[depth]);
    if (!fc) return FieldRef{};
    ++depth;
  }
  const bt_field_class_type type = bt_field_class_get_type(fc);
  if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)) {
    ref.leaf = FieldRef::Leaf::kSigned;
  } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)) {
    ref.leaf = FieldRef::Leaf::kUnsigned;
  } else if (type == BT_FIELD_CLASS_TYPE_STRING) {
    ref.leaf = FieldRef::Leaf::kString;
  } else if (bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_ARRAY)) {
    ref.leaf = FieldRef::Leaf::kAddress;
  } else {
    return FieldRef{};
  }
  ref.root = root;
  ref.depth = depth;
  return ref;
}

// The first of several alternative single names that exists.
FieldRef ResolveAny(const bt_field_class* root_fc, FieldRef::Root root, Names names) {
  for (std::string_view name : names) {
    FieldRef ref = ResolvePath(root_fc, root, {name});
    if (ref.valid()) return ref;
  }
  return FieldRef{};
}

const bt_field* Walk(const bt_event* event, const FieldRef& ref) {
  const bt_field* f = nullptr;
  switch (ref.root) {
    case FieldRef::Root::kPayload:
      f = bt_event_borrow_payload_field_const(event);
      break;
    case FieldRef::Root::kCommonContext:
      f = bt_event_borrow_common_context_field_const(event);
      break;
    case FieldRef::Root::kSpecificContext:
      f = bt_event_borrow_specific_context_field_const(event);
      break;
    case FieldRef::Root::kNone:
      return nullptr;
  }
  for (uint8_t i = 0; f && i < ref.depth; ++i) {
    const FieldStep& s = ref.steps[i];
    if (s.variant) {
      if (bt_field_variant_get_selected_option_index(f) != s.index) return nullptr;
      f = bt_field_variant_borrow_selected_option_field_const(f);
    } else {
      f = bt_field_structure_borrow_member_field_by_index_const(f, s.index);
    }
  }
  return f;
}

int64_t ReadInt(const bt_event* event, const FieldRef& ref, int64_t fallback) {
  const bt_field* f = Walk(event, ref);
  if (!f) return fallback;
  switch (ref.leaf) {
    case FieldRef::Leaf::kSigned:
      return bt_field_integer_signed_get_value(f);
    case FieldRef::Leaf::kUnsigned:
      return static_cast<int64_t>(bt_field_integer_unsigned_get_value(f));
    default:
      return fallback;
  }
}

// IPv4 addresses are 4-byte arrays in LTTng >= 2.9 (network order, first byte most
// significant); some writers use a plain 32-bit integer.
uint32_t ReadAddress(const bt_event* event, const FieldRef& ref) {
  const bt_field* f = Walk(event, ref);
  if (!f) return 0;
  if (ref.leaf != FieldRef::Leaf::kAddress) return static_cast<uint32_t>(ReadInt(event, ref, 0));
  const uint64_t n = bt_field_array_get_length(f);
  uint32_t v = 0;
  for (uint64_t i = 0; i < n && i < 4; ++i) {
    const bt_field* e = bt_field_array_borrow_element_field_by_index_const(f, i);
    v = (v << 8) | static_cast<uint32_t>(bt_field_integer_unsigned_get_value(e) & 0xff);
  }
  return v;
}

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

uint32_t DialectOfName(std::string_view name) {
  // Known before the first replayed event is read, so that nothing else sets the host's clock.
  if (name == kReplayEventName) return kDialectReplayed;
  for (const KindName& k : kKindNames) {
    if (k.name == name) return k.dialect;
  }
  if (name.starts_with("sched:") || name.starts_with("irq:")) return kDialectPerf;
  return 0;
}

// Payload member names of waitpath_replay:event, in ReplayLayout::Field order.
constexpr std::string_view kReplayFieldNames[ReplayLayout::kFieldCount] = {"format_version",
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
                                                                           "ip_len"};

// False when a member is missing or of another type: such a class is not ours (or from a
// future format) and is skipped like any unknown class.
bool ResolveReplayLayout(const bt_field_class* payload, ReplayLayout* layout) {
  if (!payload || !IsStruct(payload)) return false;
  for (int f = 0; f < ReplayLayout::kFieldCount; ++f) {
    FieldStep step{};
    const bt_field_class* fc = Child(payload, kReplayFieldNames[f], &step);
    if (!fc) return false;
    const bt_field_class_type type = bt_field_class_get_type(fc);
    const bool want_string = f == ReplayLayout::kCStr || f == ReplayLayout::kDStr;
    if (want_string != (type == BT_FIELD_CLASS_TYPE_STRING)) return false;
    if (!want_string && !bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_INTEGER)) return false;
    layout->index[f] = step.index;
    layout->is_signed[f] = bt_field_class_type_is(type, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
  }
  return true;
}

}  // namespace

void EventDecoder::NoteStreamClass(const bt_stream_class* stream_class) {
  for (const bt_stream_class* seen : seen_stream_classes_) {
    if (seen == stream_class) return;
  }
  seen_stream_classes_.push_back(stream_class);
  const uint64_t n = bt_stream_class_get_event_class_count(stream_class);
  for (uint64_t i = 0; i < n; ++i) {
    const char* name =
        bt_event_class_get_name(bt_stream_class_borrow_event_class_by_index_const(stream_class, i));
    if (name) dialect_ |= DialectOfName(name);
  }
}

const EventDecoder::ClassInfo& EventDecoder::Resolve(const bt_event_class* event_class) {
  NoteStreamClass(bt_event_class_borrow_stream_class_const(event_class));
  ClassInfo& info = classes_[event_class];
  const char* cname = bt_event_class_get_name(event_class);
  const std::string_view name(cname ? cname : "");

  if (name == kReplayEventName) {
    info.known = info.replay = ResolveReplayLayout(
        bt_event_class_borrow_payload_field_class_const(event_class), &info.replay_layout);
    if (info.known) dialect_ |= kDialectReplayed;
    return info;
  }
  for (const KindName& k : kKindNames) {
    if (k.name == name) {
      info.known = true;
      info.kind = k.kind;
    }
  }
  if (!info.known && MatchIpi(name, &info.kind, &info.ipi_type)) info.known = true;
  if (!info.known) return info;

  using R = FieldRef::Root;
  const bt_field_class* payload = bt_event_class_borrow_payload_field_class_const(event_class);
  const bt_field_class* common = bt_stream_class_borrow_event_common_context_field_class_const(
      bt_event_class_borrow_stream_class_const(event_class));
  auto any = [&](Names names) { return ResolveAny(payload, R::kPayload, names); };

  // The current task: perf writes it into every payload; LTTng only with added contexts.
  info.cur_tid = any({"common_pid", "perf_tid"});
  if (!info.cur_tid.valid()) info.cur_tid = ResolveAny(common, R::kCommonContext, {"tid"});
  info.cur_pid = any({"perf_pid"});
  if (!info.cur_pid.valid()) info.cur_pid = ResolveAny(common, R::kCommonContext, {"pid"});
  info.ctx = any({"common_flags"});

  switch (info.kind) {
    case EventKind::kSchedSwitch: {
      const auto f = AsSchedSwitch(info);
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
      const auto f = AsWake(info);
      f.tid() = any({"tid", "pid"});
      f.target_cpu() = any({"target_cpu"});
      f.comm() = any({"comm"});
      break;
    }
    case EventKind::kProcessFork: {
      const auto f = AsFork(info);
      f.parent_tid() = any({"parent_tid", "parent_pid"});
      f.child_tid() = any({"child_tid", "child_pid"});
      f.child_comm() = any({"child_comm"});
      // LTTng carries both child_tid and child_pid (the tgid); perf's child_pid is the tid.
      if (ResolveAny(payload, R::kPayload, {"child_tid"}).valid()) {
        f.child_pid() = any({"child_pid"});
      }
      break;
    }
    case EventKind::kProcessExit:
    case EventKind::kProcessFree:
      AsProcessEnd(info).tid() = any({"tid", "pid"});
      break;
    case EventKind::kIrqEntry: {
      const auto f = AsIrqEntry(info);
      f.irq() = any({"irq"});
      f.name() = any({"name"});
      break;
    }
    case EventKind::kIrqExit: {
      const auto f = AsIrqExit(info);
      f.irq() = any({"irq"});
      f.ret() = any({"ret"});
      break;
    }
    case EventKind::kSoftirqEntry:
    case EventKind::kSoftirqExit:
    case EventKind::kSoftirqRaise:
      AsSoftirq(info).vec() = any({"vec"});
      break;
    case EventKind::kHrtimerEntry:
    case EventKind::kHrtimerExit:
      AsHrtimer(info).hrtimer() = any({"hrtimer"});
      break;
    case EventKind::kIpiEntry:
    case EventKind::kIpiExit:
      AsIpi(info).vector() = any({"vector"});
      break;
    case EventKind::kPacketOut:
    case EventKind::kPacketIn: {
      const auto f = AsPacket(info);
      f.skbaddr() = any({"skbaddr", "sk"});
      f.len() = any({"len"});
      // LTTng >= 2.9: network_header variant -> ipv4 -> transport_header variant -> tcp.
      auto ip = [&](Names tail) {
        std::vector<std::string_view> p{"network_header", "ipv4"};
        p.insert(p.end(), tail.begin(), tail.end());
        FieldRef ref;
        switch (p.size()) {
          case 3:
            ref = ResolvePath(payload, R::kPayload, {p[0], p[1], p[2]});
            break;
          case 5:
            ref = ResolvePath(payload, R::kPayload, {p[0], p[1], p[2], p[3], p[4]});
            break;
          default:
            break;
        }
        return ref;
      };
      info.saddr = ip({"saddr"});
      info.daddr = ip({"daddr"});
      info.ip_len = ip({"tot_len"});
      info.sport = ip({"transport_header", "tcp", "source_port"});
      info.dport = ip({"transport_header", "tcp", "dest_port"});
      info.seq = ip({"transport_header", "tcp", "seq"});
      info.ack_seq = ip({"transport_header", "tcp", "ack_seq"});
      info.flags = ip({"transport_header", "tcp", "flags"});
      info.stock_packet = name.starts_with("net") || name.starts_with("net:");
      if (info.seq.valid()) {
        dialect_ |= kDialectNetworkHeader;
      } else if (name.starts_with("waitpath_tcp_")) {
        // kmod/: the socket-level packet's headers at the top level, keyed like the above.
        info.saddr = any({"saddr"});
        info.daddr = any({"daddr"});
        info.sport = any({"sport"});
        info.dport = any({"dport"});
        info.seq = any({"seq"});
        info.ack_seq = any({"ack_seq"});
        info.flags = any({"flags"});
        info.ip_len = any({"tot_len"});
      } else {
        // Seed-era inet_sock_local_in/out: TCP fields at the top level, no addresses.
        info.seq = any({"seq"});
        info.ack_seq = any({"ack_seq"});
        info.flags = any({"flags"});
      }
      break;
    }
    case EventKind::kBlockIssue:
    case EventKind::kBlockComplete: {
      const auto f = AsBlock(info);
      f.dev() = any({"dev"});
      f.nr_sector() = any({"nr_sector"});
      f.sector() = any({"sector"});
      break;
    }
    case EventKind::kCgroup: {
      const auto f = AsCgroup(info);
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
      info.cur_tid = info.cur_pid = FieldRef{};
      const bt_field_class* specific =
          bt_event_class_borrow_specific_context_field_class_const(event_class);
      const auto f = AsSpan(info);
      f.tid() = ResolveAny(common, R::kCommonContext, {"vtid", "tid"});
      if (!f.tid().valid()) f.tid() = ResolveAny(specific, R::kSpecificContext, {"vtid", "tid"});
      f.pid() = ResolveAny(common, R::kCommonContext, {"vpid", "pid"});
      if (!f.pid().valid()) f.pid() = ResolveAny(specific, R::kSpecificContext, {"vpid", "pid"});
      f.span_id() = any({"span_id"});
      if (info.kind == EventKind::kSpanBegin) {
        f.name() = any({"name", "op_name"});
        info.trace_hi = any({"trace_id_high"});
        info.trace_lo = any({"trace_id_low"});
        info.parent_span = any({"parent_span_id"});
      }
      break;
    }
    case EventKind::kStatedumpProcess: {
      const auto f = AsStatedumpProcess(info);
      f.tid() = any({"tid"});
      f.pid() = any({"pid"});
      f.name() = any({"name"});
      f.status() = any({"status"});
      break;
    }
    default:
      break;
  }
  return info;
}

bool EventDecoder::Decode(const bt_event* event, Event& out, std::vector<PacketKey>& packets,
                          std::vector<SpanIds>* spans) {
  const bt_event_class* ec = bt_event_borrow_class_const(event);
  if (ec != last_class_) {
    auto it = classes_.find(ec);
    last_info_ = it != classes_.end() ? &it->second : &Resolve(ec);
    last_class_ = ec;
  }
  const ClassInfo& info = *last_info_;
  if (!info.known) return false;
  if (info.replay) return DecodeReplayed(event, info.replay_layout, out, packets);

  auto str = [&](const FieldRef& ref) -> int32_t {
    if (ref.leaf != FieldRef::Leaf::kString) return -1;
    const bt_field* f = Walk(event, ref);
    if (!f) return -1;
    return static_cast<int32_t>(strings_.Intern(bt_field_string_get_value(f)));
  };
  auto num = [&](const FieldRef& ref, int64_t fallback) {
    return ref.valid() ? ReadInt(event, ref, fallback) : fallback;
  };

  out.kind = info.kind;
  out.cur_tid = static_cast<int32_t>(num(info.cur_tid, -1));
  out.cur_pid = static_cast<int32_t>(num(info.cur_pid, -1));
  out.ctx = info.ctx.valid()
                ? static_cast<uint8_t>((num(info.ctx, 0) & (kCtxHardirq | kCtxSoftirq | kCtxNmi)) |
                                       kCtxKnown)
                : 0;
  out.reserved = 0;
  // The per-kind fields, slot for slot as Resolve located them through the views.
  out.a = static_cast<int32_t>(num(info.a, -1));
  out.b = static_cast<int32_t>(num(info.b, -1));
  out.c =
      info.c.leaf == FieldRef::Leaf::kString ? str(info.c) : static_cast<int32_t>(num(info.c, -1));
  out.d =
      info.d.leaf == FieldRef::Leaf::kString ? str(info.d) : static_cast<int32_t>(num(info.d, -1));
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
      if (info.stock_packet && (dialect_ & kDialectKmodTcp)) break;
      if (info.seq.valid() && Walk(event, info.seq)) {
        PacketKey key;
        key.has_tcp = true;
        key.seq = static_cast<uint32_t>(ReadInt(event, info.seq, 0));
        key.ack_seq = static_cast<uint32_t>(num(info.ack_seq, 0));
        key.flags = static_cast<uint16_t>(num(info.flags, 0));
        if (info.saddr.valid()) {
          key.has_addresses = true;
          key.saddr = ReadAddress(event, info.saddr);
          key.daddr = ReadAddress(event, info.daddr);
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
  return true;
}

// A replayed event already is an Event: copy it over, interning its names and re-creating its
// packet key in this batch's table.
bool EventDecoder::DecodeReplayed(const bt_event* event, const ReplayLayout& layout, Event& out,
                                  std::vector<PacketKey>& packets) {
  using F = ReplayLayout;
  const bt_field* payload = bt_event_borrow_payload_field_const(event);
  auto member = [&](F::Field f) {
    return bt_field_structure_borrow_member_field_by_index_const(payload, layout.index[f]);
  };
  auto get = [&](F::Field f) -> int64_t {
    const bt_field* m = member(f);
    return layout.is_signed[f] ? bt_field_integer_signed_get_value(m)
                               : static_cast<int64_t>(bt_field_integer_unsigned_get_value(m));
  };
  // A record of another format version may mean other things by the same names.
  if (get(F::kFormatVersion) != kReplayFormatVersion) return false;
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
  if (ReplayCIsString(out.kind) && out.c >= 0) {
    out.c = static_cast<int32_t>(strings_.Intern(bt_field_string_get_value(member(F::kCStr))));
  }
  if (ReplayDIsString(out.kind) && out.d >= 0) {
    out.d = static_cast<int32_t>(strings_.Intern(bt_field_string_get_value(member(F::kDStr))));
  }
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
  // The original host's dialect decides how the engine reads the events (e.g. whether
  // sched_wakeup is a waker's context), so it travels with every record.
  dialect_ |= static_cast<uint32_t>(get(F::kDialect)) | kDialectReplayed;
  return true;
}

}  // namespace waitpath
