// The metadata model of the native decoder, one for both formats it reads, and its TSDL front-end.
// Like babeltrace2 2.1's ctf-ir, one model is built by a front-end per format: CTF 1.8's TSDL
// (ParseTsdl, here: the subset LTTng 2.1 onwards, perf's `data convert --to-ctf`, waitpath's
// generator and its UST replayer write) and CTF 2's JSON text sequence (ParseCtf2,
// ctf/ctf2_metadata.h); ParseMetadataText picks one from the first byte. Decoding
// (decode_plan, stream_cursor) reads only the model.
//
// CTF 2's vocabulary is the richer one, so the model speaks it: header and context fields carry
// roles (CTF 2 writes them; the TSDL front-end gives them to the fields LTTng and CTF 1.8 name by
// convention: magic, stream_id, timestamp_begin, id...), dynamic lengths and variant selectors
// are field locations, booleans, bit arrays and BLOBs are the integers and arrays they decode as.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waitpath::ctf {

using TypeId = int32_t;  // index into Metadata::types; -1: none

// What a header or context field means (CTF 2's roles, one bit each; a type may have several).
// The decoder finds packet and event header fields by role when it compiles a stream class.
enum class Role : uint16_t {
  kPacketMagicNumber = 1 << 0,        // packet header: 0xC1FC1FC1 (TSDL: magic)
  kMetadataStreamUuid = 1 << 1,       // packet header: the metadata's uuid (TSDL: uuid)
  kDataStreamClassId = 1 << 2,        // packet header: the stream class (TSDL: stream_id)
  kDataStreamId = 1 << 3,             // packet header: the stream (TSDL: stream_instance_id)
  kPacketTotalLength = 1 << 4,        // packet context, bits (TSDL: packet_size)
  kPacketContentLength = 1 << 5,      // packet context, bits (TSDL: content_size)
  kDefaultClockTimestamp = 1 << 6,    // packet context: its beginning (TSDL: timestamp_begin);
                                      // event header: the event's (TSDL: timestamp, or an
                                      // integer mapped to a clock)
  kPacketEndClockTimestamp = 1 << 7,  // packet context (TSDL: timestamp_end)
  kDiscardedEventCounter = 1 << 8,    // packet context (TSDL: events_discarded)
  kPacketSequenceNumber = 1 << 9,     // packet context (TSDL: packet_seq_num)
  kEventRecordClassId = 1 << 10,      // event header (TSDL: id)
  // Not CTF 2's: LTTng's per-CPU channels name a packet context field cpu_id in both formats
  // without a role; both front-ends give it this one, so that the decoder reads no names.
  kCpuId = 1 << 11,
};

// Where a dynamic-length field's length or a variant's (or optional's) selector is: a field
// decoded before it. The decode plan resolves it to a value slot.
struct FieldLocation {
  // The scopes, in decoding order (as DecodePlan::Scope); kRelative: from the field itself.
  enum class Origin : uint8_t {
    kRelative,
    kPacketHeader,
    kPacketContext,
    kEventHeader,
    kCommonContext,    // a stream class's event context
    kSpecificContext,  // an event class's context
    kPayload
  };
  // kTsdl: every step is named, a variant's option included; a relative path starts at the
  // innermost enclosing structure that declares its first name, then outwards, then at each
  // scope's root (TSDL's lexical scoping). kCtf2: only structure members are named (variants,
  // optionals and arrays are crossed as decoded); a relative path starts at the structure that
  // contains the field, a step without a name (nullopt) going up to the enclosing structure.
  enum class Syntax : uint8_t { kTsdl, kCtf2 };
  Origin origin = Origin::kRelative;
  Syntax syntax = Syntax::kTsdl;
  std::vector<std::optional<std::string>> path;
  std::string text;  // as written, for errors
};

// A variant option's selector values (CTF 2), inclusive; compared as the selector's signedness
// says (negative bounds are their two's complement bits).
struct SelectorRange {
  uint32_t option = 0;  // index into Type::members
  uint64_t lo = 0, hi = 0;
};

