// waitpath's babeltrace2 sink for one graph: the host's stream ports merged by time (not
// babeltrace2's muxer, which stops at a timestamp regression: LTTng 2.1 traces have them),
// decoded into the host's batches.
#pragma once

#include <babeltrace2/babeltrace.h>

#include <cstddef>
#include <string>
#include <vector>

#include "readers/bt_ref.h"
#include "readers/clock_converter.h"
#include "readers/event_decoder.h"
#include "readers/host_input.h"
#include "readers/port_cursor.h"
#include "readers/port_merger.h"

namespace waitpath {

// One input port per upstream stream port, each read through a PortCursor; PortMerger picks
// the earliest head; heads are events, inactivity (live) and discarded-events messages, the
// latter merged in time order like events. What outlives the graph is in HostInput.
class MergingSink {
 public:
  MergingSink(HostInput& input, size_t ports);
  // Releases this graph's message iterators and pending messages: before the graph goes.
  ~MergingSink();
  MergingSink(const MergingSink&) = delete;
  MergingSink& operator=(const MergingSink&) = delete;

  // The component class; add the component with this sink as initialize-method data.
  static SinkClassRef CreateClass();

 private:
  using Refill = PortMerger::Refill;

  static MergingSink* From(bt_self_component_sink* self);
  static bt_component_class_initialize_method_status Init(bt_self_component_sink* self,
                                                          bt_self_component_sink_configuration*,
                                                          const bt_value*, void* data);
  static bt_component_class_sink_graph_is_configured_method_status Configured(
      bt_self_component_sink* self);
  static bt_component_class_sink_consume_method_status ConsumeMethod(bt_self_component_sink* self);

  bt_component_class_sink_consume_method_status Consume();
  // Makes the port's next mergeable message its head (handling packet beginnings on the way).
  Refill FillHead(PortCursor& p, int64_t* ts);
  void OnEvent(PortCursor& p, const bt_message* m);
  void OnDiscarded(PortCursor& p, const bt_message* m);
  void OnPacket(PortCursor& p, const bt_packet* packet);
  void NoteStream(PortCursor& p, const bt_stream* stream);
  void Flush();

  int64_t ToNs(const bt_clock_snapshot* cs) { return clock_.ToNs(cs, input_.time.last()); }
  // A replayed host (waitpath-replay) streams on the UST clock, which is only its emission
  // order: its events carry their original time and CPU, and nothing else moves its time.
  bool Replayed() const { return decoder_.dialect() & kDialectReplayed; }

  HostInput& input_;
  const size_t port_count_;
  std::vector<PortCursor> ports_;
  PortMerger merger_;
  // Recorded input: port `p` fails; its stream is skipped from here (a loss on its CPU).
  void SkipRest(PortCursor& p);

  // The stream of input_.streams a port reads (-1: not known), from its name.
  int32_t FindStream(const std::string& port_name) const;
  const StreamPackets* StreamOf(const PortCursor& p) const;

  std::vector<std::string> port_names_;  // the upstream ports' ("UUID | ID | FILE")
  std::vector<int32_t> port_streams_;    // FindStream of each
  EventDecoder decoder_;
  ClockConverter clock_;
};

}  // namespace waitpath
