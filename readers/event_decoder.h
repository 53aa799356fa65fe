// Turns babeltrace2 events of any supported dialect into Event PODs. Field locations are
// resolved once per event class; the per-event path is index lookups only. What each kind
// reads is model/event_schema.h (shared with the native CTF decoder, live/ctf/).
#pragma once

#include <babeltrace2/babeltrace.h>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/dialect.h"
#include "model/event.h"
#include "model/event_schema.h"
#include "model/string_table.h"

namespace waitpath {

// One step down a field tree: a structure member or a variant option, by index.
struct FieldStep {
  uint16_t index;
  bool variant;  // the field at this level is a variant; index is the required option
};

// Where one integer (or string, or IPv4 address) lives inside an event's fields.
struct FieldRef {
  enum class Root : uint8_t { kNone, kPayload, kCommonContext, kSpecificContext };
  enum class Leaf : uint8_t { kSigned, kUnsigned, kString, kAddress };
  Root root = Root::kNone;
  Leaf leaf = Leaf::kSigned;
  uint8_t depth = 0;
  std::array<FieldStep, 6> steps{};
  bool valid() const { return root != Root::kNone; }
  bool is_string() const { return leaf == Leaf::kString; }
};

// Member indices of the flat waitpath_replay:event payload (model/replay_format.h), resolved by
// name once per event class, in ReplayField order.
struct ReplayLayout {
  static constexpr uint16_t kAbsent = 0xffff;  // an optional member the class lacks
  std::array<uint16_t, kReplayFieldCount> index{};
  std::array<bool, kReplayFieldCount> is_signed{};
};

class EventDecoder {
 public:
  // Decodes `event` into `out` (ts, host and cpu are the caller's, except for replayed events:
  // see carries_time()). Returns false for event classes of no interest to the analysis.
  // Packet keys are appended to `packets`.
  // Span begins' trace and parent ids are appended to `spans` (when given).
  bool Decode(const bt_event* event, Event& out, std::vector<PacketKey>& packets,
              std::vector<SpanIds>* spans = nullptr);

  // After a successful Decode: the event was a replayed one (waitpath_replay:event), whose
  // original timestamp and CPU are already in `out` and must replace the stream's.
  bool carries_time() const { return last_info_->replay; }

  uint32_t dialect() const { return dialect_; }
  // What an earlier decoder of the same host learnt (a reattached live graph).
  void AddDialect(uint32_t flags) { dialect_ |= flags; }

  // Learns the dialect from the names of a stream class's event classes (once per class).
  // Decode does it too; the reader calls it on each new stream so that a replayed host is
  // known as such before its first event (e.g. for a discarded-events message).
  void NoteStreamClass(const bt_stream_class* stream_class);

 private:
  // Where the class's fields are (ClassFields, shared with the native decoder).
  struct ClassInfo : ClassFields<FieldRef> {
    bool known = false;
    // waitpath_replay:event: its flat payload is read by member index instead.
    bool replay = false;
    ReplayLayout replay_layout;
  };

  class FieldReader;
  bool DecodeReplayed(const bt_event* event, const ReplayLayout& layout, Event& out,
                      std::vector<PacketKey>& packets, std::vector<SpanIds>* spans);

  const ClassInfo& Resolve(const bt_event_class* event_class);

  std::unordered_map<const bt_event_class*, ClassInfo> classes_;
  const bt_event_class* last_class_ = nullptr;
  const ClassInfo* last_info_ = nullptr;
  std::vector<const bt_stream_class*> seen_stream_classes_;
  uint32_t dialect_ = 0;
  LocalInterner strings_;
};

}  // namespace waitpath
