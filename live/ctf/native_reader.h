// Reads one recorded host natively (no babeltrace2): its traces' stream files, one
// StreamCursor each, merged by time exactly as MergingSink merges babeltrace2's ports (the same
// PortMerger, ports in babeltrace2's order, the same clamping, loss markers and counters), each
// event decoded through the shared event schema (live/event_schema.h) into the host's batches.
// The batches are therefore the ones the babeltrace2 path makes, and nothing downstream knows
// which decoder ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "live/ctf/stream_cursor.h"
#include "live/host_input.h"
#include "live/port_merger.h"
#include "live/string_table.h"

namespace waitpath {

class NativeReader {
 public:
  explicit NativeReader(HostInput& input);
  ~NativeReader();
  NativeReader(const NativeReader&) = delete;
  NativeReader& operator=(const NativeReader&) = delete;

  // Loads every trace's metadata and compiles its plans: false with `why` (one line) when some
  // trace is beyond the native decoder (babeltrace2 must read the host then).
  bool Open(const std::vector<std::string>& dirs, std::string* why);
  // Reads to the end, or until `stop`; the batches go through the HostInput (its last one is
  // the caller's to hand over with Finish). Returns false when stopped.
  bool Run(const std::atomic<bool>& stop);

 private:
  enum class Head : uint8_t { kEvent, kDiscarded };
  struct Port {
    std::vector<std::string> files;  // one stream's: several when the relayd rotated it
    size_t next_file = 1;
    std::unique_ptr<ctf::StreamCursor> cursor;
    ctf::TraceDecoder* trace = nullptr;
    uint16_t index = 0;
    Head head = Head::kEvent;
    int64_t head_ts = 0;
    uint16_t cpu = 0;
    bool noted = false;  // its stream class's names are in the dialect
    uint64_t events = 0;
  };

  PortMerger::Refill FillHead(Port& p, int64_t* ts);
  void OnEvent(Port& p);
  void OnDiscarded(Port& p);
  void OnPacket(Port& p);
  void OnDamage(Port& p);
  void NoteStream(Port& p);
  bool Decode(Port& p, Event& out, std::vector<PacketKey>& packets, std::vector<SpanIds>* spans);
  void Flush();
  bool Replayed() const { return dialect_ & kDialectReplayed; }

  HostInput& input_;
  std::vector<std::unique_ptr<ctf::TraceDecoder>> traces_;
  std::vector<Port> ports_;
  PortMerger merger_;
  std::vector<const ctf::StreamClass*> seen_stream_classes_;
  uint32_t dialect_ = 0;
  LocalInterner strings_;
};

}  // namespace waitpath
