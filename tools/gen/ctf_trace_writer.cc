#include "tools/gen/ctf_trace_writer.h"

#include <babeltrace2/babeltrace.h>
#include <fmt/format.h>

#include <stdexcept>

#include "tools/gen/lttng_event_classes.h"

namespace waitpath::gen {
namespace {

namespace L = lttng_layout;

// Kernel text addresses of the hrtimer callbacks (the values only need to be stable).
constexpr uint64_t kHrtimerWakeupAddr = 0xffffffff8113a6d0ULL;
constexpr uint64_t kTickSchedTimerAddr = 0xffffffff81158ab0ULL;

std::string TakeBabeltraceError() {
  const bt_error* err = bt_current_thread_take_error();
  if (err == nullptr) return "";
  std::string out;
  for (uint64_t i = 0; i < bt_error_get_cause_count(err); ++i) {
    const bt_error_cause* c = bt_error_borrow_cause_by_index(err, i);
    out +=
        fmt::format("\n  {}: {}", bt_error_cause_get_module_name(c), bt_error_cause_get_message(c));
  }
  bt_error_release(err);
  return out;
}

// A packet to write: records [begin, end) of one CPU, after `discarded_before` lost events.
struct PacketPlan {
  size_t begin = 0;
  size_t end = 0;
  uint64_t discarded_before = 0;
};

// Owns the trace IR and the position in the message sequence of the source component.
class HostMessageSource {
 public:
  explicit HostMessageSource(const CtfHostInput& in) : in_(in) {}

  void BuildTraceIr(bt_self_component* self);
  void ReleaseTraceIr();
  bt_message_iterator_class_next_method_status Next(bt_self_message_iterator* it,
                                                    bt_message_array_const msgs, uint64_t capacity,
                                                    uint64_t* count);

 private:
  enum class Stage : uint8_t { kDiscarded, kPacketBegin, kEvents, kPacketEnd, kDone };
  struct Cursor {
    size_t packet = 0;
    Stage stage = Stage::kPacketBegin;
    size_t event = 0;
    bt_packet* packet_obj = nullptr;
  };

  void PlanPackets();
  Ns NextTime(int cpu) const;
  const bt_message* NextMessageOf(int cpu, bt_self_message_iterator* it);
  void FillPayload(bt_field* payload, const TraceRecord& r);
  void FillNet(bt_field* payload, const PacketInfo& p, bool tx);
  void FillTask(bt_field* payload, uint64_t first, int32_t task);

  const CtfHostInput& in_;
  bt_trace_class* tc_ = nullptr;
  bt_clock_class* cc_ = nullptr;
  bt_stream_class* sc_ = nullptr;
  bt_trace* trace_ = nullptr;
  std::vector<bt_stream*> streams_;
  LttngEventClasses classes_;
  std::vector<std::vector<PacketPlan>> plans_;
  std::vector<Cursor> cursors_;
  int begun_streams_ = 0;
  int ended_streams_ = 0;
};

void HostMessageSource::PlanPackets() {
  plans_.assign(static_cast<size_t>(in_.cpus), {});
  for (int cpu = 0; cpu < in_.cpus; ++cpu) {
    const auto& recs = in_.per_cpu[static_cast<size_t>(cpu)];
    const auto& gaps = in_.gaps[static_cast<size_t>(cpu)];
    auto& plan = plans_[static_cast<size_t>(cpu)];
    size_t g = 0;
    size_t i = 0;
    while (i < recs.size() || plan.empty()) {
      PacketPlan p;
      p.begin = i;
      // A gap closes the packet before it and is reported before the next one.
      while (g < gaps.size() && gaps[g].before <= i) p.discarded_before += gaps[g++].count;
      size_t limit = std::min(recs.size(), i + in_.packet_events);
      if (g < gaps.size()) limit = std::min(limit, gaps[g].before);
      p.end = std::max(limit, i);
      plan.push_back(p);
      if (p.end == i) break;  // empty stream: one empty packet
      i = p.end;
    }
  }
}

void HostMessageSource::BuildTraceIr(bt_self_component* self) {
  PlanPackets();
  tc_ = bt_trace_class_create(self);
  cc_ = bt_clock_class_create(self);
  bt_clock_class_set_name(cc_, "monotonic");
  bt_clock_class_set_description(cc_, "Monotonic Clock");
  bt_clock_class_set_frequency(cc_, 1000000000);
  bt_clock_class_set_precision(cc_, 1);
  bt_clock_class_set_offset(cc_, in_.clock.ClockOffsetSeconds(), 0);
  bt_clock_class_set_origin_is_unix_epoch(cc_, BT_TRUE);
  uint8_t uuid[16];
  uint64_t x = in_.uuid_seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(in_.host_index);
  for (int i = 0; i < 16; ++i) {
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    uuid[i] = static_cast<uint8_t>(x >> 56);
  }
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x40);  // version 4
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80);
  bt_clock_class_set_uuid(cc_, uuid);

