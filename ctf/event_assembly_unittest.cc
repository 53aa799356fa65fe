#include "ctf/event_assembly.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace waitpath::ctf {
namespace {

// A decoded event's value slots, as StreamCursor keeps them: present or not (a variant option
// not selected), an integer, or a string.
struct FakeCursor {
  struct Slot {
    bool present = false;
    uint64_t v = 0;
    std::string text;
  };
  std::vector<Slot> slots;
  bool Has(const FieldHandle& h) const {
    return h.slot >= 0 && slots[static_cast<size_t>(h.slot)].present;
  }
  uint64_t Raw(const FieldHandle& h) const { return slots[static_cast<size_t>(h.slot)].v; }
  std::string_view Text(const FieldHandle& h) const {
    return slots[static_cast<size_t>(h.slot)].text;
  }
};

struct FakeInterner {
  std::vector<std::string> names;
  uint32_t Intern(std::string_view s) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == s) return static_cast<uint32_t>(i);
    }
    names.emplace_back(s);
    return static_cast<uint32_t>(names.size() - 1);
  }
};

// BuildEvent's reader, as NativeReader's SlotReader reads a StreamCursor.
struct FakeReader {
  const FakeCursor& c;
  FakeInterner& strings;
  int64_t Int(const FieldHandle& h, int64_t fallback) const {
    if (!c.Has(h) || h.leaf == FieldHandle::kString || h.leaf == FieldHandle::kAddress)
      return fallback;
    return static_cast<int64_t>(c.Raw(h));
  }
  int32_t Str(const FieldHandle& h) const {
    if (h.leaf != FieldHandle::kString || !c.Has(h)) return -1;
    return static_cast<int32_t>(strings.Intern(c.Text(h)));
  }
  bool Has(const FieldHandle& h) const { return c.Has(h); }
  uint32_t Address(const FieldHandle& h) const {
    if (h.leaf != FieldHandle::kAddress) return static_cast<uint32_t>(Int(h, 0));
    return c.Has(h) ? static_cast<uint32_t>(c.Raw(h)) : 0;
  }
};

// Every kind, with every slot's field absent from the class, located as each leaf kind, present
// or not in the event, of random values: the compiled assembly gives BuildEvent's bytes.
TEST(EventAssembly, SameBytesAsBuildEvent) {
  std::mt19937_64 rng(15);
  const std::vector<std::string> names = {"", "swapper/0", "kworker/u8:1", "x"};
  int compared = 0;
  for (int k = 0; k < kEventKindCount; ++k) {
    for (int round = 0; round < 400; ++round) {
      ClassFields<FieldHandle> f;
      f.kind = static_cast<EventKind>(k);
      f.ipi_type = static_cast<int32_t>(rng() % 4);
      FakeCursor cursor;
      auto locate = [&](FieldHandle& h) {
        if (rng() % 5 == 0) return;  // not in this class
        h.slot = static_cast<int32_t>(cursor.slots.size());
        h.leaf = static_cast<FieldHandle::Leaf>(rng() % 4);
        FakeCursor::Slot& s = cursor.slots.emplace_back();
        s.present = rng() % 4 != 0;
        s.v = rng() % 3 == 0 ? rng() : rng() % 70000;
        s.text = names[rng() % names.size()];
      };
      for (FieldHandle* h : {&f.cur_tid, &f.cur_pid, &f.ctx, &f.a, &f.b, &f.c, &f.d, &f.x})
        locate(*h);
      const EventAssembly as = EventAssembly::Compile(f);
      if (as.general) continue;  // packets and span begins: BuildEvent itself
      FakeInterner strings_built, strings_assembled;
      Event built, assembled;
      std::memset(&built, 0x5a, sizeof built);
      std::memset(&assembled, 0xa5, sizeof assembled);
      built.ts = assembled.ts = 0;
      built.host = assembled.host = built.cpu = assembled.cpu = 0;
      FakeReader read{cursor, strings_built};
      std::vector<PacketKey> packets;
      BuildEvent(f, read, 0, built, packets);
      as.Assemble(cursor, strings_assembled, assembled);
      assembled.ts = 0;
      assembled.host = assembled.cpu = 0;
      ASSERT_EQ(std::memcmp(&built, &assembled, sizeof built), 0)
          << "kind " << k << " round " << round;
      ASSERT_EQ(strings_built.names, strings_assembled.names);
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(EventAssembly, PacketsAndSpanBeginsStayGeneral) {
  for (EventKind kind : {EventKind::kPacketOut, EventKind::kPacketIn, EventKind::kSpanBegin}) {
    ClassFields<FieldHandle> f;
    f.kind = kind;
    EXPECT_TRUE(EventAssembly::Compile(f).general);
  }
  ClassFields<FieldHandle> f;
  f.kind = EventKind::kSchedSwitch;
  EXPECT_FALSE(EventAssembly::Compile(f).general);
}

}  // namespace
}  // namespace waitpath::ctf
