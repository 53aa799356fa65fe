#include "ctf/ctf_metadata.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace waitpath::ctf {
namespace {

// What LTTng 2.x writes, cut down: aliases, a packet header with a uuid array, a clock, a stream
// with the compact/extended event header (enum tag, variant), a context, events with text
// arrays, sequences and an enum.
constexpr const char* kLttngLike = R"(
/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;

trace {
  major = 1;
  minor = 8;
  uuid = "2a6422d0-6cee-11e0-8c08-cb07d7b3a564";
  byte_order = le;
  packet.header := struct {
    uint32_t magic;
    uint8_t  uuid[16];
    uint32_t stream_id;
    uint64_t stream_instance_id;
  };
};

env {
  hostname = "wilbrod";
  domain = "kernel";
  tracer_major = 2;
};

clock {
  name = "monotonic";
  uuid = "9a3e5f2c-0c66-4e03-9c4b-14fbe1bde7a1";
  freq = 1000000000; /* Frequency, in Hz */
  offset_s = 1448307397;
  offset = 123;
};

typealias integer {
  size = 27; align = 1; signed = false;
  map = clock.monotonic.value;
} := uint27_clock_monotonic_t;

typealias integer {
  size = 64; align = 8; signed = false;
  map = clock.monotonic.value;
} := uint64_clock_monotonic_t;

struct packet_context {
  uint64_clock_monotonic_t timestamp_begin;
  uint64_clock_monotonic_t timestamp_end;
  uint64_t content_size;
  uint64_t packet_size;
  unsigned long events_discarded;
  uint32_t cpu_id;
};

struct event_header_compact {
  enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
  variant <id> {
    struct {
      uint27_clock_monotonic_t timestamp;
    } compact;
    struct {
      uint32_t id;
      uint64_clock_monotonic_t timestamp;
    } extended;
  } v;
} align(8);

stream {
  id = 0;
  event.header := struct event_header_compact;
  packet.context := struct packet_context;
  event.context := struct { integer { size = 32; align = 8; signed = 1; } _tid; };
};

event {
  name = "sched_switch";
  id = 2;
  stream_id = 0;
  fields := struct {
    integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _prev_comm[16];
    integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _prev_tid;
    enum : uint8_t { _unknown = 0, _ipv4 = 4, "_ipv6" = 6 } _network_header_type;
    uint16_t _len;
    uint8_t _data[_len];
    floating_point { exp_dig = 8; mant_dig = 24; align = 32; } _f;
    string _name;
  };
};

event {
  name = "sched_waking";
  id = 1;
  stream_id = 0;
  fields := struct { uint32_t _tid; };
};
)";