  sc_ = bt_stream_class_create(tc_);
  bt_stream_class_set_name(sc_, "channel0");
  bt_stream_class_set_assigns_automatic_stream_id(sc_, BT_FALSE);
  bt_stream_class_set_default_clock_class(sc_, cc_);
  bt_stream_class_set_supports_packets(sc_, BT_TRUE, BT_TRUE, BT_TRUE);
  bt_stream_class_set_supports_discarded_events(sc_, BT_TRUE, BT_TRUE);
  bt_field_class* ctx = LttngEventClasses::CreatePacketContext(tc_);
  bt_stream_class_set_packet_context_field_class(sc_, ctx);
  bt_field_class_put_ref(ctx);
  if (in_.ust) {
    classes_.CreateSpans(tc_, sc_);
  } else {
    classes_.Create(tc_, sc_);
  }

  trace_ = bt_trace_create(tc_);
  bt_trace_set_name(trace_, in_.hostname.c_str());
  uuid[0] ^= in_.ust ? 0xa5 : 0x5a;
  bt_trace_set_uuid(trace_, uuid);
  bt_trace_set_environment_entry_string(trace_, "hostname", in_.hostname.c_str());
  bt_trace_set_environment_entry_string(trace_, "domain", in_.ust ? "ust" : "kernel");
  bt_trace_set_environment_entry_string(trace_, "tracer_name",
                                        in_.ust ? "lttng-ust" : "lttng-modules");
  bt_trace_set_environment_entry_integer(trace_, "tracer_major", 2);
  bt_trace_set_environment_entry_integer(trace_, "tracer_minor", in_.ust ? 13 : 12);
  bt_trace_set_environment_entry_integer(trace_, "tracer_patchlevel", 0);
  bt_trace_set_environment_entry_string(trace_, "trace_buffering_scheme", "global");
  bt_trace_set_environment_entry_string(trace_, "trace_name", "waitpath-gen");
  bt_trace_set_environment_entry_string(trace_, "sysname", "Linux");
  bt_trace_set_environment_entry_string(trace_, "kernel_release", "5.10.0-28-amd64");
  bt_trace_set_environment_entry_string(trace_, "kernel_version",
                                        "#1 SMP Debian 5.10.209-2 (2024-01-31)");
  for (int cpu = 0; cpu < in_.cpus; ++cpu) {
    bt_stream* s = bt_stream_create_with_id(sc_, trace_, static_cast<uint64_t>(cpu));
    bt_stream_set_name(s, fmt::format("channel0_{}", cpu).c_str());
    streams_.push_back(s);
  }
  cursors_.assign(static_cast<size_t>(in_.cpus), Cursor{});
}

