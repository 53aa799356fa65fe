// One event class's Event assembly for the native decoder, compiled once from where the class's
// fields are (ClassFields<FieldHandle>, model/event_schema.h): an Event holding what every event
// of the class has whatever its fields say (the kind, each slot's fallback, an IPI's type), and
// the copies from value slots into Event members each event then makes. It assembles what
// BuildEvent assembles from the same ClassFields (EventAssembly.* in event_assembly_unittest.cc
// holds it to that, byte for byte), without BuildEvent's per-field tests of whether a field was
// located and of what kind it is, which are the same for every event of a class. Classes whose
// assembly does more than copy (packet keys, span ids) are left to BuildEvent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ctf/decode_plan.h"
#include "model/event.h"
#include "model/event_schema.h"

namespace waitpath::ctf {

struct EventAssembly {
  enum How : uint8_t {
    kInt32,   // the value's low 32 bits (BuildEvent's static_cast<int32_t>)
    kInt64,   // Event::x
    kCtx,     // perf's common_flags: the interrupt bits, known
    kString,  // an interned name
  };
  struct Copy {
    FieldHandle field;
    uint8_t offset;  // of the Event member
    How how;
  };

  bool general = true;  // BuildEvent assembles this class
  Event base{};
  uint8_t count = 0;
  std::array<Copy, 8> copies{};

  // The assembly of a class of `fields` (general for packets and span begins).
  static EventAssembly Compile(const ClassFields<FieldHandle>& fields);

  // `out` (all but ts, host and cpu) from the current event of `cursor` (Has, Raw, Text of a
  // FieldHandle), names interned by `strings`. Only for a class that is not general.
  template <class Cursor, class Interner>
  void Assemble(const Cursor& cursor, Interner& strings, Event& out) const {
    out = base;
    auto* const bytes = reinterpret_cast<unsigned char*>(&out);
    for (uint8_t i = 0; i < count; ++i) {
      const Copy& k = copies[i];
      if (!cursor.Has(k.field)) continue;  // a variant option not selected: the fallback
      switch (k.how) {
        case kInt32: {
          const auto v = static_cast<int32_t>(cursor.Raw(k.field));
          std::memcpy(bytes + k.offset, &v, sizeof v);
          break;
        }
        case kInt64: {
          const uint64_t v = cursor.Raw(k.field);
          std::memcpy(bytes + k.offset, &v, sizeof v);
          break;
        }
        case kCtx:
          out.ctx = static_cast<uint8_t>(
              (cursor.Raw(k.field) & (kCtxHardirq | kCtxSoftirq | kCtxNmi)) | kCtxKnown);
          break;
        case kString: {
          const auto v = static_cast<int32_t>(strings.Intern(cursor.Text(k.field)));
          std::memcpy(bytes + k.offset, &v, sizeof v);
          break;
        }
      }
    }
  }
};

inline EventAssembly EventAssembly::Compile(const ClassFields<FieldHandle>& f) {
  EventAssembly as;
  if (f.kind == EventKind::kPacketOut || f.kind == EventKind::kPacketIn ||
      f.kind == EventKind::kSpanBegin) {
    return as;
  }
  as.general = false;
  Event& e = as.base;
  e.kind = f.kind;
  auto add = [&](const FieldHandle& h, size_t offset, How how) {
    as.copies[as.count++] = Copy{h, static_cast<uint8_t>(offset), how};
  };
  // BuildEvent's num(): a field located as an integer is read, anything else is the fallback.
  auto integer = [](const FieldHandle& h) {
    return h.valid() && h.leaf != FieldHandle::kString && h.leaf != FieldHandle::kAddress;
  };
  auto int32 = [&](const FieldHandle& h, int32_t& member, size_t offset) {
    member = -1;
    if (integer(h)) add(h, offset, kInt32);
  };
  // BuildEvent's slot(): a name (interned) when located as a string, else as num().
  auto name_or_int32 = [&](const FieldHandle& h, int32_t& member, size_t offset) {
    member = -1;
    if (h.is_string()) {
      if (h.valid()) add(h, offset, kString);
    } else if (integer(h)) {
      add(h, offset, kInt32);
    }
  };
  int32(f.cur_tid, e.cur_tid, offsetof(Event, cur_tid));
  int32(f.cur_pid, e.cur_pid, offsetof(Event, cur_pid));
  e.ctx = f.ctx.valid() ? kCtxKnown : 0;
  if (integer(f.ctx)) add(f.ctx, offsetof(Event, ctx), kCtx);
  int32(f.a, e.a, offsetof(Event, a));
  int32(f.b, e.b, offsetof(Event, b));
  name_or_int32(f.c, e.c, offsetof(Event, c));
  name_or_int32(f.d, e.d, offsetof(Event, d));
  e.x = 0;
  if (integer(f.x)) add(f.x, offsetof(Event, x), kInt64);
  if (f.kind == EventKind::kIpiEntry || f.kind == EventKind::kIpiExit) {
    // BuildEvent sets the type after the fields: it wins over any field read into its slot.
    AsIpi(e).type() = f.ipi_type;
    const auto type_offset =
        static_cast<size_t>(reinterpret_cast<const unsigned char*>(&AsIpi(e).type()) -
                            reinterpret_cast<const unsigned char*>(&e));
    uint8_t kept = 0;
    for (uint8_t i = 0; i < as.count; ++i) {
      if (as.copies[i].offset != type_offset) as.copies[kept++] = as.copies[i];
    }
    as.count = kept;
  }
  return as;
}

}  // namespace waitpath::ctf
