// The CTF 1.8 metadata model of the native decoder, and the TSDL parser that builds it: the
// subset LTTng (kernel and UST, 2.1 onwards), perf's `data convert --to-ctf`, waitpath's
// generator and its UST replayer write: integers (size, alignment, byte order, signedness, base,
// encoding, clock mapping), enums, floats, strings, structs, variants, arrays and sequences,
// type aliases and typedefs, `trace`, `env`, `clock`, `stream` and `event` blocks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace waitpath::ctf {

using TypeId = int32_t;  // index into Metadata::types; -1: none

struct EnumMapping {
  std::string label;
  int64_t lo = 0, hi = 0;  // inclusive; compared as the container's signedness says
};

struct Type {
  enum Kind : uint8_t { kInt, kFloat, kString, kStruct, kVariant, kArray, kSequence } kind = kInt;
  uint32_t size = 0;   // bits (integers, floats)
  uint32_t align = 8;  // bits
  bool is_signed = false;
  uint8_t byte_order = 0;  // 0: the trace's, 1: little, 2: big
  bool text = false;       // an integer with an encoding: arrays/sequences of it are strings
  std::string clock;       // the clock an integer maps to ("" when none)
  bool is_enum = false;
  std::vector<EnumMapping> mappings;                    // enums
  std::vector<std::pair<std::string, TypeId>> members;  // struct members, variant options
  std::string ref;      // variant tag, sequence length (a field path as written)
  TypeId element = -1;  // arrays, sequences
  uint64_t length = 0;  // arrays
};

struct Clock {
  std::string name;
  uint64_t freq = 1000000000;
  int64_t offset_s = 0;
  int64_t offset = 0;  // cycles
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
  TypeId packet_context = -1;
  TypeId event_header = -1;
  TypeId event_context = -1;
  std::vector<EventClass> events;  // sorted by id
  const EventClass* Find(uint64_t event_id) const;
};

struct Metadata {
  std::vector<Type> types;
  uint8_t byte_order = 1;  // the trace's: 1 little, 2 big
  std::string uuid;        // as written ("" when none)
  TypeId packet_header = -1;
  std::vector<Clock> clocks;
  std::vector<StreamClass> streams;  // sorted by id
  std::map<std::string, std::string> env;

  const Type& type(TypeId id) const { return types[static_cast<size_t>(id)]; }
  const StreamClass* FindStream(uint64_t id) const;
  const Clock* FindClock(const std::string& name) const;
};

// `s` with control bytes shown as \xNN: names and errors from damaged input stay one line.
std::string PrintableText(const std::string& s);

// Parses TSDL text (already out of its metadata packets). On failure returns false and
// `error` says where (line) and what.
bool ParseTsdl(const std::string& text, Metadata* out, std::string* error);

// Reads the `metadata` file of trace directory `dir` (plain TSDL or packetized, the
// 0x75D11D57 magic) and parses it.
bool LoadMetadata(const std::string& dir, Metadata* out, std::string* error);

}  // namespace waitpath::ctf
