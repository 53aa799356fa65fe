#include "tools/gen/lttng_event_classes.h"

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace waitpath::gen {
namespace {

// Small builder for field classes; every created object is handed to its parent, which
// then owns it (hence the put_ref after each append).
class FieldClassFactory {
 public:
  explicit FieldClassFactory(bt_trace_class* tc) : tc_(tc) {}

  bt_field_class* U(uint64_t bits, bool hex = false) {
    bt_field_class* fc = bt_field_class_integer_unsigned_create(tc_);
    bt_field_class_integer_set_field_value_range(fc, bits);
    if (hex) {
      bt_field_class_integer_set_preferred_display_base(
          fc, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
    }
    return fc;
  }
  bt_field_class* S(uint64_t bits) {
    bt_field_class* fc = bt_field_class_integer_signed_create(tc_);
    bt_field_class_integer_set_field_value_range(fc, bits);
    return fc;
  }
  bt_field_class* Str() { return bt_field_class_string_create(tc_); }
  using Ranges = std::initializer_list<std::pair<uint64_t, uint64_t>>;
  bt_field_class* UEnum(uint64_t bits, std::initializer_list<std::pair<const char*, Ranges>> maps) {
    bt_field_class* fc = bt_field_class_enumeration_unsigned_create(tc_);
    bt_field_class_integer_set_field_value_range(fc, bits);
    for (const auto& [label, ranges] : maps) {
      bt_integer_range_set_unsigned* rs = bt_integer_range_set_unsigned_create();
      for (const auto& [lo, hi] : ranges) bt_integer_range_set_unsigned_add_range(rs, lo, hi);
      Check(bt_field_class_enumeration_unsigned_add_mapping(fc, label, rs) ==
            BT_FIELD_CLASS_ENUMERATION_ADD_MAPPING_STATUS_OK);
      bt_integer_range_set_unsigned_put_ref(rs);
    }
    return fc;
  }
  bt_field_class* SEnum(uint64_t bits,
                        std::initializer_list<std::pair<const char*, int64_t>> maps) {
    bt_field_class* fc = bt_field_class_enumeration_signed_create(tc_);
    bt_field_class_integer_set_field_value_range(fc, bits);
    for (const auto& [label, v] : maps) {
      bt_integer_range_set_signed* rs = bt_integer_range_set_signed_create();
      bt_integer_range_set_signed_add_range(rs, v, v);
      Check(bt_field_class_enumeration_signed_add_mapping(fc, label, rs) ==
            BT_FIELD_CLASS_ENUMERATION_ADD_MAPPING_STATUS_OK);
      bt_integer_range_set_signed_put_ref(rs);
    }
    return fc;
  }
  bt_field_class* Array(bt_field_class* elem, uint64_t n) {
    bt_field_class* fc = bt_field_class_array_static_create(tc_, elem, n);
    bt_field_class_put_ref(elem);
    return fc;
  }
  bt_field_class* Struct(std::initializer_list<std::pair<const char*, bt_field_class*>> members) {
    bt_field_class* fc = bt_field_class_structure_create(tc_);
    for (const auto& [name, member] : members) {
      Check(bt_field_class_structure_append_member(fc, name, member) ==
            BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK);
      bt_field_class_put_ref(member);
    }
    return fc;
  }
  // A variant selected by `selector` (an unsigned enumeration that precedes it in the same
  // structure); option i is selected by value i, like LTTng's "previous field as tag".
  bt_field_class* Variant(bt_field_class* selector,
                          std::initializer_list<std::pair<const char*, bt_field_class*>> options) {
    bt_field_class* fc = bt_field_class_variant_create(tc_, selector);
    uint64_t value = 0;
    for (const auto& [name, option] : options) {
      bt_integer_range_set_unsigned* rs = bt_integer_range_set_unsigned_create();
      bt_integer_range_set_unsigned_add_range(rs, value, value);
      Check(bt_field_class_variant_with_selector_field_integer_unsigned_append_option(fc, name,
                                                                                      option, rs) ==
            BT_FIELD_CLASS_VARIANT_WITH_SELECTOR_FIELD_APPEND_OPTION_STATUS_OK);
      bt_integer_range_set_unsigned_put_ref(rs);
      bt_field_class_put_ref(option);
      ++value;
    }
    return fc;
  }

  static void Check(bool ok) {
    if (!ok) throw std::runtime_error("babeltrace2: cannot build the LTTng event classes");
  }

 private:
  bt_trace_class* tc_;
};

// Network header variant as lttng-modules' net_dev_template writes it (net.h).
std::pair<bt_field_class*, bt_field_class*> NetworkHeader(FieldClassFactory& f) {
  auto transport_type = [&] {
    return f.UEnum(
        8, {{"_unknown", {{0, 0}}}, {"_tcp", {{1, 1}}}, {"_udp", {{2, 2}}}, {"_icmp", {{3, 3}}}});
  };
  auto proto = [&] {
    // IPPROTO_ICMP 1, IPPROTO_TCP 6, IPPROTO_UDP 17.
    return f.UEnum(8, {{"_unknown", {{0, 0}, {2, 5}, {7, 16}, {18, 255}}},
                       {"_icmp", {{1, 1}}},
                       {"_tcp", {{6, 6}}},
                       {"_udp", {{17, 17}}}});
  };
  auto transport = [&](bt_field_class* selector) {
    return f.Variant(
        selector,
        {{"unknown", f.Struct({})},
         {"tcp", f.Struct({{"source_port", f.U(16)},
                           {"dest_port", f.U(16)},
                           {"seq", f.U(32)},
                           {"ack_seq", f.U(32)},
                           {"data_offset", f.U(4)},
                           {"reserved", f.U(3)},
                           {"flags", f.U(9, true)},
                           {"window_size", f.U(16)},
                           {"checksum", f.U(16, true)},
                           {"urg_ptr", f.U(16)}})},
         {"udp", f.Struct({{"source_port", f.U(16)},
                           {"dest_port", f.U(16)},
                           {"len", f.U(16)},
                           {"check", f.U(16)}})},
         {"icmp",
          f.Struct(
              {{"type", f.U(8)}, {"code", f.U(8)}, {"checksum", f.U(16)}, {"gateway", f.U(32)}})}});
  };
  // The selector is shared by the structure member and the variant: hold it across both.
  bt_field_class* v4_tht = transport_type();
  bt_field_class_get_ref(v4_tht);
  bt_field_class* ipv4 = f.Struct({{"version", f.U(4)},
                                   {"ihl", f.U(4)},
                                   {"tos", f.U(8)},
                                   {"tot_len", f.U(16)},
                                   {"id", f.U(16, true)},
                                   {"frag_off", f.U(16)},
                                   {"ttl", f.U(8)},
                                   {"protocol", proto()},
                                   {"checksum", f.U(16, true)},
                                   {"saddr", f.Array(f.U(8), 4)},
                                   {"daddr", f.Array(f.U(8), 4)},
                                   {"transport_header_type", v4_tht},
                                   {"transport_header", transport(v4_tht)}});
  bt_field_class_put_ref(v4_tht);
  bt_field_class* v6_tht = transport_type();
  bt_field_class_get_ref(v6_tht);
  bt_field_class* ipv6 = f.Struct({{"version", f.U(4)},
                                   {"prio", f.U(4)},
                                   {"flow_lbl", f.Array(f.U(8, true), 3)},
                                   {"payload_len", f.U(16)},
                                   {"nexthdr", proto()},
                                   {"hop_limit", f.U(8)},
                                   {"saddr", f.Array(f.U(16, true), 8)},
                                   {"daddr", f.Array(f.U(16, true), 8)},
                                   {"transport_header_type", v6_tht},
                                   {"transport_header", transport(v6_tht)}});
  bt_field_class_put_ref(v6_tht);
  bt_field_class* nh_type =
      f.UEnum(8, {{"_unknown", {{0, 0}}}, {"_ipv4", {{1, 1}}}, {"_ipv6", {{2, 2}}}});
  bt_field_class* nh =
      f.Variant(nh_type, {{"unknown", f.Struct({})}, {"ipv4", ipv4}, {"ipv6", ipv6}});
  return {nh_type, nh};
}

}  // namespace

bt_field_class* LttngEventClasses::CreatePacketContext(bt_trace_class* tc) {
  FieldClassFactory f(tc);
  return f.Struct({{"cpu_id", f.U(32)}});
}

void LttngEventClasses::Create(bt_trace_class* tc, bt_stream_class* sc) {
  FieldClassFactory f(tc);
  auto make = [&](EventKind kind, const char* name, bt_field_class* payload) {
    bt_event_class* ec = bt_event_class_create(sc);
    FieldClassFactory::Check(ec != nullptr);
    FieldClassFactory::Check(bt_event_class_set_name(ec, name) ==
                             BT_EVENT_CLASS_SET_NAME_STATUS_OK);
    if (payload != nullptr) {
      FieldClassFactory::Check(bt_event_class_set_payload_field_class(ec, payload) ==
                               BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK);
      bt_field_class_put_ref(payload);
    }
    classes_[static_cast<size_t>(kind)] = ec;
    bt_event_class_put_ref(ec);  // the stream class keeps it
  };
  auto wake = [&] {
    return f.Struct(
        {{"comm", f.Str()}, {"tid", f.S(32)}, {"prio", f.S(32)}, {"target_cpu", f.S(32)}});
  };
  auto task = [&] { return f.Struct({{"comm", f.Str()}, {"tid", f.S(32)}, {"prio", f.S(32)}}); };
  auto net = [&] {
    auto [nh_type, nh] = NetworkHeader(f);
    return f.Struct({{"skbaddr", f.U(64, true)},
                     {"len", f.U(32)},
                     {"name", f.Str()},
                     {"network_header_type", nh_type},
                     {"network_header", nh}});
  };
  make(EventKind::kSchedSwitch, "sched_switch",
       f.Struct({{"prev_comm", f.Str()},
                 {"prev_tid", f.S(32)},
                 {"prev_prio", f.S(32)},
                 {"prev_state", f.S(64)},
                 {"next_comm", f.Str()},
                 {"next_tid", f.S(32)},
                 {"next_prio", f.S(32)}}));
  make(EventKind::kSchedWaking, "sched_waking", wake());
  make(EventKind::kSchedWakeup, "sched_wakeup", wake());
  make(EventKind::kSchedWakeupNew, "sched_wakeup_new", wake());
  make(EventKind::kSchedProcessFork, "sched_process_fork",
       f.Struct({{"parent_comm", f.Str()},
                 {"parent_tid", f.S(32)},
                 {"parent_pid", f.S(32)},
                 {"child_comm", f.Str()},
                 {"child_tid", f.S(32)},
                 {"child_pid", f.S(32)}}));
  make(EventKind::kSchedProcessExit, "sched_process_exit", task());
  make(EventKind::kSchedProcessFree, "sched_process_free", task());
  make(EventKind::kSchedProcessWait, "sched_process_wait", task());
  make(EventKind::kIrqHandlerEntry, "irq_handler_entry",
       f.Struct({{"irq", f.S(32)}, {"name", f.Str()}}));
  make(EventKind::kIrqHandlerExit, "irq_handler_exit",
       f.Struct({{"irq", f.S(32)}, {"ret", f.S(32)}}));
  make(EventKind::kSoftirqEntry, "irq_softirq_entry", f.Struct({{"vec", f.U(32)}}));
  make(EventKind::kSoftirqExit, "irq_softirq_exit", f.Struct({{"vec", f.U(32)}}));
  make(EventKind::kSoftirqRaise, "irq_softirq_raise", f.Struct({{"vec", f.U(32)}}));
  make(EventKind::kHrtimerExpireEntry, "timer_hrtimer_expire_entry",
       f.Struct({{"hrtimer", f.U(64, true)}, {"now", f.S(64)}, {"function", f.U(64, true)}}));
  make(EventKind::kHrtimerExpireExit, "timer_hrtimer_expire_exit",
       f.Struct({{"hrtimer", f.U(64, true)}}));
  make(EventKind::kBlockRqIssue, "block_rq_issue",
       f.Struct({{"dev", f.U(32)},
                 {"sector", f.U(64)},
                 {"nr_sector", f.U(32)},
                 {"bytes", f.U(32)},
                 {"tid", f.S(32)},
                 {"rwbs", f.U(32)},
                 {"comm", f.Str()}}));
  make(EventKind::kBlockRqComplete, "block_rq_complete",
       f.Struct({{"dev", f.U(32)},
                 {"sector", f.U(64)},
                 {"nr_sector", f.U(32)},
                 {"error", f.S(32)},
                 {"rwbs", f.U(32)}}));
  make(EventKind::kNetDevQueue, "net_dev_queue", net());
  make(EventKind::kNetIfReceiveSkb, "net_if_receive_skb", net());
  make(EventKind::kStatedumpStart, "lttng_statedump_start", nullptr);
  make(EventKind::kStatedumpEnd, "lttng_statedump_end", nullptr);
  make(EventKind::kStatedumpProcessState, "lttng_statedump_process_state",
       f.Struct({{"tid", f.S(32)},
                 {"vtid", f.S(32)},
                 {"pid", f.S(32)},
                 {"vpid", f.S(32)},
                 {"ppid", f.S(32)},
                 {"vppid", f.S(32)},
                 {"name", f.Str()},
                 {"type", f.SEnum(32, {{"USER_THREAD", 0}, {"KERNEL_THREAD", 1}})},
                 {"mode", f.SEnum(32, {{"USER_MODE", 0},
                                       {"SYSCALL", 1},
                                       {"TRAP", 2},
                                       {"IRQ", 3},
                                       {"SOFTIRQ", 4},
                                       {"MODE_UNKNOWN", 5}})},
                 {"submode", f.SEnum(32, {{"NONE", 0}, {"UNKNOWN", 1}})},
                 {"status", f.SEnum(32, {{"UNNAMED", 0},
                                         {"WAIT_FORK", 1},
                                         {"WAIT_CPU", 2},
                                         {"EXIT", 3},
                                         {"ZOMBIE", 4},
                                         {"WAIT", 5},
                                         {"RUN", 6},
                                         {"DEAD", 7}})},
                 {"cpu", f.U(32)}}));
}

void LttngEventClasses::CreateSpans(bt_trace_class* tc, bt_stream_class* sc) {
  FieldClassFactory f(tc);
  bt_field_class* context = f.Struct({{"vtid", f.S(32)}, {"vpid", f.S(32)}});
  FieldClassFactory::Check(bt_stream_class_set_event_common_context_field_class(sc, context) ==
                           BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK);
  bt_field_class_put_ref(context);
  auto make = [&](EventKind kind, const char* name, bt_field_class* payload) {
    bt_event_class* ec = bt_event_class_create(sc);
    FieldClassFactory::Check(ec != nullptr);
    FieldClassFactory::Check(bt_event_class_set_name(ec, name) ==
                             BT_EVENT_CLASS_SET_NAME_STATUS_OK);
    FieldClassFactory::Check(bt_event_class_set_payload_field_class(ec, payload) ==
                             BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK);
    bt_field_class_put_ref(payload);
    classes_[static_cast<size_t>(kind)] = ec;
    bt_event_class_put_ref(ec);
  };
  make(EventKind::kSpanBegin, "waitpath_span:begin",
       f.Struct({{"trace_id_high", f.U(64, true)},
                 {"trace_id_low", f.U(64, true)},
                 {"span_id", f.U(64, true)},
                 {"parent_span_id", f.U(64, true)},
                 {"name", f.Str()}}));
  make(EventKind::kSpanEnd, "waitpath_span:end", f.Struct({{"span_id", f.U(64, true)}}));
  make(EventKind::kSpanHandoff, "waitpath_span:handoff", f.Struct({{"span_id", f.U(64, true)}}));
}

}  // namespace waitpath::gen