TEST(CtfMetadata, ParsesLttngLikeMetadata) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(kLttngLike, &m, &error)) << error;
  EXPECT_EQ(m.byte_order, 1);
  EXPECT_EQ(m.uuid, "2a6422d0-6cee-11e0-8c08-cb07d7b3a564");
  EXPECT_EQ(m.env.at("hostname"), "wilbrod");
  ASSERT_EQ(m.clocks.size(), 1u);
  EXPECT_EQ(m.clocks[0].name, "monotonic");
  EXPECT_EQ(m.clocks[0].offset_s, 1448307397);
  EXPECT_EQ(m.clocks[0].offset, 123);

  const Type& header = m.type(m.packet_header);
  ASSERT_EQ(header.kind, Type::kStruct);
  ASSERT_EQ(header.members.size(), 4u);
  const Type& uuid = m.type(header.members[1].second);
  EXPECT_EQ(uuid.kind, Type::kArray);
  EXPECT_EQ(uuid.length, 16u);

  ASSERT_EQ(m.streams.size(), 1u);
  const StreamClass& sc = m.streams[0];
  const Type& eh = m.type(sc.event_header);
  EXPECT_EQ(eh.align, 8u);  // align(8)
  const Type& id = m.type(eh.members[0].second);
  EXPECT_TRUE(id.is_enum);
  EXPECT_EQ(id.size, 5u);
  EXPECT_EQ(id.align, 1u);
  ASSERT_EQ(id.mappings.size(), 2u);
  EXPECT_EQ(id.mappings[0].lo, 0);
  EXPECT_EQ(id.mappings[0].hi, 30);
  EXPECT_EQ(id.mappings[1].label, "extended");
  const Type& v = m.type(eh.members[1].second);
  EXPECT_EQ(v.kind, Type::kVariant);
  EXPECT_EQ(v.ref.text, "id");
  const Type& compact = m.type(v.members[0].second);
  EXPECT_EQ(m.type(compact.members[0].second).clock, "monotonic");
  EXPECT_EQ(m.type(compact.members[0].second).size, 27u);

  // Events sorted by id, attached to their stream.
  ASSERT_EQ(sc.events.size(), 2u);
  EXPECT_EQ(sc.events[0].name, "sched_waking");
  const EventClass* sw = sc.Find(2);
  ASSERT_NE(sw, nullptr);
  const Type& f = m.type(sw->fields);
  ASSERT_EQ(f.members.size(), 7u);
  const Type& comm = m.type(f.members[0].second);
  EXPECT_EQ(comm.kind, Type::kArray);
  EXPECT_TRUE(m.type(comm.element).text);
  EXPECT_TRUE(m.type(f.members[1].second).is_signed);
  EXPECT_FALSE(m.type(f.members[1].second).text);
  const Type& nh = m.type(f.members[2].second);
  ASSERT_EQ(nh.mappings.size(), 3u);
  EXPECT_EQ(nh.mappings[2].label, "_ipv6");
  EXPECT_EQ(nh.mappings[2].lo, 6);
  const Type& seq = m.type(f.members[4].second);
  EXPECT_EQ(seq.kind, Type::kSequence);
  EXPECT_EQ(seq.ref.text, "_len");
  EXPECT_EQ(m.type(f.members[5].second).kind, Type::kFloat);
  EXPECT_EQ(m.type(f.members[5].second).align, 32u);
  EXPECT_EQ(m.type(f.members[6].second).kind, Type::kString);
}

// The fields LTTng names get the roles CTF 2 writes, on copies of their types: the aliases
// other fields share stay without.
TEST(CtfMetadata, TsdlNamesBecomeRoles) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(kLttngLike, &m, &error)) << error;
  EXPECT_EQ(m.format, Metadata::Format::kCtf18);
  EXPECT_EQ(m.tracer_version, "2");
  EXPECT_EQ(m.clocks[0].uid, "9a3e5f2c-0c66-4e03-9c4b-14fbe1bde7a1");
  auto roles = [&](TypeId scope, const std::string& name) -> uint16_t {
    for (const auto& [n, t] : m.type(scope).members) {
      if (n == name) return m.type(t).roles;
    }
    ADD_FAILURE() << "no member " << name;
    return 0;
  };
  auto bit = [](Role r) { return static_cast<uint16_t>(r); };
  EXPECT_EQ(roles(m.packet_header, "magic"), bit(Role::kPacketMagicNumber));
  EXPECT_EQ(roles(m.packet_header, "uuid"), bit(Role::kMetadataStreamUuid));
  EXPECT_EQ(roles(m.packet_header, "stream_id"), bit(Role::kDataStreamClassId));
  EXPECT_EQ(roles(m.packet_header, "stream_instance_id"), bit(Role::kDataStreamId));
  const StreamClass& sc = m.streams[0];
  EXPECT_EQ(roles(sc.packet_context, "timestamp_begin"), bit(Role::kDefaultClockTimestamp));
  EXPECT_EQ(roles(sc.packet_context, "timestamp_end"), bit(Role::kPacketEndClockTimestamp));
  EXPECT_EQ(roles(sc.packet_context, "content_size"), bit(Role::kPacketContentLength));
  EXPECT_EQ(roles(sc.packet_context, "packet_size"), bit(Role::kPacketTotalLength));
  EXPECT_EQ(roles(sc.packet_context, "events_discarded"), bit(Role::kDiscardedEventCounter));
  EXPECT_EQ(roles(sc.packet_context, "cpu_id"), bit(Role::kCpuId));
  EXPECT_EQ(roles(sc.event_header, "id"), bit(Role::kEventRecordClassId));
  const Type& v = m.type(m.type(sc.event_header).members[1].second);
  const Type& compact = m.type(v.members[0].second);
  const Type& extended = m.type(v.members[1].second);
  EXPECT_EQ(m.type(compact.members[0].second).roles, bit(Role::kDefaultClockTimestamp));
  EXPECT_EQ(m.type(extended.members[0].second).roles, bit(Role::kEventRecordClassId));
  EXPECT_EQ(m.type(extended.members[1].second).roles, bit(Role::kDefaultClockTimestamp));
  EXPECT_EQ(roles(sc.event_context, "_tid"), 0);
  // uint32_t, made stream_id's and the extended id's copies, is the payload's as it was.
  EXPECT_EQ(roles(sc.Find(1)->fields, "_tid"), 0);
  // Locations: the tag relative (TSDL's scoping), the sequence's length too.
  EXPECT_EQ(v.ref.syntax, FieldLocation::Syntax::kTsdl);
  EXPECT_EQ(v.ref.origin, FieldLocation::Origin::kRelative);
}