struct EnumMapping {
  std::string label;
  int64_t lo = 0, hi = 0;  // inclusive; compared as the container's signedness says
};

// A field's type. CTF 2's field classes map onto these kinds: fixed-length integers, booleans,
// bit arrays and bit maps are kInt; strings of a static or dynamic length are arrays or
// sequences of 8-bit `text` integers, BLOBs of plain 8-bit ones; an optional is a kVariant of
// one option.
struct Type {
  enum Kind : uint8_t { kInt, kFloat, kString, kStruct, kVariant, kArray, kSequence } kind = kInt;
  uint32_t size = 0;   // bits (integers, floats)
  uint32_t align = 8;  // bits
  bool is_signed = false;
  uint8_t byte_order = 0;  // 0: the trace's, 1: little, 2: big
  bool text = false;       // an integer with an encoding: arrays/sequences of it are strings
  uint8_t base = 10;       // integers: the display base (TSDL's base, CTF 2's preferred one):
                           // how babeltrace2 prints them (tools/ctf_dump), not decoding
  std::string clock;       // the clock an integer maps to ("" when none)
  bool is_enum = false;
  uint16_t roles = 0;                                   // Role bits
  std::vector<EnumMapping> mappings;                    // enums
  std::vector<std::pair<std::string, TypeId>> members;  // struct members, variant options
  FieldLocation ref;  // variant selector (TSDL: tag), sequence length
  // CTF 2 variants: the values selecting each option (TSDL's are its tag's enum labels).
  std::vector<SelectorRange> selector_ranges;
  // CTF 2 optional: a kVariant whose one option is read when the selector is in
  // `selector_ranges` (none: a boolean selector, when it is not 0), nothing otherwise.
  bool optional = false;
  TypeId element = -1;  // arrays, sequences
  uint64_t length = 0;  // arrays

  bool Has(Role r) const { return (roles & static_cast<uint16_t>(r)) != 0; }
};

struct Clock {
  std::string name;  // what integers map to: TSDL's clock name, CTF 2's clock class id
  uint64_t freq = 1000000000;
  int64_t offset_s = 0;
  int64_t offset = 0;  // cycles
  std::string uid;     // TSDL's uuid, CTF 2's uid ("" when none)
  // What the offset counts from: the Unix epoch (CTF 2's "unix-epoch", TSDL's absolute = true),
  // another origin (CTF 2: `origin_id`, "namespace/name/uid"), or unknown.
  enum class Origin : uint8_t { kUnknown, kUnixEpoch, kCustom } origin = Origin::kUnknown;
  std::string origin_id;
};

struct EventClass {
  uint64_t id = 0;
  uint64_t stream_id = 0;
  std::string name;
  TypeId context = -1;
  TypeId fields = -1;
};

struct StreamClass {
  uint64_t id = 0;
  std::string default_clock;  // CTF 2's default clock class ("" none; TSDL: its integers say)
  TypeId packet_context = -1;
  TypeId event_header = -1;
  TypeId event_context = -1;
  std::vector<EventClass> events;  // sorted by id
  const EventClass* Find(uint64_t event_id) const;
};

struct Metadata {
  enum class Format : uint8_t { kCtf18, kCtf2 };
  Format format = Format::kCtf18;
  std::vector<Type> types;
  uint8_t byte_order = 1;  // the trace's: 1 little, 2 big (CTF 2: every field says its own)
  std::string uuid;        // TSDL: as written; CTF 2: the preamble's, 8-4-4-4-12 hex ("" none)
  std::string trace_uid;   // CTF 2's trace class uid ("" none)
  // From env, for reporting: "lttng-modules", "2.13.7" ("" when env does not say).
  std::string tracer_name, tracer_version;
  TypeId packet_header = -1;
  std::vector<Clock> clocks;
  std::vector<StreamClass> streams;  // sorted by id
  std::map<std::string, std::string> env;

