#include "readers/merging_sink.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>

#include "model/loss_marker.h"
#include "readers/bt_util.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

// The CPU a packet's context names (LTTng and perf: `cpu_id`), or -1.
int64_t PacketCpu(const bt_packet* packet) {
  const bt_field* ctx = bt_packet_borrow_context_field_const(packet);
  if (!ctx) return -1;
  const bt_field_class* fc = bt_field_borrow_class_const(ctx);
  const uint64_t n = bt_field_class_structure_get_member_count(fc);
  for (uint64_t i = 0; i < n; ++i) {
    const bt_field_class_structure_member* m =
        bt_field_class_structure_borrow_member_by_index_const(fc, i);
    if (std::string_view(bt_field_class_structure_member_get_name(m)) == "cpu_id") {
      return static_cast<int64_t>(bt_field_integer_unsigned_get_value(
          bt_field_structure_borrow_member_field_by_index_const(ctx, i)));
    }
  }
  return -1;
}

}  // namespace

MergingSink::MergingSink(HostInput& input, size_t ports) : input_(input), port_count_(ports) {
  decoder_.AddDialect(input.dialect);
  ++input.graphs;
}

MergingSink::~MergingSink() {
  ports_.clear();
  input_.dialect = decoder_.dialect();
  input_.cpus.ForgetStreams();
}

SinkClassRef MergingSink::CreateClass() {
  SinkClassRef cls(bt_component_class_sink_create("waitpath", &ConsumeMethod));
  bt_component_class_sink_set_initialize_method(cls.get(), &Init);
  bt_component_class_sink_set_graph_is_configured_method(cls.get(), &Configured);
  return cls;
}

MergingSink* MergingSink::From(bt_self_component_sink* self) {
  return static_cast<MergingSink*>(
      bt_self_component_get_data(bt_self_component_sink_as_self_component(self)));
}

