#include "live/host_reader.h"

#include <babeltrace2/babeltrace.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "live/bt_ref.h"
#include "live/bt_util.h"
#include "live/clock_converter.h"
#include "live/event_decoder.h"
#include "live/loss_marker.h"

namespace waitpath {

// The merging sink: one input port per upstream stream port; a k-way merge on the ports'
// next timestamps. babeltrace2's muxer refuses streams whose timestamps regress (LTTng 2.1
// traces have them), so we merge ourselves and clamp instead.
struct HostReader::Sink {
  enum class Fill { kHead, kEnded, kAgain, kError };

  struct Port {
    bt_message_iterator* iterator = nullptr;
    bt_message_array_const messages = nullptr;
    uint64_t count = 0, pos = 0;
    bool ended = false;
    // What the port's next message is: it takes part in the merge at its time.
    enum class Head : uint8_t { kEvent, kInactivity, kDiscarded } head = Head::kEvent;
    int64_t head_ts = 0;
    // Cache of the last stream seen on this port (one stream per port for src.ctf.fs).
    const bt_stream* stream = nullptr;
    uint16_t cpu = 0;
    bool has_clock = true;
  };

  struct StreamCpu {
    const bt_stream* stream;
    uint16_t cpu;
  };

  HostReader& owner;
  size_t port_count;
  std::vector<Port> ports;
  std::vector<std::pair<int64_t, uint32_t>> heap;  // min-heap of (head ts, port)
  std::vector<uint32_t> missing;                   // ports whose head must be fetched
  std::vector<StreamCpu> stream_cpus;
  std::vector<uint16_t> gap_cpus;  // CPUs known from earlier graphs of this host
  EventDecoder decoder;
  BatchBuilder& batches;
  ReaderCounters counters;
  int64_t last_ts = std::numeric_limits<int64_t>::min();
  int64_t watermark = std::numeric_limits<int64_t>::min();
  // Replayed hosts (waitpath-replay): the original CPUs, which are not the UST streams' CPUs.
  std::vector<bool> replay_cpu_seen;
  uint32_t replay_cpus = 0;
  ClockConverter clock;

  Sink(HostReader& o, size_t n, BatchBuilder& b) : owner(o), port_count(n), batches(b) {}

  ~Sink() { DetachGraph(); }

  // Releases what this sink holds of its graph (pending messages, iterators).
  void DetachGraph() {
    for (Port& p : ports) {
      for (uint64_t i = p.pos; i < p.count; ++i) bt_message_put_ref(p.messages[i]);
      bt_message_iterator_put_ref(p.iterator);
    }
    ports.clear();
    heap.clear();
    missing.clear();
  }

  // A reattached graph goes on from where the previous one stopped: same counters, same
  // host clock (kept monotonic).
  void ContinueFrom(Sink& prev) {
    counters = prev.counters;
    last_ts = prev.last_ts;
    watermark = prev.watermark;
    replay_cpu_seen = prev.replay_cpu_seen;
    replay_cpus = prev.replay_cpus;
    for (const StreamCpu& s : prev.stream_cpus) gap_cpus.push_back(s.cpu);
    gap_cpus.insert(gap_cpus.end(), prev.gap_cpus.begin(), prev.gap_cpus.end());
    decoder.AddDialect(prev.decoder.dialect());
  }

