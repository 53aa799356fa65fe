// Compiles CTF types into flat decoding programs: per scope (packet header, packet context,
// event header, common context, an event class's context and payload) a list of ops that read
// the integers and strings someone asked for (variant tags, sequence lengths, clock fields, the
// fields an Event needs) into value slots, and skip the rest: an unneeded run of fixed-size
// fields is one Skip of its bits. Programs are compiled once per class; decoding runs them
// (ctf/stream_cursor.h) without allocating.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ctf/ctf_metadata.h"
#include "model/event_schema.h"

namespace waitpath::ctf {

struct Op {
  enum Code : uint8_t {
    kAlign,      // arg: bits (a power of two)
    kSkip,       // arg: bits
    kInt,        // size bits into slot (when >= 0); flags: signed, big endian, clock, event id;
                 // arg: the mask of `size` bits
    kIntFast,    // kInt little-endian into a slot, neither clock nor event id (the common case)
    kString,     // NUL-terminated, into slot (offset and length) when >= 0
    kText,       // bytes (text array/sequence): `arg` of them, or slot `count` many; into slot
    kAddress,    // integers (array/sequence of `size` bits each): the first four as an IPv4 address
    kVariant,    // the option `table` selects by slot `count`'s value; runs its program
    kArray,      // runs program `sub` `arg` times, or slot `count`'s value times
    kSkipArray,  // skips `arg` (or slot `count`) elements of `sub_bits` bits each
    kFields      // the run of fixed-size fields `sub` (FieldRun) in one step
  };
  enum Flags : uint8_t { kSigned = 1, kBig = 2, kClock = 4, kEventId = 8 };
  Code code = kSkip;
  uint8_t size = 0;
  uint8_t flags = 0;
  int32_t slot = -1;
  int32_t count = -1;  // slot holding a sequence length / variant tag (-1: fixed `arg`)
  int32_t sub = -1;    // element program (kArray), variant table (kVariant)
  uint32_t sub_bits = 0;
  uint64_t arg = 0;
};

struct VariantCase {
  uint64_t lo, hi;  // inclusive, compared as the tag's signedness says
  int32_t program;
};
struct VariantTable {
  bool is_signed = false;
  std::vector<VariantCase> cases;
  std::vector<int32_t> options;  // the options' programs, in the variant's order
};

// A run of fixed-size little-endian fields (integers, skipped bits, text of a fixed length)
// that one op reads: one bounds check for the run, then each field at its offset. The
// interpreter's dispatch and per-field checks were most of a decoded event's cost.
struct FieldRead {
  // How: a whole little-endian integer at a byte (one load, no masking), any other integer
  // (bits), or text.
  enum Kind : uint8_t { kU8, kS8, kU16, kS16, kU32, kS32, kU64, kBits, kText };
  Kind kind;
  uint32_t offset;  // bits from the run's start
  Op op;            // kIntFast, kInt (little-endian) or kText (of `arg` bytes)
};
struct FieldRun {
  uint64_t bits = 0;     // the run's size
  bool on_byte = false;  // holds text or whole-byte reads: must start on a byte
  int32_t unfused = -1;  // the same ops one by one (a program): read when the check fails,
                         // so that damage gives the error (and partial effects) it always did
  std::vector<FieldRead> reads;
};

// How an Event slot reads one field (model/event_schema.h's Ref): a value slot and its kind.
struct FieldHandle {
  enum Leaf : uint8_t { kSigned, kUnsigned, kString, kAddress };
  int32_t slot = -1;
  Leaf leaf = kSigned;
  bool valid() const { return slot >= 0; }
  bool is_string() const { return leaf == kString; }
};

// Every field a program reads, by its path from its scope's root.
struct FieldEntry {
  int32_t scope;       // a program index: the root program of the scope
  uint8_t scope_kind;  // its DecodePlan::Scope
  std::string key;     // "event.fields.network_header._ipv4.saddr": names it in errors
  // From the scope's root, every step (a variant's option too): for Find, and TSDL locations.
  std::vector<std::string> path;
  // The same without variants' options: CTF 2 locations name only structure members.
  std::vector<std::string> members;
  bool in_array;  // an element's: not an Event field
  int32_t slot;
  TypeId type;
  FieldHandle::Leaf leaf;
};

// The programs of one trace. Slots are numbered across all of them; a decoder keeps one value
// per slot.
class DecodePlan {
 public:
  enum class Scope : uint8_t {
    kPacketHeader,
    kPacketContext,
    kEventHeader,
    kCommonContext,
    kEventContext,
    kPayload
  };