bt_component_class_initialize_method_status MergingSink::Init(bt_self_component_sink* self,
                                                              bt_self_component_sink_configuration*,
                                                              const bt_value*, void* data) {
  auto* sink = static_cast<MergingSink*>(data);
  bt_self_component_set_data(bt_self_component_sink_as_self_component(self), sink);
  for (size_t i = 0; i < sink->port_count_; ++i) {
    const std::string name = "in" + std::to_string(i);
    if (bt_self_component_sink_add_input_port(self, name.c_str(), nullptr, nullptr) !=
        BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
      return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
  }
  return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

bt_component_class_sink_graph_is_configured_method_status MergingSink::Configured(
    bt_self_component_sink* self) {
  MergingSink* sink = From(self);
  sink->ports_.reserve(sink->port_count_);
  for (size_t i = 0; i < sink->port_count_; ++i) {
    bt_message_iterator* iterator = nullptr;
    if (bt_message_iterator_create_from_sink_component(
            self, bt_self_component_sink_borrow_input_port_by_index(self, i), &iterator) !=
        BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK) {
      return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    }
    const bt_port_input* in = bt_component_sink_borrow_input_port_by_index_const(
        bt_self_component_sink_as_component_sink(self), i);
    const bt_connection* c = bt_port_borrow_connection_const(bt_port_input_as_port_const(in));
    const bt_port_output* up = c ? bt_connection_borrow_upstream_port_const(c) : nullptr;
    sink->port_names_.push_back(up ? bt_port_get_name(bt_port_output_as_port_const(up)) : "");
    sink->port_streams_.push_back(sink->FindStream(sink->port_names_.back()));
    sink->ports_.emplace_back(static_cast<uint16_t>(i), iterator);
    sink->merger_.AddPort(static_cast<uint32_t>(i));
  }
  return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

bt_component_class_sink_consume_method_status MergingSink::ConsumeMethod(
    bt_self_component_sink* self) {
  return From(self)->Consume();
}

bt_component_class_sink_consume_method_status MergingSink::Consume() {
  // Every live port must show its next timestamp before anything can be merged.
  if (!merger_.RefillMissing(
          [this](uint32_t port, int64_t* ts) { return FillHead(ports_[port], ts); })) {
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
  }
  if (merger_.blocked()) {
    if (input_.batches.size() > 0) Flush();
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
  }
  while (merger_.has_head() && !input_.batches.full()) {
    PortCursor& p = ports_[merger_.PopEarliest()];
    if (!input_.holes.empty()) input_.EmitHoles(p.head_ts);
    switch (p.head) {
      case PortCursor::Head::kEvent:
        OnEvent(p, p.front());
        break;
      case PortCursor::Head::kDiscarded:
        OnDiscarded(p, p.front());
        break;
      case PortCursor::Head::kInactivity:
        // (A replayed host's inactivity messages are on the UST clock: its watermark only
        // advances with its events.)
        if (!Replayed()) input_.time.Idle(p.head_ts);
        break;
    }
    p.Pop();
    int64_t ts = 0;
    const Refill next = FillHead(p, &ts);
    if (!merger_.Requeue(p.index(), next, ts))
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    if (merger_.blocked()) break;
  }
  if (merger_.done()) {
    input_.EmitHoles(std::numeric_limits<int64_t>::max());
    Flush();  // HostReader::Run hands over the last batch
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
  }
  if (input_.batches.full()) Flush();
  return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
}

PortMerger::Refill MergingSink::FillHead(PortCursor& p, int64_t* ts) {
  for (;;) {
    const bt_message* m = nullptr;
    if (input_.where) {
      // Where babeltrace2 is about to decode: a contained reader that dies there is read again
      // without the rest of that stream (readers/reader_process.cc).
      const int32_t s = port_streams_[p.index()];
      input_.where->store(
          s < 0 ? 0 : (uint64_t(s) + 1) << 32 | (p.packets == 0 ? 0 : p.packets - 1),
          std::memory_order_relaxed);
    }
    switch (p.Front(&m)) {
      case PortCursor::Pull::kMessage:
        break;
      case PortCursor::Pull::kEnded:
        return Refill::kEnded;
      case PortCursor::Pull::kAgain:
        return Refill::kAgain;
      case PortCursor::Pull::kError:
        if (!input_.recorded) return Refill::kError;
        SkipRest(p);
        return Refill::kEnded;
    }
    switch (bt_message_get_type(m)) {
      case BT_MESSAGE_TYPE_EVENT:
        NoteStream(p, bt_event_borrow_stream_const(bt_message_event_borrow_event_const(m)));
        p.head = PortCursor::Head::kEvent;
        p.head_ts = p.has_clock ? ToNs(bt_message_event_borrow_default_clock_snapshot_const(m))
                                : input_.time.last();
        *ts = p.head_ts;
        return Refill::kHead;
      case BT_MESSAGE_TYPE_MESSAGE_ITERATOR_INACTIVITY:
        p.head = PortCursor::Head::kInactivity;
        p.head_ts = ToNs(bt_message_message_iterator_inactivity_borrow_clock_snapshot_const(m));
        *ts = p.head_ts;
        return Refill::kHead;
      case BT_MESSAGE_TYPE_PACKET_BEGINNING:
        OnPacket(p, bt_message_packet_beginning_borrow_packet_const(m));
        break;
      case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        // Handled in time order like an event: done here, ahead of the merge, its marker
        // would move the host's clock to this CPU's gap and clamp other CPUs' events.
        const bt_stream* stream = bt_message_discarded_events_borrow_stream_const(m);
        p.head = PortCursor::Head::kDiscarded;
        p.head_ts =
            bt_stream_class_discarded_events_have_default_clock_snapshots(
                bt_stream_borrow_class_const(stream))
                ? ToNs(bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(m))
                : input_.time.last();
        *ts = p.head_ts;
        return Refill::kHead;
      }
      default:
        break;
    }
    p.Pop();
  }
}

void MergingSink::OnEvent(PortCursor& p, const bt_message* m) {
  ++input_.counters.events;
  ++p.events;
  Batch& b = input_.batches.Current();
  Event& e = b.events.emplace_back();
  const bool used = decoder_.Decode(bt_message_event_borrow_event_const(m), e, b.packets, &b.spans);
  if (!used) {
    b.events.pop_back();
    ++input_.counters.unknown;
    // Other events of a replayed host are on the UST clock: they must not move its time.
    if (!Replayed()) input_.time.Event(p.head_ts);
    return;
  }
  int64_t ts = p.head_ts;
  uint16_t cpu = p.cpu;
  if (decoder_.carries_time()) {
    ts = input_.OnReplayed(p.head_ts, e, b);
    cpu = e.cpu;
  }
  e.ts = input_.time.Event(ts);
  e.host = input_.host;
  e.cpu = cpu;
}

void MergingSink::OnDiscarded(PortCursor& p, const bt_message* m) {
  const bt_stream* stream = bt_message_discarded_events_borrow_stream_const(m);
  NoteStream(p, stream);
  uint64_t count = 0;
  const bool known =
      bt_message_discarded_events_get_count(m, &count) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
  input_.counters.discarded += known ? count : 0;
  std::vector<Event>& out = input_.batches.Current().events;
  if (Replayed()) {
    // UST records lost by a replayed host: any of the original CPUs may have lost events, and
    // the UST clock is not the original one, so every CPU seen so far gets a marker at the
    // last original time (count unknown per CPU; the total is in the counters).
    AppendLossMarkers(out, input_.host, input_.cpus.ReplayedCpus(), input_.time.last());
    return;
  }
  int64_t begin = input_.time.last();
  if (bt_stream_class_discarded_events_have_default_clock_snapshots(
          bt_stream_borrow_class_const(stream))) {
    begin = ToNs(bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(m));
  }
  // Merged at the start of the gap (see FillHead): later events of other CPUs are not pushed
  // past it.
  out.push_back(
      LossMarker(input_.host, p.cpu, input_.time.Clamp(begin), begin, LossCount(known, count)));
}

void MergingSink::OnPacket(PortCursor& p, const bt_packet* packet) {
  ++p.packets;
  const int64_t cpu = PacketCpu(packet);
  if (cpu < 0) return;
  const bt_stream* stream = bt_packet_borrow_stream_const(packet);
  if (input_.cpus.SetStreamCpu(stream, static_cast<uint16_t>(cpu))) ++input_.counters.cpus;
  p.stream = nullptr;  // re-resolve with the new CPU
  NoteStream(p, stream);
}

void MergingSink::NoteStream(PortCursor& p, const bt_stream* stream) {
  if (stream == p.stream) return;
  p.stream = stream;
  const bt_stream_class* stream_class = bt_stream_borrow_class_const(stream);
  p.has_clock = bt_stream_class_borrow_default_clock_class_const(stream_class) != nullptr;
  decoder_.NoteStreamClass(stream_class);
  p.cpu = input_.cpus.CpuOf(stream, p.index());
  merger_.SetTie(p.index(), p.cpu);
}

int32_t MergingSink::FindStream(const std::string& port_name) const {
  // The port's name ends with its file: "UUID | STREAM-ID | PATH". babeltrace2 names the file
  // from its own (absolute, resolved) trace path: compare by resolved directory and name (the
  // files of a view are links, not to be resolved).
  const size_t bar = port_name.rfind(" | ");
  const std::string last = bar == std::string::npos ? port_name : port_name.substr(bar + 3);
  // "UUID | STREAM-CLASS-ID | STREAM-INSTANCE-ID" when the packet headers have an instance id.
  const size_t bar0 =
      bar == std::string::npos || bar == 0 ? std::string::npos : port_name.rfind(" | ", bar - 1);
  if (bar0 != std::string::npos && !last.empty() &&
      last.find_first_not_of("0123456789") == std::string::npos) {
    const uint64_t cls = std::strtoull(port_name.c_str() + bar0 + 3, nullptr, 10);
    const uint64_t instance = std::strtoull(last.c_str(), nullptr, 10);
    for (size_t i = 0; i < input_.streams.size(); ++i) {
      const StreamPackets& s = input_.streams[i];
      if (s.instance && *s.instance == instance && s.stream_id == cls)
        return static_cast<int32_t>(i);
    }
  }
  const fs::path file(last);
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(file.parent_path(), ec);
  for (size_t i = 0; i < input_.streams.size(); ++i) {
    const fs::path s(input_.streams[i].read_path);
    if (s.filename() == file.filename() && fs::weakly_canonical(s.parent_path(), ec) == dir)
      return static_cast<int32_t>(i);
  }
  return -1;
}

const StreamPackets* MergingSink::StreamOf(const PortCursor& p) const {
  const int32_t i = port_streams_[p.index()];
  return i < 0 ? nullptr : &input_.streams[static_cast<size_t>(i)];
}

void MergingSink::SkipRest(PortCursor& p) {
  const std::string cause = TakeBabeltraceError(false);
  if (input_.on_stream_error && input_.on_stream_error(cause)) return;
  // The port's name ends with its file: "UUID | STREAM-ID | PATH".
  const std::string& name = port_names_[p.index()];
  const size_t bar = name.rfind(" | ");
  const std::string file = bar == std::string::npos ? name : name.substr(bar + 3);
  std::string where = file;
  if (const StreamPackets* s = StreamOf(p)) {
    where = s->path;
    // The packet being read when it failed: the last one that began (packets are counted
    // from 1), or the first when none did.
    const uint64_t k = p.packets == 0 ? 0 : p.packets - 1;
    if (k < s->offsets.size()) {
      char hex[24];
      snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(s->offsets[k]));
      where += ": packet at offset " + std::string(hex);
    }
  }
  if (input_.warn) {
    input_.warn(where + ": " + (cause.empty() ? "cannot decode" : cause) + ": the rest of the " +
                "stream skipped (a loss on CPU " + std::to_string(p.cpu) + ", " +
                std::to_string(p.events) + " of its events read)");
  }
  const int64_t last = input_.time.last();
  const int64_t at = last == std::numeric_limits<int64_t>::min() ? 0 : last;
  input_.batches.Current().events.push_back(LossMarker(input_.host, p.cpu, at, at, -1));
  ++input_.counters.damaged;
}

void MergingSink::Flush() {
  input_.dialect = decoder_.dialect();
  input_.Flush();
}

}  // namespace waitpath