void HostMessageSource::ReleaseTraceIr() {
  for (Cursor& c : cursors_) {
    if (c.packet_obj != nullptr) bt_packet_put_ref(c.packet_obj);
    c.packet_obj = nullptr;
  }
  for (bt_stream* s : streams_) bt_stream_put_ref(s);
  streams_.clear();
  bt_trace_put_ref(trace_);
  bt_stream_class_put_ref(sc_);
  bt_clock_class_put_ref(cc_);
  bt_trace_class_put_ref(tc_);
  trace_ = nullptr;
  sc_ = nullptr;
  cc_ = nullptr;
  tc_ = nullptr;
}

Ns HostMessageSource::NextTime(int cpu) const {
  const Cursor& c = cursors_[static_cast<size_t>(cpu)];
  const auto& recs = in_.per_cpu[static_cast<size_t>(cpu)];
  const auto& plan = plans_[static_cast<size_t>(cpu)];
  if (c.stage == Stage::kDone) return INT64_MAX;
  const PacketPlan& p = plan[c.packet];
  auto first = [&](const PacketPlan& pp) { return pp.begin < pp.end ? recs[pp.begin].t : 0; };
  auto last = [&](const PacketPlan& pp) { return pp.begin < pp.end ? recs[pp.end - 1].t : 0; };
  switch (c.stage) {
    case Stage::kDiscarded:
      return last(plan[c.packet - 1]);
    case Stage::kPacketBegin:
      return first(p);
    case Stage::kEvents:
      return recs[c.event].t;
    case Stage::kPacketEnd:
      return last(p);
    case Stage::kDone:
      break;
  }
  return INT64_MAX;
}

const bt_message* HostMessageSource::NextMessageOf(int cpu, bt_self_message_iterator* it) {
  Cursor& c = cursors_[static_cast<size_t>(cpu)];
  const auto& recs = in_.per_cpu[static_cast<size_t>(cpu)];
  const auto& plan = plans_[static_cast<size_t>(cpu)];
  const PacketPlan& p = plan[c.packet];
  bt_stream* stream = streams_[static_cast<size_t>(cpu)];
  auto cycles_first = [&](const PacketPlan& pp) {
    return in_.clock.Cycles(pp.begin < pp.end ? recs[pp.begin].t : 0);
  };
  auto cycles_last = [&](const PacketPlan& pp) {
    return in_.clock.Cycles(pp.begin < pp.end ? recs[pp.end - 1].t : 0);
  };
  switch (c.stage) {
    case Stage::kDiscarded: {
      // sink.ctf.fs wants the range to go from the previous packet's end to this packet's
      // end, which is also how LTTng reports it (the count lives in this packet).
      bt_message* m = bt_message_discarded_events_create_with_default_clock_snapshots(
          it, stream, cycles_last(plan[c.packet - 1]), cycles_last(p));
      bt_message_discarded_events_set_count(m, p.discarded_before);
      c.stage = Stage::kPacketBegin;
      return m;
    }
    case Stage::kPacketBegin: {
      c.packet_obj = bt_packet_create(stream);
      bt_field* ctx = bt_packet_borrow_context_field(c.packet_obj);
      bt_field_integer_unsigned_set_value(bt_field_structure_borrow_member_field_by_index(ctx, 0),
                                          static_cast<uint64_t>(cpu));
      bt_message* m = bt_message_packet_beginning_create_with_default_clock_snapshot(
          it, c.packet_obj, cycles_first(p));
      c.event = p.begin;
      c.stage = p.begin < p.end ? Stage::kEvents : Stage::kPacketEnd;
      return m;
    }
    case Stage::kEvents: {
      const TraceRecord& r = recs[c.event];
      bt_message* m = bt_message_event_create_with_packet_and_default_clock_snapshot(
          it, classes_.Get(r.kind), c.packet_obj, in_.clock.Cycles(r.t));
      bt_event* ev = bt_message_event_borrow_event(m);
      if (bt_field* payload = bt_event_borrow_payload_field(ev)) FillPayload(payload, r);
      if (in_.ust) {
        // The vtid/vpid contexts: the task that made the call.
        const TaskInfo& t = in_.sim->tasks[static_cast<size_t>(r.a)];
        bt_field* context = bt_event_borrow_common_context_field(ev);
        bt_field_integer_signed_set_value(
            bt_field_structure_borrow_member_field_by_index(context, 0), t.tid);
        bt_field_integer_signed_set_value(
            bt_field_structure_borrow_member_field_by_index(context, 1), t.pid);
      }
      if (++c.event == p.end) c.stage = Stage::kPacketEnd;
      return m;
    }
    case Stage::kPacketEnd: {
      bt_message* m = bt_message_packet_end_create_with_default_clock_snapshot(it, c.packet_obj,
                                                                               cycles_last(p));
      bt_packet_put_ref(c.packet_obj);
      c.packet_obj = nullptr;
      if (++c.packet == plan.size()) {
        c.stage = Stage::kDone;
      } else {
        c.stage = plan[c.packet].discarded_before > 0 ? Stage::kDiscarded : Stage::kPacketBegin;
      }
      return m;
    }
    case Stage::kDone:
      break;
  }
  return nullptr;
}

