// Reading CTF data streams natively (CTF 1.8 or CTF 2: the metadata model is one): a trace's
// decoding plans (TraceDecoder: its metadata, per stream class the packet and event-header
// programs, header fields found by role, per event class its fields compiled on first use), and
// one stream file read packet by packet, event by event (StreamCursor, over a memory map). Every
// read is bounds-checked against the packet's content: damage is an error item naming the file
// and offset, never a crash; the cursor then goes on at the next packet.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ctf/ctf_metadata.h"
#include "ctf/decode_plan.h"
#include "ctf/event_assembly.h"
#include "model/event_schema.h"

namespace waitpath::ctf {

// What one event class means to waitpath, compiled the first time one of its events is read.
struct EventPlan {
  bool compiled = false;
  bool known = false;   // of a kind the analysis uses
  bool replay = false;  // waitpath_replay:event: `replay` holds its members
  std::string error;    // its layout cannot be decoded (e.g. a variant tag not found)
  int32_t context = -1, payload = -1;  // programs
  ClassFields<FieldHandle> fields;
  EventAssembly assembly;                  // compiled from `fields`
  std::vector<FieldHandle> replay_fields;  // in ReplayField order
};

// An event header that is one run of fixed size after an alignment, of the event id and the
// clock as whole unsigned little-endian integers (the generator's and perf's headers): Next()
// reads it without running its program (a tenth of a decoded event's instructions).
struct FixedHeader {
  bool on = false;
  uint64_t align = 1;  // bits
  uint64_t bits = 0;
  FieldRead id, clock;  // offsets from the aligned start
};

struct StreamPlan {
  const StreamClass* sc = nullptr;
  FixedHeader fixed_header;  // `on` when event_header is one
  int32_t packet_context = -1, event_header = -1, common_context = -1;
  // Packet-context fields babeltrace2 gives a meaning to (invalid when absent).
  FieldHandle ts_begin, ts_end, discarded, packet_size, content_size, cpu_id;
  std::vector<EventPlan> events;     // parallel to sc->events
  std::vector<int32_t> index_by_id;  // event id -> index in events (-1: none)
  // The index of event class `id` in events, -1 when the stream class has none.
  int32_t IndexOf(uint64_t id) const;
};

// One trace directory: its metadata and plans. Not thread-safe (one host reader owns it).
class TraceDecoder {
 public:
  // Loads and compiles; false with `error` when the metadata is not supported natively.
  bool Open(const std::string& dir, std::string* error);
  // The same from metadata text (live: the relayd sends it; there are no stream files).
  bool OpenText(const std::string& dir, const std::string& text, std::string* error);
  // Before Open: event classes compile to read every field of theirs, not only what the
  // analysis needs (Find then finds any; for dumps and tests, slower).
  void ReadEveryField() { every_field_ = true; }
  // Before Open: ReadEveryField, and every value of every field too (DecodePlan::
  // DumpEverything: floats, each array element), for StreamCursor::LogEveryRead.
  void ReadForDump() { every_field_ = dump_ = true; }

  const Metadata& meta() const { return meta_; }
  DecodePlan& plan() { return *plan_; }
  const std::string& dir() const { return dir_; }
  int32_t packet_header() const { return packet_header_; }
  FieldHandle magic() const { return magic_; }
  FieldHandle stream_id() const { return stream_id_; }
  StreamPlan* FindStream(uint64_t id);
  // The event class plan, compiled on first use; `dialect` gets what its layout says.
  EventPlan& Event(StreamPlan& stream, size_t index, uint32_t* dialect);
  // ns since the epoch of a clock value (1 GHz clocks: the offset plus the value). A value past
  // what int64 nanoseconds hold (a damaged packet, a relayd's index) saturates.
  int64_t ToNs(uint64_t cycles) const {
    int64_t ns = 0;
    if (cycles > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_add_overflow(base_ns_, static_cast<int64_t>(cycles), &ns)) {
      return std::numeric_limits<int64_t>::max();
    }
    return ns;
  }
  bool has_clock() const { return has_clock_; }
  // The stream files of the trace, in babeltrace2's port order (by path).
  const std::vector<std::string>& files() const { return files_; }

