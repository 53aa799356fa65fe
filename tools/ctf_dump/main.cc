// waitpath-ctf-dump: every event of a CTF trace (CTF 1.8 or CTF 2) as the native decoder
// (ctf/) reads it, every field with its value, one JSON object per line; the native side of the
// babeltrace2 2.1 differential test (tests/lttng216/test_bt2_oracle.py).
//
//   waitpath-ctf-dump TRACE_DIR
//
// Stream files one after the other (TraceDecoder::files' order), each in its own order. Per
// event: {"stream": file name, "ts": clock cycles (the event header's clock, as babeltrace2's
// --clock-cycles prints it), "name": class name, "scopes": {...}} with the scopes babeltrace2's
// text sink prints: "stream.packet.context" (without the members whose roles give the packet
// its properties: sizes, clock snapshots, discarded events, sequence number; babeltrace2 drops
// them; absent when none is left), "stream.event.context", "event.context", "event.fields". A value
// is a JSON object:
//   {"i": N}                  integer (with "labels": [...] when its class has mappings); of
//                             display base 2, 8 or 16, its bits as babeltrace2 prints them
//   {"f": X}                  floating point number
//   {"t": "..."}              string (NUL-terminated, or a text array up to its first NUL)
//   {"s": [[NAME, V], ...]}   structure
//   {"a": [V, ...]}           array, sequence, BLOB
//   {"v": V or null}          variant (or optional) option, null when none is read
// Names are the metadata's, but for babeltrace2's rule on CTF 1.8 member names (one leading
// underscore dropped). Damage is a line {"error": "..."} and exit status 1.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "ctf/ctf_metadata.h"
#include "ctf/stream_cursor.h"

namespace {

using json = nlohmann::ordered_json;
using namespace waitpath::ctf;
using Logged = StreamCursor::Logged;

class Walker {
 public:
  Walker(const TraceDecoder& trace, DecodePlan& plan, const StreamCursor& cursor,
         std::span<const Logged> log)
      : meta_(trace.meta()), plan_(plan), cursor_(cursor), log_(log) {}

  // The value of a field of type `id`, taking its reads from the log.
  json Walk(TypeId id) {
    const Type& t = meta_.type(id);
    switch (t.kind) {
      case Type::kInt: {
        const Logged& l = Take(Logged::kValue);
        json v = {{"i", t.is_signed ? json(static_cast<int64_t>(l.v)) : json(l.v)}};
        if (t.base != 10) v["i"] = Bits(t, l.v);
        if (t.is_enum || !t.mappings.empty()) {
          json labels = json::array();
          for (const EnumMapping& m : t.mappings) {
            const bool in =
                t.is_signed
                    ? static_cast<int64_t>(l.v) >= m.lo && static_cast<int64_t>(l.v) <= m.hi
                    : l.v >= static_cast<uint64_t>(m.lo) && l.v <= static_cast<uint64_t>(m.hi);
            if (in) labels.push_back(m.label);
          }
          v["labels"] = labels;
        }
        return v;
      }
      case Type::kFloat: {
        const Logged& l = Take(Logged::kValue);
        double d = 0;
        if (t.size == 32) {
          d = std::bit_cast<float>(static_cast<uint32_t>(l.v));
        } else {
          d = std::bit_cast<double>(l.v);
        }
        return {{"f", d}};
      }
      case Type::kString:
        return {{"t", std::string(cursor_.LoggedText(Take(Logged::kValue)))}};
      case Type::kStruct: {
        json members = json::array();
        for (const auto& [name, member] : t.members) {
          std::string shown = name;
          if (meta_.format == Metadata::Format::kCtf18 && !shown.empty() && shown[0] == '_')
            shown.erase(0, 1);
          members.push_back(json::array({shown, Walk(member)}));
        }
        return {{"s", members}};
      }
      case Type::kVariant: {
        const Logged& l = Take(Logged::kOption);
        const VariantTable& table = plan_.variant(l.table);
        for (size_t i = 0; i < table.options.size(); ++i) {
          if (table.options[i] == static_cast<int32_t>(l.v))
            return {{"v", Walk(t.members[i].second)}};
        }
        return {{"v", nullptr}};  // an optional not enabled
      }
      case Type::kArray:
      case Type::kSequence: {
        const Type& e = meta_.type(t.element);
        if (e.kind == Type::kInt && e.text && e.size == 8 && e.align == 8)
          return {{"t", std::string(cursor_.LoggedText(Take(Logged::kValue)))}};
        const uint64_t n = Take(Logged::kArray).v;
        json elements = json::array();
        for (uint64_t i = 0; i < n; ++i) elements.push_back(Walk(t.element));
        return {{"a", elements}};
      }
    }
    return nullptr;
  }