  const Type& type(TypeId id) const { return types[static_cast<size_t>(id)]; }
  const StreamClass* FindStream(uint64_t id) const;
  const Clock* FindClock(const std::string& name) const;
  // "CTF 1.8" or "CTF 2".
  const char* FormatName() const { return format == Format::kCtf2 ? "CTF 2" : "CTF 1.8"; }
};

// What TSDL text is held to beyond the grammar. The defaults are what the decoder reads (it
// bounds every array by the bits left in its packet); the trace check asks for less, for
// babeltrace2's sake (TsdlLimits, ctf/trace_check.h: babeltrace2 allocates per array element).
struct TsdlBounds {
  uint64_t max_array_length = UINT64_MAX;  // a static array's length
  // Nesting of structures, variants, enums and array dimensions in one declaration; the types
  // being parsed at once (a typealias inside a structure begins another declaration) may nest
  // twice as deep, so that no text recurses without bound.
  uint32_t max_depth = 64;
};

// Why TSDL text was not read, and where.
struct TsdlError {
  enum class Kind : uint8_t {
    // Not metadata to hand any reader: cut short (the text ends inside a declaration), over the
    // bounds, or what babeltrace2 refuses too (an integer of 0 or more than 64 bits, a float
    // other than 32 or 64, an alignment not a power of two, a duplicate member, a stream or
    // event id declared twice, an event of a stream never declared, a clock of frequency 0, an
    // unknown byte order or encoding, a trace `major` other than 1 or `minor` other than 8, an
    // attribute that must be a number and is not).
    kInvalid,
    // Syntax this front-end does not know (an unknown type name, a declarator it does not
    // read): babeltrace2 may read it.
    kUnsupported,
  };
  Kind kind = Kind::kUnsupported;
  std::string message;  // one line (control bytes shown as \xNN)
  size_t offset = 0;    // bytes into the text
  size_t line = 1;
};

// Parses TSDL text (already out of its metadata packets) within `bounds`. On failure returns
// false and `error` says what, where, and whether it is invalid or only beyond this front-end.
bool ParseTsdl(const std::string& text, const TsdlBounds& bounds, Metadata* out, TsdlError* error);
// The same within the default bounds; `error`: "metadata line N: what".
bool ParseTsdl(const std::string& text, Metadata* out, std::string* error);

// Parses metadata text with the front-end its first byte names: CTF 2 when it is the JSON text
// sequence's record separator 0x1E (ParseCtf2), TSDL otherwise. Every reader of metadata text
// (recorded and live) goes through here.
bool ParseMetadataText(const std::string& text, Metadata* out, std::string* error);

// Reads the `metadata` file of trace directory `dir` (text, or packetized: the 0x75D11D57
// magic) and parses it (ParseMetadataText).
bool LoadMetadata(const std::string& dir, Metadata* out, std::string* error);

namespace detail {

// `root` (a structure) with `change` applied to its members and, when `nested`, to the members
// of the structures and variants below them (never inside arrays), copying only the types under
// which something changed: aliased types other scopes share stay as they are. `change(name,
// top, type)` may modify `type` (a copy) and says whether it did; `top`: a member of `root`
// itself. Nesting deeper than 64 is left alone (the decode plan refuses it). Both front-ends
// give roles (and CTF 2 its clock) with it.
TypeId RewriteMembers(
    Metadata& m, TypeId root, bool nested,
    const std::function<bool(const std::string& name, bool top, Type& type)>& change);

// Whether member `name` is `want`, with up to two leading underscores (babeltrace2 drops one,
// TSDL writers add one to names that are keywords): the decoder's rule for names.
bool NameIs(const std::string& name, std::string_view want);

// Sets `m`'s tracer_name/tracer_version from its env (tracer_name, tracer_major, ...).
void NoteTracer(Metadata* m);

}  // namespace detail

}  // namespace waitpath::ctf