TEST(CtfMetadata, TsdlPathsBecomeLocations) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
trace { major = 1; minor = 8; byte_order = le; };
stream { event.header := struct { uint8_t id; }; };
event { name = "e"; fields := struct {
  uint8_t _n;
  uint8_t _a[event.fields._n];
  uint8_t _b[stream.event.header.id];
  struct { uint8_t _m; uint8_t _c[_m]; } _s;
}; };
)",
                        &m, &error))
      << error;
  const Type& f = m.type(m.streams[0].events[0].fields);
  const FieldLocation& a = m.type(f.members[1].second).ref;
  EXPECT_EQ(a.origin, FieldLocation::Origin::kPayload);
  ASSERT_EQ(a.path.size(), 1u);
  EXPECT_EQ(a.path[0], "_n");
  EXPECT_EQ(a.text, "event.fields._n");
  const FieldLocation& b = m.type(f.members[2].second).ref;
  EXPECT_EQ(b.origin, FieldLocation::Origin::kEventHeader);
  const Type& s = m.type(f.members[3].second);
  const FieldLocation& c = m.type(s.members[1].second).ref;
  EXPECT_EQ(c.origin, FieldLocation::Origin::kRelative);
  EXPECT_EQ(c.syntax, FieldLocation::Syntax::kTsdl);
}

TEST(CtfMetadata, EnumValuesFollowTheirPredecessor) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(R"(
typealias integer { size = 8; align = 8; signed = true; } := int8_t;
trace { major = 1; minor = 8; byte_order = be; };
stream { event.header := struct { enum : int8_t { A = -2, B, C = 10 ... 12, D } e; }; };
)",
                        &m, &error))
      << error;
  EXPECT_EQ(m.byte_order, 2);
  const Type& e = m.type(m.type(m.streams[0].event_header).members[0].second);
  ASSERT_EQ(e.mappings.size(), 4u);
  EXPECT_EQ(e.mappings[0].lo, -2);
  EXPECT_EQ(e.mappings[1].lo, -1);
  EXPECT_EQ(e.mappings[2].hi, 12);
  EXPECT_EQ(e.mappings[3].lo, 13);
  EXPECT_TRUE(e.is_signed);
}

TEST(CtfMetadata, RefusesWhatItCannotRead) {
  const char* bad[] = {
      "trace { major = 1; ",                                   // truncated
      "typealias integer { size = 65; } := big;",              // > 64 bits
      "typealias integer { size = 8; align = 3; } := odd;",    // alignment
      "trace { packet.header := struct { unknown_t x; }; };",  // unknown type
      "clock { name = c; freq = 0; };",                        // frequency 0
      "/* unterminated",                                       // comment
      "stream { id = 1; }; stream { id = 1; };",               // stream twice
      "typealias integer { size = 8; } := u8; stream { event.header := struct { u8 a; u8 a; }; };",
  };
  for (const char* text : bad) {
    Metadata m;
    std::string error;
    EXPECT_FALSE(ParseTsdl(text, &m, &error)) << text;
    EXPECT_NE(error.find("metadata line"), std::string::npos) << error;
  }
}