void HostMessageSource::FillTask(bt_field* s, uint64_t first, int32_t task) {
  const TaskInfo& t = in_.sim->tasks[static_cast<size_t>(task)];
  bt_field_string_set_value(bt_field_structure_borrow_member_field_by_index(s, first),
                            t.comm.c_str());
  bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(s, first + 1),
                                    t.tid);
  bt_field_integer_signed_set_value(bt_field_structure_borrow_member_field_by_index(s, first + 2),
                                    t.prio);
}

void HostMessageSource::FillNet(bt_field* s, const PacketInfo& p, bool tx) {
  auto member = [](bt_field* f, uint64_t i) {
    return bt_field_structure_borrow_member_field_by_index(f, i);
  };
  auto set_u = [&](bt_field* f, uint64_t i, uint64_t v) {
    bt_field_integer_unsigned_set_value(member(f, i), v);
  };
  const uint64_t tot_len = 40u + p.payload;
  set_u(s, L::kNetSkbaddr, tx ? p.tx_skbaddr : p.rx_skbaddr);
  // skb->len includes the Ethernet header on transmit, not after eth_type_trans() on receive.
  set_u(s, L::kNetLen, tx ? tot_len + 14 : tot_len);
  bt_field_string_set_value(member(s, L::kNetName), "eth0");
  set_u(s, L::kNetHeaderType, 1);
  bt_field* nh = member(s, L::kNetHeader);
  bt_field_variant_select_option_by_index(nh, L::kIpv4Option);
  bt_field* ip = bt_field_variant_borrow_selected_option_field(nh);
  set_u(ip, L::kIpVersion, 4);
  set_u(ip, L::kIpIhl, 5);
  set_u(ip, L::kIpTos, 0);
  set_u(ip, L::kIpTotLen, tot_len);
  set_u(ip, L::kIpId, p.ip_id);
  set_u(ip, L::kIpFragOff, 0x4000);  // DF
  set_u(ip, L::kIpTtl, 64);
  set_u(ip, L::kIpProtocol, 6);
  set_u(ip, L::kIpChecksum, p.ip_checksum);
  bt_field* sa = member(ip, L::kIpSaddr);
  bt_field* da = member(ip, L::kIpDaddr);
  for (uint64_t i = 0; i < 4; ++i) {
    bt_field_integer_unsigned_set_value(bt_field_array_borrow_element_field_by_index(sa, i),
                                        p.saddr[i]);
    bt_field_integer_unsigned_set_value(bt_field_array_borrow_element_field_by_index(da, i),
                                        p.daddr[i]);
  }
  set_u(ip, L::kIpTransportType, 1);
  bt_field* th = member(ip, L::kIpTransport);
  bt_field_variant_select_option_by_index(th, L::kTcpOption);
  bt_field* tcp = bt_field_variant_borrow_selected_option_field(th);
  set_u(tcp, L::kTcpSource, p.sport);
  set_u(tcp, L::kTcpDest, p.dport);
  set_u(tcp, L::kTcpSeq, p.seq);
  set_u(tcp, L::kTcpAckSeq, p.ack_seq);
  set_u(tcp, L::kTcpDataOffset, 5);
  set_u(tcp, L::kTcpReserved, 0);
  set_u(tcp, L::kTcpFlags, p.flags);
  set_u(tcp, L::kTcpWindow, 502);
  set_u(tcp, L::kTcpChecksum, p.tcp_checksum);
  set_u(tcp, L::kTcpUrgPtr, 0);
}

