// Reads one host natively (no babeltrace2): its traces' stream files (recorded), or the packets
// a live session's streams receive (readers/live_reader.h), one StreamCursor each, merged by time
// exactly as MergingSink merges babeltrace2's ports (the same PortMerger, ports in babeltrace2's
// order, the same clamping, loss markers and counters), each event decoded through the shared event
// schema (model/event_schema.h) into the host's batches. The batches are therefore the ones the
// babeltrace2 path makes, and nothing downstream knows which decoder ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ctf/stream_cursor.h"
#include "model/packet_bytes.h"
#include "model/string_table.h"
#include "readers/host_input.h"
#include "readers/port_merger.h"

namespace waitpath {

// A live stream's packets as they arrive, for the reader to decode in order.
struct LivePackets {
  std::shared_ptr<ctf::TraceDecoder> trace;  // its trace, with the newest metadata
  std::deque<PacketBytes> packets;           // received; the front one is being read
  bool reading_front = false;
  std::optional<uint64_t> beacon;  // clock cycles: the stream has nothing before this
  bool ended = false;              // nothing comes after the packets queued
  // Set by the reader once the stream ended and was read to its end: it holds the stream no
  // more, and its owner may let it go.
  bool released = false;
  // A packet read to its end, given back (the receiver reuses the buffer).
  std::function<void(PacketBytes&&)> done;
};

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

  // Live: a stream whose packets come in `packets` (kept by the caller until the reader sets
  // `released`), merged from now on. `name` names it in errors; `cpu` is its CPU until a packet
  // context says (-1: unknown). A stream that ended and was read leaves its port to the next
  // one, so a relayd announcing streams and hanging them up holds nothing here. False when
  // kMaxLivePorts streams are held at once.
  bool AddLiveStream(LivePackets* packets, std::string name, int cpu);
  static constexpr size_t kMaxLivePorts = 65535;  // a port's index is 16 bits
  // How many live streams have been released so far: their owner may let them go when it
  // moves.
  size_t released() const { return released_; }
  enum class Merged : uint8_t {
    kBlocked,  // a stream has nothing yet: more packets or beacons are needed
    kEnded,    // every stream ended
    kStopped,
  };
  // Live: merges what the streams have received, as MergingSink merges a live graph's ports
  // (a beacon is an inactivity message: the host's watermark moves). The batch being filled
  // is the caller's to flush.
  Merged Merge(const std::atomic<bool>& stop);

 private:
  enum class Head : uint8_t { kEvent, kDiscarded, kInactivity };
  struct Port {
    std::vector<std::string> files;  // one stream's: several when the relayd rotated it
    size_t next_file = 1;
    std::unique_ptr<ctf::StreamCursor> cursor;
    std::shared_ptr<ctf::TraceDecoder> trace;
    LivePackets* live = nullptr;
    uint16_t index = 0;
    Head head = Head::kEvent;
    int64_t head_ts = 0;
    uint16_t cpu = 0;
    uint16_t fallback_cpu = 0;  // until a packet context says (recorded: the port's index)
    bool noted = false;         // its stream class's names are in the dialect
    uint64_t events = 0;
  };

  PortMerger::Refill FillHead(Port& p, int64_t* ts);
  // A live port's stream ended and was read: it is released and the port freed.
  PortMerger::Refill Release(Port& p);
  // A live port's next packet fed to its cursor: false when it has none yet.
  bool FeedLive(Port& p);
  void OnEvent(Port& p);
  void OnDiscarded(Port& p);
  void OnPacket(Port& p);
  void OnDamage(Port& p);
  void NoteStream(Port& p);
  bool Decode(Port& p, Event& out, std::vector<PacketKey>& packets, std::vector<SpanIds>* spans);
  void Flush();
  bool Replayed() const { return dialect_ & kDialectReplayed; }

  HostInput& input_;
  std::vector<std::shared_ptr<ctf::TraceDecoder>> traces_;
  std::vector<Port> ports_;
  std::vector<uint16_t> free_ports_;  // live ports whose stream was released, to reuse
  size_t released_ = 0;
  PortMerger merger_;
  std::vector<const ctf::StreamClass*> seen_stream_classes_;
  uint32_t dialect_ = 0;
  LocalInterner strings_;
};

}  // namespace waitpath
