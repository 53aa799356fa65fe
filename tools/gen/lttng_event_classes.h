// The LTTng-modules kernel event layout expressed as babeltrace2 trace IR: one event class
// per event the generator writes, with payload members in LTTng's order (the writer sets
// members by these indices, never by name).
#pragma once

#include <babeltrace2/babeltrace.h>

#include <array>

#include "tools/gen/trace_record.h"

namespace waitpath::gen {

class LttngEventClasses {
 public:
  // Creates the event classes inside `stream_class` (owned by it).
  void Create(bt_trace_class* trace_class, bt_stream_class* stream_class);
  // The UST trace's instead: waitpath_span:begin/end/handoff (include/waitpath/span_tp.h), and
  // the stream's event context with the vtid and vpid contexts.
  void CreateSpans(bt_trace_class* trace_class, bt_stream_class* stream_class);

  bt_event_class* Get(EventKind kind) const { return classes_[static_cast<size_t>(kind)]; }

  // Packet context of every stream: LTTng's per-CPU `cpu_id`.
  static bt_field_class* CreatePacketContext(bt_trace_class* trace_class);

 private:
  std::array<bt_event_class*, static_cast<size_t>(EventKind::kCount)> classes_{};
};

// Indices of members inside the network_header variant's ipv4 option, and of the TCP
// header inside transport_header, as created by LttngEventClasses.
namespace lttng_layout {
constexpr uint64_t kNetSkbaddr = 0, kNetLen = 1, kNetName = 2, kNetHeaderType = 3, kNetHeader = 4;
constexpr uint64_t kIpv4Option = 1, kTcpOption = 1;
constexpr uint64_t kIpVersion = 0, kIpIhl = 1, kIpTos = 2, kIpTotLen = 3, kIpId = 4, kIpFragOff = 5,
                   kIpTtl = 6, kIpProtocol = 7, kIpChecksum = 8, kIpSaddr = 9, kIpDaddr = 10,
                   kIpTransportType = 11, kIpTransport = 12;
constexpr uint64_t kTcpSource = 0, kTcpDest = 1, kTcpSeq = 2, kTcpAckSeq = 3, kTcpDataOffset = 4,
                   kTcpReserved = 5, kTcpFlags = 6, kTcpWindow = 7, kTcpChecksum = 8,
                   kTcpUrgPtr = 9;
}  // namespace lttng_layout

}  // namespace waitpath::gen