  // The input broke off (relayd gone): what happened until it is back is lost on every CPU.
  void MarkGap() {
    std::vector<uint16_t> cpus = gap_cpus;
    for (const StreamCpu& s : stream_cpus) cpus.push_back(s.cpu);
    for (uint16_t c = 0; c < replay_cpu_seen.size(); ++c) {
      if (replay_cpu_seen[c]) cpus.push_back(c);
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    AppendLossMarkers(batches.Current().events, owner.host_id_, cpus,
                      last_ts == std::numeric_limits<int64_t>::min() ? 0 : last_ts);
    ++counters.gaps;
    Flush();
  }

  int64_t ToNs(const bt_clock_snapshot* cs) { return clock.ToNs(cs, last_ts); }

  void NoteStream(Port& p, const bt_stream* stream) {
    if (stream == p.stream) return;
    p.stream = stream;
    p.has_clock = bt_stream_class_borrow_default_clock_class_const(bt_stream_borrow_class_const(stream));
    decoder.NoteStreamClass(bt_stream_borrow_class_const(stream));
    p.cpu = static_cast<uint16_t>(&p - ports.data());
    for (const StreamCpu& s : stream_cpus) {
      if (s.stream == stream) p.cpu = s.cpu;
    }
  }

  // The CPU of a stream is in its packet context (LTTng and perf: `cpu_id`).
  void OnPacket(Port& p, const bt_packet* packet) {
    const bt_stream* stream = bt_packet_borrow_stream_const(packet);
    const bt_field* ctx = bt_packet_borrow_context_field_const(packet);
    int64_t cpu = -1;
    if (ctx) {
      const bt_field_class* fc = bt_field_borrow_class_const(ctx);
      const uint64_t n = bt_field_class_structure_get_member_count(fc);
      for (uint64_t i = 0; i < n; ++i) {
        const bt_field_class_structure_member* m = bt_field_class_structure_borrow_member_by_index_const(fc, i);
        if (std::string_view(bt_field_class_structure_member_get_name(m)) == "cpu_id") {
          cpu = static_cast<int64_t>(
              bt_field_integer_unsigned_get_value(bt_field_structure_borrow_member_field_by_index_const(ctx, i)));
          break;
        }
      }
    }
    if (cpu < 0) return;
    auto it = std::find_if(stream_cpus.begin(), stream_cpus.end(),
                           [&](const StreamCpu& s) { return s.stream == stream; });
    if (it == stream_cpus.end()) {
      stream_cpus.push_back({stream, static_cast<uint16_t>(cpu)});
      if (std::none_of(stream_cpus.begin(), stream_cpus.end() - 1,
                       [&](const StreamCpu& s) { return s.cpu == cpu; })) {
        ++counters.cpus;
      }
    } else {
      it->cpu = static_cast<uint16_t>(cpu);
    }
    p.stream = nullptr;  // re-resolve on the next event
    NoteStream(p, stream);
  }

  int64_t Clamp(int64_t ts) {
    if (ts < last_ts) {
      ++counters.regressions;
      ts = last_ts;
    }
    last_ts = ts;
    return ts;
  }

  // A replayed host's events carry the original timestamp and CPU, which replace the UST
  // clock and stream CPU; the merge order stays the UST emission order (original time order).
  bool Replayed() const { return decoder.dialect() & kDialectReplayed; }

  void NoteReplayedCpu(uint16_t cpu) {
    if (cpu >= replay_cpu_seen.size()) replay_cpu_seen.resize(cpu + 1u, false);
    if (!replay_cpu_seen[cpu]) {
      replay_cpu_seen[cpu] = true;
      ++replay_cpus;
    }
  }

  ReaderCounters Snapshot() const {
    ReaderCounters c = counters;
    c.dialect = decoder.dialect();
    if (Replayed()) c.cpus = replay_cpus;
    return c;
  }

  // UST lost records of a replayed host: any of the original CPUs may have lost events, and
  // the UST clock is not the original one, so every CPU seen so far gets a marker at the last
  // original time (count unknown per CPU; the total goes to the counters).
  void OnReplayDiscarded(bool known, uint64_t count) {
    counters.discarded += known ? count : 0;
    std::vector<uint16_t> cpus;
    for (size_t cpu = 0; cpu < replay_cpu_seen.size(); ++cpu) {
      if (replay_cpu_seen[cpu]) cpus.push_back(static_cast<uint16_t>(cpu));
    }
    AppendLossMarkers(batches.Current().events, owner.host_id_, cpus, last_ts);
  }

  void OnDiscarded(Port& p, const bt_message* m) {
    const bt_stream* stream = bt_message_discarded_events_borrow_stream_const(m);
    NoteStream(p, stream);
    uint64_t count = 0;
    const bool known =
        bt_message_discarded_events_get_count(m, &count) == BT_PROPERTY_AVAILABILITY_AVAILABLE;
    if (Replayed()) {
      OnReplayDiscarded(known, count);
      return;
    }
    int64_t begin = last_ts, end = last_ts;
    if (bt_stream_class_discarded_events_have_default_clock_snapshots(bt_stream_borrow_class_const(stream))) {
      begin = ToNs(bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(m));
      end = ToNs(bt_message_discarded_events_borrow_end_default_clock_snapshot_const(m));
    }
    counters.discarded += known ? count : 0;
    (void)end;
    // Merged at the start of the gap (see FillHead): later events of other CPUs are not
    // pushed past it.
    batches.Current().events.push_back(LossMarker(owner.host_id_, p.cpu, Clamp(begin), begin, LossCount(known, count)));
  }

  Fill FillHead(Port& p) {
    for (;;) {
      if (p.pos == p.count) {
        p.pos = p.count = 0;
        switch (bt_message_iterator_next(p.iterator, &p.messages, &p.count)) {
          case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
          case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: p.ended = true; return Fill::kEnded;
          case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return Fill::kAgain;
          default: return Fill::kError;
        }
      }
      const bt_message* m = p.messages[p.pos];
      switch (bt_message_get_type(m)) {
        case BT_MESSAGE_TYPE_EVENT: {
          NoteStream(p, bt_event_borrow_stream_const(bt_message_event_borrow_event_const(m)));
          p.head_ts = p.has_clock ? ToNs(bt_message_event_borrow_default_clock_snapshot_const(m)) : last_ts;
          p.head = Port::Head::kEvent;
          return Fill::kHead;
        }
        case BT_MESSAGE_TYPE_MESSAGE_ITERATOR_INACTIVITY:
          p.head_ts = ToNs(bt_message_message_iterator_inactivity_borrow_clock_snapshot_const(m));
          p.head = Port::Head::kInactivity;
          return Fill::kHead;
        case BT_MESSAGE_TYPE_PACKET_BEGINNING:
          OnPacket(p, bt_message_packet_beginning_borrow_packet_const(m));
          break;
        case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
          // Handled in time order like an event: done here, ahead of the merge, its marker
          // would move the host's clock to this CPU's gap and clamp other CPUs' events.
          const bt_stream* stream = bt_message_discarded_events_borrow_stream_const(m);
          p.head_ts = bt_stream_class_discarded_events_have_default_clock_snapshots(bt_stream_borrow_class_const(stream))
                          ? ToNs(bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(m))
                          : last_ts;
          p.head = Port::Head::kDiscarded;
          return Fill::kHead;
        }
        default:
          break;
      }
      bt_message_put_ref(m);
      ++p.pos;
    }
  }