  explicit DecodePlan(const Metadata& meta) : meta_(meta) {}

  // Before any Compile: every value of every field is read, for a dump of the decoded events
  // (tools/ctf_dump) and nothing else: floating point numbers are read as their bits (an
  // unsigned slot; the engine skips them), arrays of integers element by element (kArray,
  // where the engine keeps at most an IPv4 address), arrays of fixed size are never skipped.
  void DumpEverything() { dump_ = true; }
  bool dump() const { return dump_; }

  // Compiles `type` as the root of `scope`: returns its program (-1 when type is -1). With
  // `keep_all`, every integer and string is read (stream-level scopes); otherwise only what
  // Want() marks before Finish().
  int32_t Compile(TypeId type, Scope scope, bool keep_all);
  // The field at `path` of the scope rooted at `program` (names compared as SameFieldName,
  // after dropping one leading underscore as babeltrace2 does); marks it wanted.
  FieldHandle Find(int32_t program, std::initializer_list<std::string_view> path);
  FieldHandle Find(int32_t program, const std::vector<std::string_view>& path);
  // The first integer of the scope rooted at `program` (not in an array) whose type has `role`;
  // marks it wanted. How the decoder finds header and context fields, whichever the format.
  FieldHandle FindRole(int32_t program, Role role);
  // Turns the unwanted reads of `program` (and its sub-programs) into skips, merging runs.
  void Finish(int32_t program);
  // Then joins the runs of fixed-size fields of `program` (and its sub-programs) into kFields.
  void Fuse(int32_t program);

  // The clock mapped by the scopes compiled so far ("" none).
  const std::string& clock() const { return clock_; }
  const std::string& error() const { return error_; }
  // The last compile's error was taken (an event class that cannot be read): go on with others.
  void ClearError() { error_.clear(); }

  const std::vector<Op>& program(int32_t p) const { return programs_[static_cast<size_t>(p)]; }
  const VariantTable& variant(int32_t v) const { return variants_[static_cast<size_t>(v)]; }
  const FieldRun& field_run(int32_t r) const { return runs_[static_cast<size_t>(r)]; }
  int32_t slots() const { return slots_; }

 private:
  struct Frame {
    std::vector<std::string> path;                        // of this struct (FieldEntry::path)
    std::vector<std::string> members_path;                // its FieldEntry::members
    std::vector<std::pair<std::string, TypeId>> members;  // declared so far
  };
  struct Context {
    Scope scope;
    int32_t root;
    bool keep_all;
    std::vector<Frame> frames;
    std::vector<std::string> path;
    std::vector<std::string> members;  // `path` without variants' options
    uint32_t depth = 0;
    uint32_t in_array = 0;
  };

  void Emit(Context& cx, TypeId type, int32_t program, const std::string& key);
  // The slot of the field `loc` locates, read before the field at `key` (-1 with error_ set, or
  // -1 alone for a TSDL location not found); its type in `type`.
  int32_t Resolve(const Context& cx, const FieldLocation& loc, const std::string& key,
                  TypeId* type);
  int32_t Lookup(Scope scope, const std::vector<std::string>& path, bool by_members, TypeId* type);
  // A variant's table of cases by its selector's type (TSDL: tag labels; CTF 2: option ranges).
  void VariantCases(const Type& t, const Type& selector, const std::vector<int32_t>& programs,
                    VariantTable* table);
  int32_t NewProgram();
  // Rewrites `program`; true when it became a fixed skip: [Align *align] Skip *bits.
  bool Optimize(int32_t program, uint32_t* align, uint64_t* bits);
  int32_t NewSlot(bool wanted);

  const Metadata& meta_;
  std::vector<std::vector<Op>> programs_;
  std::vector<VariantTable> variants_;
  std::vector<FieldRun> runs_;
  std::vector<FieldEntry> entries_;
  std::vector<bool> wanted_;  // per slot
  int32_t slots_ = 0;
  std::string clock_;
  std::string error_;
  bool dump_ = false;
};

}  // namespace waitpath::ctf