void HostMessageSource::FillPayload(bt_field* s, const TraceRecord& r) {
  auto member = [&](uint64_t i) { return bt_field_structure_borrow_member_field_by_index(s, i); };
  auto set_u = [&](uint64_t i, uint64_t v) { bt_field_integer_unsigned_set_value(member(i), v); };
  auto set_s = [&](uint64_t i, int64_t v) { bt_field_integer_signed_set_value(member(i), v); };
  const auto& tasks = in_.sim->tasks;
  switch (r.kind) {
    case EventKind::kSchedSwitch:
      FillTask(s, 0, r.a);
      set_s(3, r.c);
      FillTask(s, 4, r.b);
      break;
    case EventKind::kSchedWaking:
    case EventKind::kSchedWakeup:
    case EventKind::kSchedWakeupNew:
      FillTask(s, 0, r.a);
      set_s(3, r.b);
      break;
    case EventKind::kSchedProcessFork: {
      const TaskInfo& parent = tasks[static_cast<size_t>(r.a)];
      const TaskInfo& child = tasks[static_cast<size_t>(r.b)];
      bt_field_string_set_value(member(0), parent.comm.c_str());
      set_s(1, parent.tid);
      set_s(2, parent.pid);
      bt_field_string_set_value(member(3), child.comm.c_str());
      set_s(4, child.tid);
      set_s(5, child.pid);
      break;
    }
    case EventKind::kSchedProcessExit:
    case EventKind::kSchedProcessFree:
      FillTask(s, 0, r.a);
      break;
    case EventKind::kSchedProcessWait:
      // The kernel reports the waiting task's comm and prio with the pid waited for.
      FillTask(s, 0, r.a);
      set_s(1, r.c);
      break;
    case EventKind::kIrqHandlerEntry:
      set_s(0, r.a);
      bt_field_string_set_value(
          member(1), in_.sim->hosts[static_cast<size_t>(in_.host_index)].irq_names[r.b].c_str());
      break;
    case EventKind::kIrqHandlerExit:
      set_s(0, r.a);
      set_s(1, r.b);
      break;
    case EventKind::kSoftirqEntry:
    case EventKind::kSoftirqExit:
    case EventKind::kSoftirqRaise:
      set_u(0, static_cast<uint64_t>(r.a));
      break;
    case EventKind::kHrtimerExpireEntry:
      set_u(0, static_cast<uint64_t>(r.c));
      set_s(1, static_cast<int64_t>(in_.clock.Cycles(r.t)));
      set_u(2, r.b == kHrtimerWakeup ? kHrtimerWakeupAddr : kTickSchedTimerAddr);
      break;
    case EventKind::kHrtimerExpireExit:
      set_u(0, static_cast<uint64_t>(r.c));
      break;
    case EventKind::kBlockRqIssue: {
      const BlockRequest& b = in_.sim->block_requests[static_cast<size_t>(r.c)];
      const TaskInfo& t = tasks[static_cast<size_t>(r.a)];
      set_u(0, b.dev);
      set_u(1, b.sector);
      set_u(2, b.nr_sector);
      set_u(3, b.bytes);
      set_s(4, t.tid);
      set_u(5, b.rwbs);
      bt_field_string_set_value(member(6), t.comm.c_str());
      break;
    }
    case EventKind::kBlockRqComplete: {
      const BlockRequest& b = in_.sim->block_requests[static_cast<size_t>(r.c)];
      set_u(0, b.dev);
      set_u(1, b.sector);
      set_u(2, b.nr_sector);
      set_s(3, 0);
      set_u(4, b.rwbs);
      break;
    }
    case EventKind::kNetDevQueue:
      FillNet(s, in_.sim->packets[static_cast<size_t>(r.c)], true);
      break;
    case EventKind::kNetIfReceiveSkb:
      FillNet(s, in_.sim->packets[static_cast<size_t>(r.c)], false);
      break;
    case EventKind::kStatedumpProcessState: {
      const TaskInfo& t = tasks[static_cast<size_t>(r.a)];
      set_s(0, t.tid);
      set_s(1, t.tid);
      set_s(2, t.pid);
      set_s(3, t.pid);
      set_s(4, t.ppid);
      set_s(5, t.ppid);
      bt_field_string_set_value(member(6), t.comm.c_str());
      set_s(7, 0);  // USER_THREAD
      set_s(8, 0);  // USER_MODE
      set_s(9, 0);  // NONE
      set_s(10, r.b);
      set_u(11, static_cast<uint64_t>(r.c));
      break;
    }
    case EventKind::kSpanBegin: {
      const SpanInfo& span = in_.sim->spans[static_cast<size_t>(r.c)];
      set_u(0, span.trace_hi);
      set_u(1, span.trace_lo);
      set_u(2, span.id);
      set_u(3, span.parent);
      bt_field_string_set_value(member(4), span.name.c_str());
      break;
    }
    case EventKind::kSpanEnd:
    case EventKind::kSpanHandoff:
      set_u(0, in_.sim->spans[static_cast<size_t>(r.c)].id);
      break;
    case EventKind::kStatedumpStart:
    case EventKind::kStatedumpEnd:
    case EventKind::kCount:
      break;
  }
}