 private:
  bool Compile(std::string* error);

  std::string dir_;
  Metadata meta_;
  std::unique_ptr<DecodePlan> plan_;
  int32_t packet_header_ = -1;
  FieldHandle magic_, stream_id_;
  std::vector<StreamPlan> streams_;
  std::vector<std::string> files_;
  int64_t base_ns_ = 0;
  bool has_clock_ = false;
  bool every_field_ = false;
  bool dump_ = false;
};

// A stream read in order: packets, the discarded events their counters report, events. Its
// bytes are a memory-mapped stream file, or (live) the packets it is fed as they arrive.
class StreamCursor {
 public:
  enum class Item : uint8_t {
    kEvent,      // event() and timestamp() describe it
    kDiscarded,  // discarded events before the packet that begins: discarded_*()
    kPacket,     // a packet begins: packet_cpu()
    kError,      // damage: error() says what; reading goes on at the next sound packet
    kEnd
  };

  StreamCursor(TraceDecoder& trace, std::string path);
  // A stream whose packets come in memory (live): kEnd until fed, and again once it has read
  // what it was fed. `path` names it in errors.
  struct InMemory {};
  StreamCursor(TraceDecoder& trace, std::string path, InMemory);
  ~StreamCursor();
  StreamCursor(const StreamCursor&) = delete;
  StreamCursor& operator=(const StreamCursor&) = delete;

  Item Next();

  // Goes on from `previous`, the same stream's earlier file (a relayd rotates a stream over
  // several files): its last packet is this file's first one's predecessor, for the discarded
  // events counter and the clock, as if the files were one.
  void ContinueFrom(const StreamCursor& previous);
  // In memory: reads `packets` (whole ones; they must stay valid until the next Feed) after
  // what was read before (the stream's clock and counters go on).
  void Feed(std::span<const uint8_t> packets);
  // In memory, between packets: reads on with `trace`, the same trace with more metadata (live
  // metadata grows as applications register events).
  void Rebind(TraceDecoder& trace);

  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  // The current event's.
  EventPlan& event() const { return *event_; }
  StreamPlan* stream() const { return stream_; }
  uint64_t timestamp() const { return clock_; }
  // The current packet's cpu_id (-1 when its context has none).
  int64_t packet_cpu() const { return packet_cpu_; }
  // The last kDiscarded's: count known (not the stream's first packet), count, begin clock.
  bool discarded_known() const { return discarded_known_; }
  uint64_t discarded_count() const { return discarded_count_; }
  bool discarded_has_time() const { return discarded_has_time_; }
  uint64_t discarded_begin() const { return discarded_begin_; }
  uint32_t dialect() const { return dialect_; }  // learnt from event class layouts

  // Reading the current event's fields (FieldHandle slots).
  bool Has(const FieldHandle& h) const {
    return h.slot >= 0 && values_[static_cast<size_t>(h.slot)].epoch == epoch_;
  }
  uint64_t Raw(const FieldHandle& h) const { return values_[static_cast<size_t>(h.slot)].v; }
  std::string_view Text(const FieldHandle& h) const;

  // Every read of the current event (and of its packet's context), in order, when
  // LogEveryRead() was called (and the trace opened with ReadForDump): what a dump walks along
  // the scope's type (tools/ctf_dump). Values as their slots hold them; an array's element
  // count before its elements; a variant's chosen program (one of its table's options, or none
  // of them: an optional not enabled) before the option's reads.
  struct Logged {
    enum Kind : uint8_t { kValue, kArray, kOption } kind = kValue;
    int32_t slot = -1;   // kValue
    int32_t table = -1;  // kOption: DecodePlan::variant(table)
    uint64_t v = 0;      // kValue: the slot's value (strings: offset); kArray: count;
                         // kOption: the program run
    uint32_t len = 0;    // kValue, strings: bytes
  };
  void LogEveryRead() { log_on_ = true; }
  // The reads of the current event's scope `scope` (kPacketContext: of its packet's).
  std::span<const Logged> logged(DecodePlan::Scope scope) const;
  // A logged string's bytes (valid until the next packet).
  std::string_view LoggedText(const Logged& l) const {
    return {reinterpret_cast<const char*>(data_ + l.v), l.len};
  }