  bool done() const { return at_ == log_.size(); }

  // An integer of display base 2, 8 or 16 as babeltrace2 prints it: its bits as an unsigned
  // number, a signed one's masked to its size rounded up to a whole digit (text.pretty's
  // print_integer: -2 in a 32-bit hexadecimal field is 0xFFFFFFFE, in a 64-bit one
  // 0xFFFFFFFFFFFFFFFE).
  static uint64_t Bits(const Type& t, uint64_t v) {
    if (t.size >= 64) return v;
    uint32_t bits = t.size;
    if (t.base == 16) bits = (t.size + 3) / 4 * 4;
    if (t.base == 8) bits = (t.size + 2) / 3 * 3;
    return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
  }

 private:
  const Logged& Take(Logged::Kind kind) {
    if (at_ >= log_.size() || log_[at_].kind != kind)
      throw std::runtime_error("the decoder's reads do not follow the field classes (read " +
                               std::to_string(at_) + ")");
    return log_[at_++];
  }

  const Metadata& meta_;
  DecodePlan& plan_;
  const StreamCursor& cursor_;
  std::span<const Logged> log_;
  size_t at_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: waitpath-ctf-dump TRACE_DIR\n");
    return 2;
  }
  TraceDecoder trace;
  trace.ReadForDump();
  std::string error;
  if (!trace.Open(argv[1], &error)) {
    std::printf("%s\n", json({{"error", error}}).dump().c_str());
    return 1;
  }
  const Metadata& meta = trace.meta();
  using S = DecodePlan::Scope;
  int status = 0;
  for (const std::string& file : trace.files()) {
    StreamCursor cursor(trace, file);
    cursor.LogEveryRead();
    const std::string stream = std::filesystem::path(file).filename().string();
    for (auto item = cursor.Next(); item != StreamCursor::Item::kEnd; item = cursor.Next()) {
      if (item == StreamCursor::Item::kError) {
        std::printf("%s\n", json({{"stream", stream}, {"error", cursor.error()}}).dump().c_str());
        status = 1;
        continue;
      }
      if (item != StreamCursor::Item::kEvent) continue;
      const StreamPlan& sp = *cursor.stream();
      const auto index = static_cast<size_t>(&cursor.event() - sp.events.data());
      const EventClass& ec = sp.sc->events[index];
      json scopes = json::object();
      auto scope = [&](const char* name, S s, TypeId root, bool packet) {
        if (root < 0) return;
        Walker w(trace, trace.plan(), cursor, cursor.logged(s));
        json v = w.Walk(root);
        if (!w.done()) throw std::runtime_error(std::string(name) + ": reads left over");
        if (packet) {
          // babeltrace2 makes packet properties of these (cpu_id, LTTng's, has no CTF 2 role).
          const Type& t = meta.type(root);
          json kept = json::array();
          for (size_t i = 0; i < t.members.size(); ++i) {
            const Type& m = meta.type(t.members[i].second);
            if ((m.roles & ~static_cast<uint16_t>(Role::kCpuId)) == 0) kept.push_back(v["s"][i]);
          }
          // None left (LTTng's per-channel buffers: no cpu_id): babeltrace2 prints no scope.
          if (kept.empty()) return;
          v["s"] = kept;
        }
        scopes[name] = v;
      };
      try {
        scope("stream.packet.context", S::kPacketContext, sp.sc->packet_context, true);
        scope("stream.event.context", S::kCommonContext, sp.sc->event_context, false);
        scope("event.context", S::kEventContext, ec.context, false);
        scope("event.fields", S::kPayload, ec.fields, false);
      } catch (const std::exception& e) {
        std::printf(
            "%s\n",
            json({{"stream", stream}, {"error", ec.name + ": " + e.what()}}).dump().c_str());
        return 1;
      }
      json line = {
          {"stream", stream}, {"ts", cursor.timestamp()}, {"name", ec.name}, {"scopes", scopes}};
      std::printf("%s\n", line.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    }
  }
  return status;
}