// What babeltrace2 refuses is invalid here too, named where it is written; syntax this front-end
// does not know is only unsupported (babeltrace2 may read it).
TEST(CtfMetadata, RefusesWhatBabeltraceRefusesAndSaysWhichIsWhich) {
  const std::string head =
      "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
      "trace { major = 1; minor = 8; byte_order = le; };\n";
  const struct {
    std::string text, expect;
    TsdlError::Kind kind;
    size_t line;
  } cases[] = {
      {"trace { major = 2; minor = 0; byte_order = le; };", "trace major version 2",
       TsdlError::Kind::kInvalid, 1},
      {"trace {\n major = 1;\n minor = 9; };", "trace minor version 9", TsdlError::Kind::kInvalid,
       3},
      {"trace { byte_order = native; };", "byte order 'native'", TsdlError::Kind::kInvalid, 1},
      {head + "stream { event.header := struct {\n integer { size = 8; encoding = none1; base = "
              "10; } a; }; };",
       "unknown encoding 'none1'", TsdlError::Kind::kInvalid, 4},
      {head + "typealias integer { size = 8; encoding = NONE; } := x;", "unknown encoding 'NONE'",
       TsdlError::Kind::kInvalid, 3},
      {head + "typealias string { encoding = latin1; } := s;", "unknown encoding 'latin1'",
       TsdlError::Kind::kInvalid, 3},
      {head + "typealias integer { size = 8; byte_order = little; } := x;", "byte order 'little'",
       TsdlError::Kind::kInvalid, 3},
      {head + "typealias integer { size = 4096; } := x;", "integer of 4096 bits",
       TsdlError::Kind::kInvalid, 3},
      {head + "typealias integer { size = x8; } := x;", "'x8' is not an unsigned number",
       TsdlError::Kind::kInvalid, 3},
      {head + "stream { id = 0; };\nevent { name = e; stream_id = 3; };", "undeclared stream 3",
       TsdlError::Kind::kInvalid, 4},
      {head + "stream { id = 0; };\nevent { id = 1; };\nevent { id = 1; };",
       "event id 1 declared twice", TsdlError::Kind::kInvalid, 5},
      {head + "stream { event.header := struct { uint8_t a; uint8_t a; }; };",
       "duplicate member 'a'", TsdlError::Kind::kInvalid, 3},
      {head + "stream { event.header := struct { uint8_t a", "ends where",
       TsdlError::Kind::kInvalid, 3},
      {head + "stream { event.header := struct { mystery_t a; }; };", "unknown type 'mystery_t'",
       TsdlError::Kind::kUnsupported, 3},
  };
  for (const auto& c : cases) {
    Metadata m;
    TsdlError error;
    EXPECT_FALSE(ParseTsdl(c.text, TsdlBounds{}, &m, &error)) << c.text;
    EXPECT_NE(error.message.find(c.expect), std::string::npos) << c.text << " -> " << error.message;
    EXPECT_EQ(error.kind, c.kind) << c.text << " -> " << error.message;
    EXPECT_EQ(error.line, c.line) << c.text << " -> " << error.message;
  }
}

// babeltrace2 reads what LTTng and perf write: every encoding it knows, `native` byte order in a
// type, a clock offset before the epoch.
TEST(CtfMetadata, ReadsWhatBabeltraceReads) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(R"(
trace { major = 1; minor = 8; byte_order = be; };
clock { name = c; offset_s = -5; offset = 0x10; };
typealias integer { size = 8; encoding = UTF8; byte_order = native; } := a;
typealias integer { size = 8; encoding = utf-8; byte_order = network; } := b;
typealias integer { size = 8; encoding = ASCII; } := c;
typealias integer { size = 8; encoding = none; } := d;
typealias string { encoding = ascii; } := s;
stream { event.header := struct { a x; b y; c z; d w; s v; }; };
)",
                        &m, &error))
      << error;
  EXPECT_EQ(m.clocks[0].offset_s, -5);
  EXPECT_EQ(m.clocks[0].offset, 16);
  const Type& h = m.type(m.streams[0].event_header);
  EXPECT_TRUE(m.type(h.members[0].second).text);
  EXPECT_EQ(m.type(h.members[0].second).byte_order, 0);  // the trace's
  EXPECT_EQ(m.type(h.members[1].second).byte_order, 2);
  EXPECT_FALSE(m.type(h.members[3].second).text);
}