 private:
  struct Value {
    uint64_t v = 0;
    uint32_t len = 0;  // strings: bytes
    uint32_t epoch = 0;
  };

  // Starts the packet at offset_: false with error_ on damage.
  bool BeginPacket();
  // Runs `program` (logging every read when kLog: LogEveryRead's own instantiation, so that the
  // engine's has no test of it).
  template <bool kLog>
  bool Run(int32_t program);
  // Run, logging when asked to (the scope's log begins at its mark).
  bool RunScope(int32_t program, DecodePlan::Scope scope);
  void Log(int32_t slot, uint64_t v, uint32_t len) {
    log_.push_back(Logged{Logged::kValue, slot, -1, v, len});
  }
  // The event header described by `h` (FixedHeader), as Run(event_header) reads it.
  bool ReadFixedHeader(const FixedHeader& h);
  // Run's arrays, sequences and variants, at pos_.
  template <bool kLog>
  [[gnu::noinline]] bool RunComposite(const Op& op);
  // The program of the option variant `op` selects by its tag's value (-1: none).
  int32_t Option(const Op& op) const;
  // The error of a variant `op` whose tag selects no option (Option gave -1).
  [[gnu::cold, gnu::noinline]] bool NoOption(const Op& op);
  bool Fail(const std::string& what);
  // A kInt's effects beyond its slot: the clock, the event id.
  void Special(const Op& op, uint64_t v);
  // Fail from Run's loop, kept out of it (its position written back first).
  [[gnu::cold, gnu::noinline]] bool FailAt(uint64_t pos, const char* what);
  void EndPacket();

  TraceDecoder* trace_;
  const std::string path_;
  const bool mapped_ = true;  // data_ is a mapping of the file (else fed)
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;       // bytes
  uint64_t base_ = 0;       // bytes fed before data_ (errors name offsets in the stream)
  uint64_t released_ = 0;   // bytes: the mapping's pages before this were released (EndPacket)
  uint64_t populated_ = 0;  // bytes: the mapping's pages before this were mapped (BeginPacket)
  std::vector<Value> values_;
  uint32_t epoch_ = 1;

  uint64_t offset_ = 0;      // bytes: the current packet's start
  uint64_t packet_end_ = 0;  // bytes: the next packet's start
  uint64_t pos_ = 0;         // bits, absolute
  uint64_t end_ = 0;         // bits, absolute: the current packet's content end
  bool in_packet_ = false;
  bool packet_pending_ = false;  // kPacket not reported yet
  bool done_ = false;
  bool open_failed_ = false;  // reported once as an error
  StreamPlan* stream_ = nullptr;
  EventPlan* event_ = nullptr;
  uint64_t event_id_ = 0;
  bool have_event_id_ = false;
  uint64_t clock_ = 0;
  int64_t packet_cpu_ = -1;
  std::string error_;
  uint32_t dialect_ = 0;
  bool log_on_ = false;
  std::vector<Logged> log_, packet_log_;
  size_t marks_[6] = {};  // per DecodePlan::Scope: where its reads begin in log_ (packet_log_)
  size_t mark_ends_[6] = {};

  // babeltrace2's packet snapshots: this packet's and the previous one's (UINT64_MAX: none).
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  uint64_t begin_clock_ = kNone, end_clock_ = kNone, discarded_ = kNone;
  uint64_t prev_end_clock_ = kNone, prev_discarded_ = kNone;
  bool discarded_known_ = false, discarded_has_time_ = false;
  uint64_t discarded_count_ = 0, discarded_begin_ = 0;
};

}  // namespace waitpath::ctf