bt_message_iterator_class_next_method_status HostMessageSource::Next(bt_self_message_iterator* it,
                                                                     bt_message_array_const msgs,
                                                                     uint64_t capacity,
                                                                     uint64_t* count) {
  uint64_t n = 0;
  while (n < capacity && begun_streams_ < in_.cpus) {
    msgs[n++] =
        bt_message_stream_beginning_create(it, streams_[static_cast<size_t>(begun_streams_++)]);
  }
  while (n < capacity) {
    // Merge the CPUs by time so the message sequence is globally ordered.
    int best = -1;
    Ns best_t = INT64_MAX;
    for (int cpu = 0; cpu < in_.cpus; ++cpu) {
      Ns t = NextTime(cpu);
      if (t < best_t) {
        best_t = t;
        best = cpu;
      }
    }
    if (best < 0) break;
    msgs[n++] = NextMessageOf(best, it);
  }
  while (n < capacity && ended_streams_ < in_.cpus) {
    bool all_done = true;
    for (const Cursor& c : cursors_) all_done = all_done && c.stage == Stage::kDone;
    if (!all_done) break;
    msgs[n++] = bt_message_stream_end_create(it, streams_[static_cast<size_t>(ended_streams_++)]);
  }
  *count = n;
  if (n == 0) return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
  return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
}