// The bounds: a static array's length, and nesting however it is written (members, array
// dimensions, a typealias inside a structure inside a typealias...), so that no text recurses
// without bound in this parser either.
TEST(CtfMetadata, BoundsArraysAndNesting) {
  const std::string head = "typealias integer { size = 8; } := u8;\n";
  TsdlBounds bounds;
  bounds.max_array_length = 16;
  bounds.max_depth = 4;
  Metadata m;
  TsdlError error;
  EXPECT_TRUE(
      ParseTsdl(head + "stream { event.header := struct { u8 a[16]; }; };", bounds, &m, &error))
      << error.message;
  EXPECT_FALSE(
      ParseTsdl(head + "stream { event.header := struct { u8 a[17]; }; };", bounds, &m, &error));
  EXPECT_EQ(error.message, "array length 17 (at most 16)");
  EXPECT_EQ(error.kind, TsdlError::Kind::kInvalid);
  EXPECT_FALSE(ParseTsdl(head + "typedef u8 a[1][1][1][1][1];", bounds, &m, &error));
  EXPECT_EQ(error.message, "types nested deeper than 4");
  EXPECT_FALSE(ParseTsdl(head + "stream { event.header := struct { u8 a[1][1][1][1][1]; }; };",
                         bounds, &m, &error));
  EXPECT_EQ(error.message, "types nested deeper than 4");
  std::string deep = head + "stream { event.header := ";
  for (int i = 0; i < 6; ++i) deep += "struct { ";
  deep += "u8 x; ";
  for (int i = 0; i < 6; ++i) deep += "} f; ";
  EXPECT_FALSE(ParseTsdl(deep + "; };", bounds, &m, &error));
  EXPECT_EQ(error.message, "types nested deeper than 4");
  EXPECT_EQ(error.kind, TsdlError::Kind::kInvalid);

  // 100,000 typealiases each inside the structure of the one before: refused at the default
  // bound's nesting, not a stack overflow.
  std::string aliases = head;
  for (int i = 0; i < 100000; ++i) aliases += "typealias struct { ";
  aliases += "u8 x; ";
  for (int i = 0; i < 100000; ++i) aliases += "} := t;";
  EXPECT_FALSE(ParseTsdl(aliases, TsdlBounds{}, &m, &error));
  EXPECT_EQ(error.message, "types nested deeper than 64");
}

// Duplicate members are found in a set: a structure of 100,000 members parses at once.
TEST(CtfMetadata, ManyMembersParseInLinearTime) {
  std::string text = "typealias integer { size = 8; } := u8;\nstream { event.header := struct { ";
  for (int i = 0; i < 100000; ++i) text += "u8 m" + std::to_string(i) + "; ";
  text += "}; };";
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(text, &m, &error)) << error;
  EXPECT_EQ(m.type(m.streams[0].event_header).members.size(), 100000u);
}

TEST(CtfMetadata, ErrorsStayOnOneLine) {
  Metadata m;
  std::string error;
  EXPECT_FALSE(ParseTsdl("trace { major \n\x01 1; };", &m, &error));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_NE(error.find("\\x01"), std::string::npos) << error;
}

// Every shared trace's and fixture's metadata (packetized or not) parses.
TEST(CtfMetadata, LoadsEveryRecordedTrace) {
  namespace fs = std::filesystem;
  int loaded = 0;
  for (const char* root : {WAITPATH_SHARED_TRACES, WAITPATH_FIXTURES}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::end(it); ++it) {
      if (it->path().filename() != "metadata") continue;
      Metadata m;
      std::string error;
      EXPECT_TRUE(LoadMetadata(it->path().parent_path().string(), &m, &error)) << error;
      EXPECT_FALSE(m.streams.empty()) << it->path();
      ++loaded;
    }
  }
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace waitpath::ctf