  void HeapPush(uint32_t port) {
    heap.emplace_back(ports[port].head_ts, port);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  }

  void Flush() { batches.Flush(Snapshot(), watermark); }

  bt_component_class_sink_consume_method_status Consume() {
    // Every live port must show its next timestamp before anything can be merged.
    for (size_t i = 0; i < missing.size();) {
      switch (FillHead(ports[missing[i]])) {
        case Fill::kHead: HeapPush(missing[i]); [[fallthrough]];
        case Fill::kEnded: missing.erase(missing.begin() + static_cast<long>(i)); break;
        case Fill::kAgain: ++i; break;
        case Fill::kError: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
      }
    }
    if (!missing.empty()) {
      if (batches.size() > 0) Flush();
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
    }
    while (!heap.empty() && !batches.full()) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      const uint32_t index = heap.back().second;
      heap.pop_back();
      Port& p = ports[index];
      const bt_message* m = p.messages[p.pos];
      if (p.head == Port::Head::kDiscarded) {
        OnDiscarded(p, m);
      } else if (p.head == Port::Head::kEvent) {
        ++counters.events;
        Batch& b = batches.Current();
        Event& e = b.events.emplace_back();
        const bool used = decoder.Decode(bt_message_event_borrow_event_const(m), e, b.packets);
        int64_t ts = p.head_ts;
        uint16_t cpu = p.cpu;
        if (used && decoder.carries_time()) {
          ts = e.ts;
          cpu = e.cpu;
          NoteReplayedCpu(cpu);
          if (e.kind == EventKind::kLost && e.a > 0)
            counters.discarded += static_cast<uint64_t>(e.a);
        }
        if (!used) {
          b.events.pop_back();
          ++counters.unknown;
        }
        // Other events of a replayed host are on the UST clock: they must not move its time.
        if (used || !Replayed()) {
          ts = Clamp(ts);
          counters.first_ns = std::min(counters.first_ns, ts);
          counters.last_ns = ts;
          watermark = std::max(watermark, ts);
        }
        if (used) {
          e.ts = ts;
          e.host = owner.host_id_;
          e.cpu = cpu;
        }
      } else if (!Replayed()) {
        // (A replayed host's inactivity messages are on the UST clock; its watermark only
        // advances with its events.)
        watermark = std::max(watermark, p.head_ts);
      }
      bt_message_put_ref(m);
      ++p.pos;
      switch (FillHead(p)) {
        case Fill::kHead: HeapPush(index); break;
        case Fill::kEnded: break;
        case Fill::kAgain: missing.push_back(index); break;
        case Fill::kError: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
      }
      if (!missing.empty()) break;
    }
    if (heap.empty() && missing.empty()) {
      Flush();  // HostReader::Run hands over the last batch
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
    }
    if (batches.full()) Flush();
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
  }

