// The CTF 2 front-end of the metadata model (ctf/ctf_metadata.h). CTF 2 metadata is a JSON
// text sequence (RFC 7464: each record starts with the record separator 0x1E; LTTng 2.15+ writes
// no line feed after it) of fragments: preamble, field-class-alias, trace-class, clock-class,
// data-stream-class and event-record-class, as CTF2-SPEC-2.0 specifies them and LTTng's session
// daemon writes them (lttng-tools' ctf2-trace-class-visitor.cpp). The JSON is parsed with
// nlohmann-json under explicit bounds (Ctf2Limits) checked while it is read: hostile metadata is
// a one-line error naming the record and the limit or the property, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ctf/ctf_metadata.h"

namespace waitpath::ctf {

// The first byte of CTF 2 metadata (and of each of its records).
inline constexpr char kCtf2RecordSeparator = '\x1e';
// Whether metadata text is CTF 2 (a JSON text sequence), by its first byte; else TSDL.
inline bool IsCtf2Text(std::string_view text) {
  return !text.empty() && text.front() == kCtf2RecordSeparator;
}

// What hostile CTF 2 metadata runs into; each violated bound is an error that names it.
struct Ctf2Limits {
  uint64_t max_bytes = 64u << 20;  // the whole text (the TSDL path's bound)
  size_t max_records = 1u << 20;
  uint32_t max_depth = 64;            // field classes within field classes
  uint32_t max_json_depth = 256;      // JSON arrays and objects within each other, in a record
  size_t max_json_values = 1u << 21;  // in a record
  // Elements of any JSON array or object: members, options, mappings, ranges, path steps.
  size_t max_elements = 1u << 16;
  size_t max_event_classes = 1u << 18;
  size_t max_stream_classes = 1u << 16;
  size_t max_clock_classes = 1u << 16;
  // Elements of a static-length array, bytes of a static-length string or BLOB.
  uint64_t max_static_length = 1u << 24;
  size_t max_field_classes = 1u << 20;  // in all
};

// Parses CTF 2 metadata text (out of its metadata packets, when packetized) into `out`. On
// failure returns false and `error` is one line: "metadata record 7 (event-record-class):
// payload-field-class.member-classes[2] 'len': missing required property 'length'". Unknown
// roles, attributes and extensions outside the preamble are ignored; an extension the preamble
// declares is refused with its name (the spec: a consumer must not read a trace with an
// extension it does not support). What the native decoder cannot decode is refused the same way
// (so that `--decoder auto` lets babeltrace2 read the trace): variable-length integers, bit
// orders other than their byte order's, string encodings other than UTF-8, floating point
// numbers other than 32 and 64 bits, integers and bit arrays wider than 64 bits.
bool ParseCtf2(const std::string& text, Metadata* out, std::string* error,
               const Ctf2Limits& limits = {});

}  // namespace waitpath::ctf