bt_component_class_initialize_method_status SourceInit(bt_self_component_source* self,
                                                       bt_self_component_source_configuration*,
                                                       const bt_value*, void* data) {
  auto* source = static_cast<HostMessageSource*>(data);
  bt_self_component* comp = bt_self_component_source_as_self_component(self);
  bt_self_component_set_data(comp, source);
  if (bt_self_component_source_add_output_port(self, "out", nullptr, nullptr) !=
      BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
  }
  try {
    source->BuildTraceIr(comp);
  } catch (const std::exception&) {
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
  }
  return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void SourceFinalize(bt_self_component_source* self) {
  auto* source = static_cast<HostMessageSource*>(
      bt_self_component_get_data(bt_self_component_source_as_self_component(self)));
  source->ReleaseTraceIr();
}

bt_message_iterator_class_initialize_method_status IteratorInit(
    bt_self_message_iterator* it, bt_self_message_iterator_configuration*,
    bt_self_component_port_output*) {
  bt_self_message_iterator_set_data(
      it, bt_self_component_get_data(bt_self_message_iterator_borrow_component(it)));
  return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

bt_message_iterator_class_next_method_status IteratorNext(bt_self_message_iterator* it,
                                                          bt_message_array_const msgs,
                                                          uint64_t capacity, uint64_t* count) {
  auto* source = static_cast<HostMessageSource*>(bt_self_message_iterator_get_data(it));
  return source->Next(it, msgs, capacity, count);
}

}  // namespace

void CtfTraceWriter::Write(const CtfHostInput& input, const std::string& dir) {
  HostMessageSource source(input);
  auto fail = [&](const std::string& what) {
    return std::runtime_error(fmt::format("writing the CTF trace of host '{}' into {}: {}{}",
                                          input.hostname, dir, what, TakeBabeltraceError()));
  };
  const bt_plugin* plugin = nullptr;
  if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, &plugin) !=
      BT_PLUGIN_FIND_STATUS_OK) {
    throw fail("babeltrace2 'ctf' plugin not found (install babeltrace2)");
  }
  const bt_component_class_sink* fs_class =
      bt_plugin_borrow_sink_component_class_by_name_const(plugin, "fs");
  bt_message_iterator_class* iter_class = bt_message_iterator_class_create(IteratorNext);
  bt_message_iterator_class_set_initialize_method(iter_class, IteratorInit);
  bt_component_class_source* src_class =
      bt_component_class_source_create("waitpath-gen", iter_class);
  bt_component_class_source_set_initialize_method(src_class, SourceInit);
  bt_component_class_source_set_finalize_method(src_class, SourceFinalize);

  bt_graph* graph = bt_graph_create(0);
  bt_value* params = bt_value_map_create();
  bt_value_map_insert_string_entry(params, "path", dir.c_str());
  bt_value_map_insert_bool_entry(params, "assume-single-trace", BT_TRUE);
  bt_value_map_insert_bool_entry(params, "quiet", BT_TRUE);

  std::string error;
  const bt_component_source* src = nullptr;
  const bt_component_sink* sink = nullptr;
  if (bt_graph_add_source_component_with_initialize_method_data(
          graph, src_class, "gen", nullptr, &source, BT_LOGGING_LEVEL_WARNING, &src) !=
      BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    error = "cannot create the source component";
  } else if (bt_graph_add_sink_component(graph, fs_class, "sink", params, BT_LOGGING_LEVEL_WARNING,
                                         &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    error = "cannot create the sink.ctf.fs component";
  } else if (bt_graph_connect_ports(graph,
                                    bt_component_source_borrow_output_port_by_index_const(src, 0),
                                    bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                    nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
    error = "cannot connect the source to sink.ctf.fs";
  } else {
    for (;;) {
      bt_graph_run_status st = bt_graph_run(graph);
      if (st == BT_GRAPH_RUN_STATUS_OK) break;
      if (st != BT_GRAPH_RUN_STATUS_AGAIN) {
        error = "the babeltrace2 graph failed";
        break;
      }
    }
  }
  std::runtime_error pending = error.empty() ? std::runtime_error("") : fail(error);
  bt_value_put_ref(params);
  bt_graph_put_ref(graph);  // finalizes the components: the sink flushes, the source frees IR
  bt_component_class_source_put_ref(src_class);
  bt_message_iterator_class_put_ref(iter_class);
  bt_plugin_put_ref(plugin);
  if (!error.empty()) throw pending;
}

}  // namespace waitpath::gen