  static Sink* From(bt_self_component_sink* self) {
    return static_cast<Sink*>(bt_self_component_get_data(bt_self_component_sink_as_self_component(self)));
  }

  static bt_component_class_initialize_method_status Init(bt_self_component_sink* self,
                                                          bt_self_component_sink_configuration*,
                                                          const bt_value*, void* data) {
    auto* sink = static_cast<Sink*>(data);
    bt_self_component_set_data(bt_self_component_sink_as_self_component(self), sink);
    for (size_t i = 0; i < sink->port_count; ++i) {
      const std::string name = "in" + std::to_string(i);
      if (bt_self_component_sink_add_input_port(self, name.c_str(), nullptr, nullptr) !=
          BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
      }
    }
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
  }

  static bt_component_class_sink_graph_is_configured_method_status Configured(bt_self_component_sink* self) {
    Sink* sink = From(self);
    sink->ports.resize(sink->port_count);
    for (size_t i = 0; i < sink->port_count; ++i) {
      if (bt_message_iterator_create_from_sink_component(
              self, bt_self_component_sink_borrow_input_port_by_index(self, i),
              &sink->ports[i].iterator) != BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK) {
        return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
      }
      sink->missing.push_back(static_cast<uint32_t>(i));
    }
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
  }

  static bt_component_class_sink_consume_method_status ConsumeMethod(bt_self_component_sink* self) {
    return From(self)->Consume();
  }
};

HostReader::HostReader(uint16_t host_id, HostSpec spec, ReaderOptions options,
                       moodycamel::LightweightSemaphore* ready)
    : host_id_(host_id),
      spec_(std::move(spec)),
      options_(options),
      ready_(ready),
      pool_(options.max_queued_batches),
      token_(queue_) {}

HostReader::~HostReader() {
  RequestStop();
  Join();
  Batch* b = nullptr;
  while (queue_.try_dequeue(b)) delete b;
}

void HostReader::Start() { thread_ = std::thread([this] { Run(); }); }

void HostReader::Join() {
  if (thread_.joinable()) thread_.join();
}

void HostReader::Push(Batch* batch) {
  // Backpressure keeps memory bounded when the consumer is slower than the reader.
  while (queue_.size_approx() >= options_.max_queued_batches && !stop_.load(std::memory_order_relaxed)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  queue_.enqueue(token_, batch);
  ready_->signal();
}

// Builds and runs one graph until it ends, fails or is stopped. `sink` keeps the state a
// reattached graph continues from (counters, the host's clock).
HostReader::Attempt HostReader::RunGraph(std::unique_ptr<Sink>& sink, BatchBuilder& batches, bool reattach) {
  const bt_logging_level level = options_.verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE;
  Attempt result;
  // Set-up and tear-down hold the lock; the references below are put in reverse order of
  // declaration (graph, then sink class, then plugin), after `sink` has let go of the graph.
  std::unique_lock lock(BabeltraceSetupMutex());
  PluginRef plugin;
  SinkClassRef sink_class;
  GraphRef graph;
  const bool live = !spec_.live_url.empty();
  const bt_component_class_source* src_class =
      FindSourceClass("ctf", live ? "lttng-live" : "fs", &plugin.out(), &result.error);
  if (src_class) graph.reset(bt_graph_create(0));
  std::vector<const bt_port_output*> outputs;
  const std::vector<std::string> inputs = live ? std::vector<std::string>{spec_.live_url} : spec_.trace_dirs;
  for (size_t i = 0; graph && result.error.empty() && i < inputs.size(); ++i) {
    ValueRef params(MakeInputsParams({inputs[i]}));
    if (live) {
      // A session that is gone ends the reader; after a reattach it may take a moment to
      // be served again.
      bt_value_map_insert_string_entry(params.get(), "session-not-found-action", reattach ? "continue" : "end");
    }
    const bt_component_source* src = nullptr;
    const std::string name = "src" + std::to_string(i);
    if (bt_graph_add_source_component(graph.get(), src_class, name.c_str(), params.get(), level, &src) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
      result.error = inputs[i] + (live ? ": cannot attach: " : ": cannot open trace: ") +
                     TakeBabeltraceError(options_.verbose);
      break;
    }
    for (uint64_t p = 0; p < bt_component_source_get_output_port_count(src); ++p) {
      outputs.push_back(bt_component_source_borrow_output_port_by_index_const(src, p));
    }
  }
  if (graph && result.error.empty()) {
    auto next = std::make_unique<Sink>(*this, outputs.size(), batches);
    if (sink) next->ContinueFrom(*sink);
    sink = std::move(next);
    sink_class.reset(bt_component_class_sink_create("waitpath", &Sink::ConsumeMethod));
    bt_component_class_sink_set_initialize_method(sink_class.get(), &Sink::Init);
    bt_component_class_sink_set_graph_is_configured_method(sink_class.get(), &Sink::Configured);
    const bt_component_sink* sink_comp = nullptr;
    if (bt_graph_add_sink_component_with_initialize_method_data(graph.get(), sink_class.get(), "waitpath", nullptr,
                                                                sink.get(), level, &sink_comp) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
      result.error = "cannot create the reading graph: " + TakeBabeltraceError(options_.verbose);
    }
    for (size_t i = 0; result.error.empty() && i < outputs.size(); ++i) {
      if (bt_graph_connect_ports(graph.get(), outputs[i],
                                 bt_component_sink_borrow_input_port_by_index_const(sink_comp, i),
                                 nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        result.error = "cannot connect trace streams: " + TakeBabeltraceError(options_.verbose);
      }
    }
  }
  lock.unlock();

  while (result.error.empty() && !stop_.load(std::memory_order_relaxed)) {
    const bt_graph_run_once_status status = bt_graph_run_once(graph.get());
    if (status == BT_GRAPH_RUN_ONCE_STATUS_OK) continue;
    if (status == BT_GRAPH_RUN_ONCE_STATUS_END) {
      result.ended = true;
      break;
    }
    if (status == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
      // Live: nothing new yet. babeltrace2 2.0's live iterator wants us to come back later.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    const uint64_t read = sink ? sink->counters.events : 0;
    result.error = "read stopped after " + std::to_string(read) + " events: " + TakeBabeltraceError(options_.verbose);
  }

  lock.lock();
  if (sink) sink->DetachGraph();  // releases our message iterators before the graph
  return result;
}

void HostReader::Run() {
  std::unique_ptr<Sink> sink;
  BatchBuilder batches(host_id_, options_.batch_events, pool_, [this](Batch* b) { Push(b); });
  Attempt attempt = RunGraph(sink, batches, /*reattach=*/false);
  // Live: a relayd that goes away is reattached with backoff by building a new graph
  // (babeltrace2 2.0's live iterator cannot recover in place); the gap is data loss.
  auto backoff = std::chrono::milliseconds(250);
  while (!spec_.live_url.empty() && !attempt.ended && !stop_.load(std::memory_order_relaxed)) {
    reconnects_.fetch_add(1, std::memory_order_relaxed);
    if (sink) sink->MarkGap();
    for (auto waited = std::chrono::milliseconds(0); waited < backoff && !stop_.load(std::memory_order_relaxed);
         waited += std::chrono::milliseconds(50)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    if (stop_.load(std::memory_order_relaxed)) break;
    attempt = RunGraph(sink, batches, /*reattach=*/true);
    if (attempt.error.empty()) backoff = std::chrono::milliseconds(250);
  }

  // Hand over what was read, with the reason it stops here (none when the input ended).
  batches.Flush(sink ? sink->Snapshot() : ReaderCounters{},
                sink ? sink->watermark : std::numeric_limits<int64_t>::min(), /*last=*/true,
                attempt.ended ? "" : attempt.error.empty() ? "stopped" : attempt.error);
  std::lock_guard lock(BabeltraceSetupMutex());
  sink.reset();
}

}  // namespace waitpath
