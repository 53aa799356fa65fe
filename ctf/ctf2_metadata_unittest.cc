#include "ctf/ctf2_metadata.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ctf/decode_plan.h"
#include "ctf/stream_cursor.h"

namespace waitpath::ctf {
namespace {

namespace fs = std::filesystem;

// A JSON text sequence of `records`, each after its 0x1E (and without LF: as LTTng writes it).
std::string Sequence(const std::vector<std::string>& records) {
  std::string s;
  for (const std::string& r : records) s += kCtf2RecordSeparator + r;
  return s;
}

constexpr const char* kPreamble = R"({"type": "preamble", "version": 2})";

// A stream class 0 (with what `dsc` adds), then event record class 0 with `payload`'s members.
std::string WithPayload(const std::string& members, const std::string& dsc = "") {
  return Sequence({kPreamble, R"({"type": "data-stream-class")" + dsc + "}",
                   R"({"type": "event-record-class", "name": "e", "payload-field-class":
                       {"type": "structure", "member-classes": [)" +
                       members + "]}}"});
}

const Type& Member(const Metadata& m, const Type& s, const std::string& name) {
  for (const auto& [n, t] : s.members) {
    if (n == name) return m.type(t);
  }
  ADD_FAILURE() << "no member " << name;
  return m.types.front();
}

// ---- field classes -> the model ----------------------------------------------------------

constexpr const char* kEveryFieldClass = R"(
  {"name": "u", "field-class": {"type": "fixed-length-unsigned-integer", "length": 13,
    "byte-order": "big-endian", "alignment": 16, "preferred-display-base": 16,
    "roles": ["packet-magic-number", "some-future-role"],
    "attributes": {"my.tracer": {"x": 1}}, "extensions": {"my.tracer": {"y": 2}}}},
  {"name": "s", "field-class": {"type": "fixed-length-signed-integer", "length": 64,
    "byte-order": "little-endian"}},
  {"name": "bits", "field-class": {"type": "fixed-length-bit-array", "length": 3,
    "byte-order": "little-endian"}},
  {"name": "bitmap", "field-class": {"type": "fixed-length-bit-map", "length": 8,
    "byte-order": "little-endian", "flags": {"A": [[0, 0]]}}},
  {"name": "flag", "field-class": {"type": "fixed-length-boolean", "length": 8,
    "byte-order": "little-endian", "alignment": 8}},
  {"name": "f32", "field-class": {"type": "fixed-length-floating-point-number", "length": 32,
    "byte-order": "little-endian", "alignment": 32}},
  {"name": "f64", "field-class": {"type": "fixed-length-floating-point-number", "length": 64,
    "byte-order": "big-endian"}},
  {"name": "e", "field-class": {"type": "fixed-length-signed-integer", "length": 32,
    "byte-order": "little-endian", "mappings": {"NEG": [[-5, -1]], "TWO": [[2, 2], [4, 4]]}}},
  {"name": "str", "field-class": {"type": "null-terminated-string", "encoding": "utf-8"}},
  {"name": "s8", "field-class": {"type": "static-length-string", "length": 8}},
  {"name": "n", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
    "byte-order": "little-endian", "alignment": 8}},
  {"name": "ds", "field-class": {"type": "dynamic-length-string",
    "length-field-location": {"path": ["n"]}}},
  {"name": "blob", "field-class": {"type": "static-length-blob", "length": 16,
    "media-type": "image/png"}},
  {"name": "dblob", "field-class": {"type": "dynamic-length-blob",
    "length-field-location": {"origin": "event-record-payload", "path": ["n"]}}},
  {"name": "arr", "field-class": {"type": "static-length-array", "length": 3,
    "minimum-alignment": 64, "element-field-class": {"type": "fixed-length-unsigned-integer",
    "length": 16, "byte-order": "little-endian", "alignment": 16}}},
  {"name": "darr", "field-class": {"type": "dynamic-length-array",
    "length-field-location": {"path": ["n"]},
    "element-field-class": {"type": "null-terminated-string"}}},
  {"name": "opt", "field-class": {"type": "optional", "selector-field-location": {"path": ["flag"]},
    "field-class": {"type": "null-terminated-string"}}},
  {"name": "opt2", "field-class": {"type": "optional", "selector-field-location": {"path": ["e"]},
    "selector-field-ranges": [[2, 2]], "field-class": {"type": "fixed-length-unsigned-integer",
    "length": 8, "byte-order": "little-endian"}}},
  {"name": "var", "field-class": {"type": "variant", "selector-field-location":
    {"origin": "event-record-payload", "path": ["e"]}, "options": [
      {"name": "a", "selector-field-ranges": [[-5, -1]],
       "field-class": {"type": "null-terminated-string"}},
      {"selector-field-ranges": [[2, 2], [4, 4]], "field-class": {"type": "structure",
       "minimum-alignment": 8, "member-classes": [{"name": "x", "field-class":
       {"type": "fixed-length-unsigned-integer", "length": 32, "byte-order": "little-endian",
        "alignment": 32}}]}}]}},
  {"name": "inner", "field-class": {"type": "structure", "minimum-alignment": 64,
    "member-classes": [{"name": "len", "field-class": {"type": "fixed-length-unsigned-integer",
    "length": 8, "byte-order": "little-endian"}}, {"name": "up", "field-class":
    {"type": "dynamic-length-array", "length-field-location": {"path": [null, "n"]},
     "element-field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
     "byte-order": "little-endian"}}}]}}
)";

TEST(Ctf2Metadata, EveryFieldClassTypeMapsOntoTheModel) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseCtf2(WithPayload(kEveryFieldClass), &m, &error)) << error;
  EXPECT_EQ(m.format, Metadata::Format::kCtf2);
  EXPECT_STREQ(m.FormatName(), "CTF 2");
  ASSERT_EQ(m.streams.size(), 1u);
  ASSERT_EQ(m.streams[0].events.size(), 1u);
  const Type& p = m.type(m.streams[0].events[0].fields);
  ASSERT_EQ(p.kind, Type::kStruct);
  EXPECT_EQ(p.align, 64u);  // its members' largest

  const Type& u = Member(m, p, "u");
  EXPECT_EQ(u.kind, Type::kInt);
  EXPECT_EQ(u.size, 13u);
  EXPECT_EQ(u.align, 16u);
  EXPECT_EQ(u.byte_order, 2);
  EXPECT_FALSE(u.is_signed);
  EXPECT_EQ(u.roles, static_cast<uint16_t>(Role::kPacketMagicNumber));  // the unknown one: none
  const Type& s = Member(m, p, "s");
  EXPECT_TRUE(s.is_signed);
  EXPECT_EQ(s.size, 64u);
  EXPECT_EQ(s.align, 1u);  // CTF 2's default
  EXPECT_EQ(s.byte_order, 1);
  for (const char* name : {"bits", "bitmap", "flag"}) {
    const Type& t = Member(m, p, name);
    EXPECT_EQ(t.kind, Type::kInt) << name;
    EXPECT_FALSE(t.is_signed) << name;
  }
  EXPECT_EQ(Member(m, p, "bits").size, 3u);
  EXPECT_EQ(Member(m, p, "f32").kind, Type::kFloat);
  EXPECT_EQ(Member(m, p, "f32").align, 32u);
  EXPECT_EQ(Member(m, p, "f64").size, 64u);

  const Type& e = Member(m, p, "e");
  EXPECT_TRUE(e.is_enum);
  ASSERT_EQ(e.mappings.size(), 3u);
  EXPECT_EQ(e.mappings[0].label, "NEG");
  EXPECT_EQ(e.mappings[0].lo, -5);
  EXPECT_EQ(e.mappings[0].hi, -1);
  EXPECT_EQ(e.mappings[2].label, "TWO");
  EXPECT_EQ(e.mappings[2].lo, 4);

  EXPECT_EQ(Member(m, p, "str").kind, Type::kString);
  const Type& s8 = Member(m, p, "s8");
  EXPECT_EQ(s8.kind, Type::kArray);
  EXPECT_EQ(s8.length, 8u);
  EXPECT_TRUE(m.type(s8.element).text);
  EXPECT_EQ(m.type(s8.element).size, 8u);
  const Type& ds = Member(m, p, "ds");
  EXPECT_EQ(ds.kind, Type::kSequence);
  EXPECT_TRUE(m.type(ds.element).text);
  EXPECT_EQ(ds.ref.syntax, FieldLocation::Syntax::kCtf2);
  EXPECT_EQ(ds.ref.origin, FieldLocation::Origin::kRelative);
  ASSERT_EQ(ds.ref.path.size(), 1u);
  EXPECT_EQ(ds.ref.path[0], "n");
  const Type& blob = Member(m, p, "blob");
  EXPECT_EQ(blob.kind, Type::kArray);
  EXPECT_EQ(blob.length, 16u);
  EXPECT_FALSE(m.type(blob.element).text);
  EXPECT_EQ(blob.align, 8u);
  const Type& dblob = Member(m, p, "dblob");
  EXPECT_EQ(dblob.kind, Type::kSequence);
  EXPECT_EQ(dblob.ref.origin, FieldLocation::Origin::kPayload);
  const Type& arr = Member(m, p, "arr");
  EXPECT_EQ(arr.kind, Type::kArray);
  EXPECT_EQ(arr.length, 3u);
  EXPECT_EQ(arr.align, 64u);  // minimum-alignment above its element's
  EXPECT_EQ(m.type(arr.element).size, 16u);
  EXPECT_EQ(Member(m, p, "darr").kind, Type::kSequence);
  EXPECT_EQ(m.type(Member(m, p, "darr").element).kind, Type::kString);

  const Type& opt = Member(m, p, "opt");
  EXPECT_EQ(opt.kind, Type::kVariant);
  EXPECT_TRUE(opt.optional);
  EXPECT_TRUE(opt.selector_ranges.empty());  // a boolean selector
  ASSERT_EQ(opt.members.size(), 1u);
  EXPECT_EQ(m.type(opt.members[0].second).kind, Type::kString);
  const Type& opt2 = Member(m, p, "opt2");
  ASSERT_EQ(opt2.selector_ranges.size(), 1u);
  EXPECT_EQ(opt2.selector_ranges[0].lo, 2u);

  const Type& var = Member(m, p, "var");
  EXPECT_EQ(var.kind, Type::kVariant);
  EXPECT_FALSE(var.optional);
  EXPECT_EQ(var.align, 1u);
  ASSERT_EQ(var.members.size(), 2u);
  EXPECT_EQ(var.members[0].first, "a");
  EXPECT_EQ(var.members[1].first, "");  // unnamed
  ASSERT_EQ(var.selector_ranges.size(), 3u);
  EXPECT_EQ(static_cast<int64_t>(var.selector_ranges[0].lo), -5);
  EXPECT_EQ(var.selector_ranges[2].option, 1u);
  EXPECT_EQ(var.selector_ranges[2].hi, 4u);
  EXPECT_EQ(m.type(var.members[1].second).align, 32u);

  const Type& up = Member(m, Member(m, p, "inner"), "up");
  ASSERT_EQ(up.ref.path.size(), 2u);
  EXPECT_FALSE(up.ref.path[0].has_value());  // null: the enclosing structure
  EXPECT_EQ(up.ref.text, "relative/../n");
}

TEST(Ctf2Metadata, FragmentsFillTheModel) {
  const std::string text = Sequence({
      R"({"type": "preamble", "version": 2, "uuid": [137, 90, 47, 23, 219, 214, 70, 111, 167,
          208, 207, 4, 234, 133, 186, 70], "attributes": {"a": 1}})",
      R"({"type": "field-class-alias", "name": "u32", "field-class":
          {"type": "fixed-length-unsigned-integer", "length": 32, "byte-order": "little-endian",
           "alignment": 8}})",
      R"({"type": "field-class-alias", "name": "uint32", "field-class": "u32"})",
      R"({"type": "trace-class", "uid": "tc-1", "environment": {"tracer_name": "lttng-ust",
          "tracer_major": 2, "tracer_minor": 16, "hostname": "vm", "neg": -3},
          "packet-header-field-class": {"type": "structure", "member-classes": [
            {"name": "magic", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 32, "byte-order": "little-endian", "roles": ["packet-magic-number"]}},
            {"name": "sid", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 8, "byte-order": "little-endian", "roles": ["data-stream-class-id"]}}]}})",
      R"({"type": "clock-class", "id": "mono", "name": "monotonic", "uid": "c-uid",
          "frequency": 1000000000, "origin": "unix-epoch",
          "offset-from-origin": {"seconds": 1795835586, "cycles": 499356096}})",
      R"({"type": "clock-class", "id": "other", "frequency": 1000,
          "origin": {"namespace": "ns", "name": "board", "uid": "42"},
          "offset-from-origin": {"seconds": -18003}})",
      R"({"type": "data-stream-class", "id": 7, "default-clock-class-id": "mono",
          "packet-context-field-class": {"type": "structure", "member-classes": [
            {"name": "begin", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 64, "byte-order": "little-endian", "roles": ["default-clock-timestamp"]}},
            {"name": "end", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 64, "byte-order": "little-endian",
             "roles": ["packet-end-default-clock-timestamp"]}},
            {"name": "cpu_id", "field-class": "uint32"}]},
          "event-record-header-field-class": {"type": "structure", "member-classes": [
            {"name": "ts", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 27, "byte-order": "little-endian", "roles": ["default-clock-timestamp"]}},
            {"name": "id", "field-class": {"type": "fixed-length-unsigned-integer",
             "length": 5, "byte-order": "little-endian", "roles": ["event-record-class-id"]}}]},
          "event-record-common-context-field-class": {"type": "structure", "member-classes": [
            {"name": "vtid", "field-class": "uint32"}]}})",
      R"({"type": "data-stream-class", "id": 1})",
      R"({"type": "event-record-class", "id": 9, "data-stream-class-id": 7, "name": "b",
          "extensions": {"ignored": {"x": 1}}})",
      R"({"type": "event-record-class", "id": 2, "data-stream-class-id": 7, "name": "a",
          "specific-context-field-class": {"type": "structure"},
          "payload-field-class": {"type": "structure", "member-classes": [
            {"name": "x", "field-class": "uint32"}]}})",
      R"({"type": "event-record-class", "data-stream-class-id": 1})",
  });
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseCtf2(text, &m, &error)) << error;
  EXPECT_EQ(m.uuid, "895a2f17-dbd6-466f-a7d0-cf04ea85ba46");
  EXPECT_EQ(m.trace_uid, "tc-1");
  EXPECT_EQ(m.env.at("hostname"), "vm");
  EXPECT_EQ(m.env.at("tracer_major"), "2");
  EXPECT_EQ(m.env.at("neg"), "-3");
  EXPECT_EQ(m.tracer_name, "lttng-ust");
  EXPECT_EQ(m.tracer_version, "2.16");

  ASSERT_EQ(m.clocks.size(), 2u);
  const Clock* mono = m.FindClock("mono");
  ASSERT_NE(mono, nullptr);
  EXPECT_EQ(mono->freq, 1000000000u);
  EXPECT_EQ(mono->offset_s, 1795835586);
  EXPECT_EQ(mono->offset, 499356096);
  EXPECT_EQ(mono->origin, Clock::Origin::kUnixEpoch);
  EXPECT_EQ(mono->uid, "c-uid");
  const Clock* other = m.FindClock("other");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->origin, Clock::Origin::kCustom);
  EXPECT_EQ(other->origin_id, "ns/board/42");
  EXPECT_EQ(other->offset_s, -18003);

  const Type& header = m.type(m.packet_header);
  EXPECT_TRUE(Member(m, header, "magic").Has(Role::kPacketMagicNumber));
  EXPECT_TRUE(Member(m, header, "sid").Has(Role::kDataStreamClassId));

  // Stream classes sorted by id; their timestamps on the default clock; cpu_id's role.
  ASSERT_EQ(m.streams.size(), 2u);
  EXPECT_EQ(m.streams[0].id, 1u);
  const StreamClass* sc = m.FindStream(7);
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->default_clock, "mono");
  const Type& pc = m.type(sc->packet_context);
  EXPECT_EQ(Member(m, pc, "begin").clock, "mono");
  EXPECT_TRUE(Member(m, pc, "begin").Has(Role::kDefaultClockTimestamp));
  EXPECT_EQ(Member(m, pc, "end").clock, "mono");
  EXPECT_TRUE(Member(m, pc, "end").Has(Role::kPacketEndClockTimestamp));
  EXPECT_TRUE(Member(m, pc, "cpu_id").Has(Role::kCpuId));
  const Type& eh = m.type(sc->event_header);
  EXPECT_EQ(Member(m, eh, "ts").clock, "mono");
  EXPECT_TRUE(Member(m, eh, "id").Has(Role::kEventRecordClassId));
  EXPECT_TRUE(Member(m, eh, "id").clock.empty());
  // The alias cpu_id is made of stays as it was elsewhere (the common context's vtid).
  const Type& cc = m.type(sc->event_context);
  EXPECT_EQ(Member(m, cc, "vtid").roles, 0);

  // Event classes sorted by id within their stream class.
  ASSERT_EQ(sc->events.size(), 2u);
  EXPECT_EQ(sc->events[0].name, "a");
  EXPECT_EQ(sc->events[0].id, 2u);
  EXPECT_EQ(sc->events[0].stream_id, 7u);
  EXPECT_GE(sc->events[0].context, 0);
  EXPECT_EQ(sc->events[1].name, "b");
  EXPECT_EQ(sc->events[1].fields, -1);
  ASSERT_EQ(m.streams[0].events.size(), 1u);
  EXPECT_EQ(m.streams[0].events[0].id, 0u);  // the default
}

TEST(Ctf2Metadata, TheFrontEndIsChosenFromTheFirstByte) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseMetadataText(WithPayload(""), &m, &error)) << error;
  EXPECT_EQ(m.format, Metadata::Format::kCtf2);
  ASSERT_TRUE(
      ParseMetadataText("/* CTF 1.8 */ trace { major = 1; minor = 8; }; stream { };", &m, &error))
      << error;
  EXPECT_EQ(m.format, Metadata::Format::kCtf18);
  EXPECT_STREQ(m.FormatName(), "CTF 1.8");
  // JSON without its record separator is not CTF 2: TSDL says it cannot read it.
  EXPECT_FALSE(ParseMetadataText(R"({"type": "preamble", "version": 2})", &m, &error));
  EXPECT_NE(error.find("metadata line 1"), std::string::npos) << error;
}

// ---- what the decoder reads: plans and packets -------------------------------------------

// Writes packets byte by byte (every field here is byte-aligned).
class Bytes {
 public:
  void Put(uint64_t v, int bytes, bool big = false) {
    for (int i = 0; i < bytes; ++i)
      b_.push_back(static_cast<uint8_t>(v >> (8 * (big ? bytes - 1 - i : i))));
  }
  void Str(const std::string& s, bool nul = true) {
    b_.insert(b_.end(), s.begin(), s.end());
    if (nul) b_.push_back(0);
  }
  void Text(const std::string& s, size_t n) {
    for (size_t i = 0; i < n; ++i) b_.push_back(i < s.size() ? static_cast<uint8_t>(s[i]) : 0);
  }
  void Align(size_t bytes) {
    while (b_.size() % bytes) b_.push_back(0);
  }
  void Patch(size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t size() const { return b_.size(); }
  const std::vector<uint8_t>& bytes() const { return b_; }

 private:
  std::vector<uint8_t> b_;
};

class TraceDir {
 public:
  explicit TraceDir(const std::string& tag)
      : dir_(fs::temp_directory_path() /
             ("waitpath-ctf2-" + tag + "-" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
  }
  ~TraceDir() { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  void Write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    std::ofstream out(dir_ / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

// A stream class without a packet header: 32-bit packet size and content size, an 8-bit id.
constexpr const char* kSimpleStream = R"(,
  "packet-context-field-class": {"type": "structure", "member-classes": [
    {"name": "size", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32,
     "byte-order": "little-endian", "alignment": 8, "roles": ["packet-total-length"]}},
    {"name": "content", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32,
     "byte-order": "little-endian", "alignment": 8, "roles": ["packet-content-length"]}}]},
  "event-record-header-field-class": {"type": "structure", "member-classes": [
    {"name": "id", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
     "byte-order": "little-endian", "alignment": 8, "roles": ["event-record-class-id"]}}]})";

constexpr const char* kSelectedFields = R"(
  {"name": "flag", "field-class": {"type": "fixed-length-boolean", "length": 8,
    "byte-order": "little-endian", "alignment": 8}},
  {"name": "n", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
    "byte-order": "little-endian", "alignment": 8}},
  {"name": "ds", "field-class": {"type": "dynamic-length-string",
    "length-field-location": {"path": ["n"]}}},
  {"name": "opt", "field-class": {"type": "optional", "selector-field-location": {"path": ["flag"]},
    "field-class": {"type": "null-terminated-string"}}},
  {"name": "e", "field-class": {"type": "fixed-length-signed-integer", "length": 8,
    "byte-order": "little-endian", "alignment": 8,
    "mappings": {"NEG": [[-5, -1]], "TWO": [[2, 2], [4, 4]]}}},
  {"name": "var", "field-class": {"type": "variant", "selector-field-location":
    {"origin": "event-record-payload", "path": ["e"]}, "options": [
      {"name": "a", "selector-field-ranges": [[-5, -1]],
       "field-class": {"type": "null-terminated-string"}},
      {"name": "b", "selector-field-ranges": [[2, 2], [4, 4]], "field-class": {"type": "structure",
       "member-classes": [{"name": "x", "field-class": {"type": "fixed-length-unsigned-integer",
       "length": 16, "byte-order": "little-endian", "alignment": 8}}]}}]}},
  {"name": "opt2", "field-class": {"type": "optional", "selector-field-location": {"path": ["e"]},
    "selector-field-ranges": [[2, 2]], "field-class": {"type": "fixed-length-unsigned-integer",
    "length": 8, "byte-order": "little-endian", "alignment": 8}}},
  {"name": "blob", "field-class": {"type": "static-length-blob", "length": 3}},
  {"name": "be", "field-class": {"type": "fixed-length-unsigned-integer", "length": 32,
    "byte-order": "big-endian", "alignment": 8}},
  {"name": "tail", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
    "byte-order": "little-endian", "alignment": 8}}
)";

TEST(Ctf2Metadata, DecodesOptionalsVariantsAndDynamicLengths) {
  TraceDir dir("decode");
  dir.Write("metadata", WithPayload(kSelectedFields, kSimpleStream));
  Bytes b;
  b.Put(0, 4);  // packet size, content size: patched
  b.Put(0, 4);
  // Event 1: enabled string, the variant's string option, the second optional disabled.
  b.Put(0, 1);
  b.Put(1, 1);
  b.Put(3, 1);
  b.Str("abc", false);
  b.Str("hi");
  b.Put(static_cast<uint64_t>(-3), 1);
  b.Str("zz");
  b.Text("\x01\x02\x03", 3);
  b.Put(0x01020304, 4, /*big=*/true);
  b.Put(0x7f, 1);
  // Event 2: the optional string disabled, the structure option, the second optional enabled.
  b.Put(0, 1);
  b.Put(0, 1);
  b.Put(0, 1);
  b.Put(2, 1);
  b.Put(0x1234, 2);
  b.Put(9, 1);
  b.Text("\x04\x05\x06", 3);
  b.Put(0xA0B0C0D0, 4, /*big=*/true);
  b.Put(0x55, 1);
  const size_t content = b.size();
  b.Align(64);
  b.Patch(0, b.size() * 8, 4);
  b.Patch(4, content * 8, 4);
  dir.Write("stream_0", b.bytes());

  TraceDecoder trace;
  trace.ReadEveryField();
  std::string error;
  ASSERT_TRUE(trace.Open(dir.path(), &error)) << error;
  EXPECT_FALSE(trace.has_clock());
  StreamCursor c(trace, trace.files()[0]);
  using Item = StreamCursor::Item;
  ASSERT_EQ(c.Next(), Item::kPacket) << c.error();
  ASSERT_EQ(c.Next(), Item::kEvent) << c.error();
  DecodePlan& plan = trace.plan();
  const int32_t payload = c.event().payload;
  auto field = [&](std::initializer_list<std::string_view> path) {
    return plan.Find(payload, path);
  };
  EXPECT_EQ(c.Text(field({"ds"})), "abc");
  EXPECT_EQ(c.Text(field({"opt", ""})), "hi");
  EXPECT_EQ(static_cast<int64_t>(c.Raw(field({"e"}))), -3);
  EXPECT_EQ(c.Text(field({"var", "a"})), "zz");
  EXPECT_FALSE(c.Has(field({"var", "b", "x"})));
  EXPECT_FALSE(c.Has(field({"opt2", ""})));
  EXPECT_EQ(c.Raw(field({"be"})), 0x01020304u);
  EXPECT_EQ(c.Raw(field({"tail"})), 0x7fu);

  ASSERT_EQ(c.Next(), Item::kEvent) << c.error();
  EXPECT_EQ(c.Text(field({"ds"})), "");
  EXPECT_FALSE(c.Has(field({"opt", ""})));
  EXPECT_FALSE(c.Has(field({"var", "a"})));
  EXPECT_EQ(c.Raw(field({"var", "b", "x"})), 0x1234u);
  EXPECT_EQ(c.Raw(field({"opt2", ""})), 9u);
  EXPECT_EQ(c.Raw(field({"be"})), 0xA0B0C0D0u);
  EXPECT_EQ(c.Raw(field({"tail"})), 0x55u);
  EXPECT_EQ(c.Next(), Item::kEnd) << c.error();
}

TEST(Ctf2Metadata, LocationsTheDecoderCannotResolveAreErrorsOfTheirClass) {
  struct Case {
    const char* members;
    const char* error;
  } cases[] = {
      // A length field two options of a variant declare: one slot cannot hold it.
      {R"({"name": "sel", "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
          "byte-order": "little-endian"}},
         {"name": "v", "field-class": {"type": "variant", "selector-field-location":
          {"path": ["sel"]}, "options": [
           {"selector-field-ranges": [[0, 0]], "field-class": {"type": "structure",
            "member-classes": [{"name": "len", "field-class": {"type":
            "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian"}}]}},
           {"selector-field-ranges": [[1, 1]], "field-class": {"type": "structure",
            "member-classes": [{"name": "len", "field-class": {"type":
            "fixed-length-unsigned-integer", "length": 16, "byte-order": "little-endian"}}]}}]}},
         {"name": "s", "field-class": {"type": "dynamic-length-string",
          "length-field-location": {"path": ["v", "len"]}}})",
       "names 2 possible fields"},
      {R"({"name": "s", "field-class": {"type": "dynamic-length-string",
          "length-field-location": {"path": [null, "len"]}}})",
       "goes above its scope's root"},
      {R"({"name": "s", "field-class": {"type": "dynamic-length-string",
          "length-field-location": {"path": ["nowhere"]}}})",
       "is not an integer decoded before it"},
      {R"({"name": "str", "field-class": {"type": "null-terminated-string"}},
         {"name": "v", "field-class": {"type": "variant", "selector-field-location":
          {"path": ["str"]}, "options": [{"selector-field-ranges": [[0, 0]],
          "field-class": {"type": "null-terminated-string"}}]}})",
       "selector field location 'relative/str' is not an integer"},
  };
  for (const Case& k : cases) {
    Metadata m;
    std::string error;
    ASSERT_TRUE(ParseCtf2(WithPayload(k.members), &m, &error)) << error;
    DecodePlan plan(m);
    plan.Compile(m.streams[0].events[0].fields, DecodePlan::Scope::kPayload, true);
    EXPECT_NE(plan.error().find(k.error), std::string::npos) << plan.error();
  }
}

// LTTng 2.16's network events: each option of a variant declares the same field, and a field
// after it in the same option names it relatively: the one just decoded, not ambiguous.
TEST(Ctf2Metadata, ASiblingInEachOptionOfAVariantIsResolved) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseCtf2(WithPayload(R"({"name": "sel", "field-class": {"type":
      "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian"}},
     {"name": "v", "field-class": {"type": "variant", "selector-field-location":
      {"path": ["sel"]}, "options": [
       {"selector-field-ranges": [[0, 0]], "field-class": {"type": "structure",
        "member-classes": [{"name": "len", "field-class": {"type":
        "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian"}},
        {"name": "s", "field-class": {"type": "dynamic-length-string",
         "length-field-location": {"path": ["len"]}}}]}},
       {"selector-field-ranges": [[1, 1]], "field-class": {"type": "structure",
        "member-classes": [{"name": "len", "field-class": {"type":
        "fixed-length-unsigned-integer", "length": 16, "byte-order": "little-endian"}},
        {"name": "s", "field-class": {"type": "dynamic-length-string",
         "length-field-location": {"path": ["len"]}}}]}}]}})"),
                        &m, &error))
      << error;
  DecodePlan plan(m);
  plan.Compile(m.streams[0].events[0].fields, DecodePlan::Scope::kPayload, true);
  EXPECT_EQ(plan.error(), "");
}

// What LTTng 2.16's session daemon writes for a per-UID UST trace (ctf2-trace-class-visitor.cpp:
// keys sorted, integers always with alignment, byte order and display base; the LARGE event
// header of UST channels; timestamps by role on the stream's default clock), for a
// `ust_tests:hello` event of ctf_integer, ctf_integer_hex, ctf_integer_network, ctf_array,
// ctf_array_text, ctf_sequence, ctf_sequence_text, ctf_string, ctf_float, ctf_double and
// ctf_enum fields, and a `sched_switch` event the analysis reads (its values compared below).
std::string Lttng216Ctf2() {
  auto uint = [](int bits, const std::string& extra = "") {
    return R"({"alignment": 8, "byte-order": "little-endian", "length": )" + std::to_string(bits) +
           R"(, "preferred-display-base": 10)" + extra +
           R"(, "type": "fixed-length-unsigned-integer"})";
  };
  auto sint = [](int bits, const std::string& order = "little-endian") {
    return R"({"alignment": 8, "byte-order": ")" + order + R"(", "length": )" +
           std::to_string(bits) +
           R"(, "preferred-display-base": 10, "type": "fixed-length-signed-integer"})";
  };
  auto role = [](const char* r) { return std::string(R"(, "roles": [")") + r + "\"]"; };
  auto member = [](const std::string& name, const std::string& fc) {
    return R"({"field-class": )" + fc + R"(, "name": ")" + name + "\"}";
  };
  return Sequence({
      R"({
  "type": "preamble",
  "uuid": [137, 90, 47, 23, 219, 214, 70, 111, 167, 208, 207, 4, 234, 133, 186, 70],
  "version": 2
})",
      R"({"environment": {"architecture_bit_width": 64, "domain": "ust", "hostname": "vm",
  "trace_creation_datetime": "20261128T033028+0000", "trace_name": "s", "tracer_buffering_id": 0,
  "tracer_buffering_scheme": "uid", "tracer_major": 2, "tracer_minor": 16,
  "tracer_name": "lttng-ust"}, "name": "", "namespace": "lttng.org,2009",
  "packet-header-field-class": {"member-classes": [)" +
          member("magic", R"({"alignment": 8, "byte-order": "little-endian", "length": 32,
            "preferred-display-base": 16, "roles": ["packet-magic-number"],
            "type": "fixed-length-unsigned-integer"})") +
          ", " +
          member(
              "uuid",
              R"({"length": 16, "roles": ["metadata-stream-uuid"], "type": "static-length-blob"})") +
          ", " + member("stream_id", uint(32, role("data-stream-class-id"))) + ", " +
          member("stream_instance_id", uint(64, role("data-stream-id"))) +
          R"(], "type": "structure"}, "type": "trace-class",
  "uid": "895a2f17-dbd6-466f-a7d0-cf04ea85ba46"})",
      R"({"description": "Monotonic Clock", "frequency": 1000000000, "id": "monotonic",
  "name": "monotonic", "offset-from-origin": {"cycles": 499356096, "seconds": 1795835586},
  "origin": "unix-epoch", "type": "clock-class", "uid": "c8ba2d9c-fa78-4cf4-8c46-94b0b081c673"})",
      R"({"default-clock-class-id": "monotonic",
  "event-record-common-context-field-class": {"member-classes": [)" +
          member("vtid", sint(32)) + ", " +
          member("procname", R"({"length": 16, "type": "static-length-string"})") +
          R"(], "type": "structure"},
  "event-record-header-field-class": {"member-classes": [)" +
          member("id", uint(16, R"(, "mappings": {"compact": [[0, 65534]],
            "extended": [[65535, 65535]]})" +
                                    role("event-record-class-id"))) +
          R"(, {"field-class": {"options": [
      {"field-class": {"member-classes": [)" +
          member("timestamp", uint(32, role("default-clock-timestamp"))) +
          R"(], "type": "structure"}, "name": "compact", "selector-field-ranges": [[0, 65534]]},
      {"field-class": {"member-classes": [)" +
          member("id", uint(32, role("event-record-class-id"))) + ", " +
          member("timestamp", uint(64, role("default-clock-timestamp"))) +
          R"(], "type": "structure"}, "name": "extended",
       "selector-field-ranges": [[65535, 65535]]}],
    "selector-field-location": {"origin": "event-record-header", "path": ["id"]},
    "type": "variant"}, "name": "v"}], "type": "structure"},
  "id": 0, "packet-context-field-class": {"member-classes": [)" +
          member("timestamp_begin", uint(64, role("default-clock-timestamp"))) + ", " +
          member("timestamp_end", uint(64, role("packet-end-default-clock-timestamp"))) + ", " +
          member("content_size", uint(64, role("packet-content-length"))) + ", " +
          member("packet_size", uint(64, role("packet-total-length"))) + ", " +
          member("packet_seq_num", uint(64, role("packet-sequence-number"))) + ", " +
          member("events_discarded", uint(64, role("discarded-event-record-counter-snapshot"))) +
          ", " + member("cpu_id", uint(32)) + R"(], "type": "structure"},
  "type": "data-stream-class"})",
      R"({"attributes": {"lttng.org,2009": {"log-level": "info"}}, "data-stream-class-id": 0,
  "id": 0, "name": "ust_tests:hello", "payload-field-class": {"member-classes": [)" +
          member("intfield", sint(32)) + ", " +
          member("intfield2", R"({"alignment": 8, "byte-order": "little-endian", "length": 32,
            "preferred-display-base": 16, "type": "fixed-length-signed-integer"})") +
          ", " + member("netintfield", sint(32, "big-endian")) + ", " +
          member("arrfield1", R"({"element-field-class": )" + sint(32) +
                                  R"(, "length": 3, "type": "static-length-array"})") +
          ", " + member("arrfield2", R"({"length": 10, "type": "static-length-string"})") + ", " +
          member("_seqfield1_length", uint(64)) + ", " +
          member("seqfield1", R"({"element-field-class": )" + sint(8) +
                                  R"(, "length-field-location": {"origin": "event-record-payload",
            "path": ["_seqfield1_length"]}, "type": "dynamic-length-array"})") +
          ", " + member("_seqfield2_length", uint(64)) + ", " +
          member("seqfield2", R"({"length-field-location": {"origin": "event-record-payload",
            "path": ["_seqfield2_length"]}, "type": "dynamic-length-string"})") +
          ", " + member("stringfield", R"({"type": "null-terminated-string"})") + ", " +
          member("floatfield", R"({"alignment": 8, "byte-order": "little-endian", "length": 32,
            "type": "fixed-length-floating-point-number"})") +
          ", " +
          member("doublefield", R"({"alignment": 8, "byte-order": "little-endian", "length": 64,
            "type": "fixed-length-floating-point-number"})") +
          ", " +
          member("enumfield", R"({"alignment": 8, "byte-order": "little-endian", "length": 32,
            "mappings": {"ONE": [[1, 1]], "TWO": [[2, 2]], "ZERO": [[0, 0]]},
            "preferred-display-base": 10, "type": "fixed-length-signed-integer"})") +
          R"(], "type": "structure"}, "type": "event-record-class"})",
      R"({"data-stream-class-id": 0, "id": 1, "name": "sched_switch",
  "payload-field-class": {"member-classes": [)" +
          member("prev_tid", sint(32)) + ", " +
          member("prev_comm", R"({"length": 16, "type": "static-length-string"})") + ", " +
          member("next_tid", sint(32)) + ", " +
          member("next_comm", R"({"type": "null-terminated-string"})") +
          R"(], "type": "structure"}, "type": "event-record-class"})",
  });
}

// The same trace class as LTTng 2.16 writes it in TSDL (lttng create --trace-format=ctf-1.8).
constexpr const char* kLttng216Tsdl = R"(/* CTF 1.8 */
trace {
	major = 1;
	minor = 8;
	uuid = "895a2f17-dbd6-466f-a7d0-cf04ea85ba46";
	byte_order = le;
	packet.header := struct {
		integer { size = 32; align = 8; base = 16; } magic;
		// static length BLOB field
		integer { size = 8; align = 8; base = 16; } uuid[16];
		integer { size = 32; align = 8; } stream_id;
		integer { size = 64; align = 8; } stream_instance_id;
	};
};
env {
	domain = "ust";
	tracer_name = "lttng-ust";
	tracer_major = 2;
	tracer_minor = 16;
	hostname = "vm";
};
clock {
	name = "monotonic";
	uuid = "c8ba2d9c-fa78-4cf4-8c46-94b0b081c673";
	description = "Monotonic Clock";
	freq = 1000000000;
	offset = 1795835586499356096;
};
stream {
	id = 0;
	event.header := struct {
		enum : integer { size = 16; align = 8; } {
			"extended" = 65535,
			"compact" = 0 ... 65534,
		} id;
		variant <id> {
			struct {
				integer { size = 32; align = 8; map = clock.monotonic.value; } timestamp;
			} compact;
			struct {
				integer { size = 32; align = 8; } id;
				integer { size = 64; align = 8; map = clock.monotonic.value; } timestamp;
			} extended;
		} v;
	};
	packet.context := struct {
		integer { size = 64; align = 8; map = clock.monotonic.value; } timestamp_begin;
		integer { size = 64; align = 8; map = clock.monotonic.value; } timestamp_end;
		integer { size = 64; align = 8; } content_size;
		integer { size = 64; align = 8; } packet_size;
		integer { size = 64; align = 8; } packet_seq_num;
		integer { size = 64; align = 8; } events_discarded;
		integer { size = 32; align = 8; } cpu_id;
	};
	event.context := struct {
		integer { size = 32; align = 8; signed = true; } _vtid;
		integer { size = 8; align = 8; encoding = UTF8; } _procname[16];
	};
};
event {
	name = "ust_tests:hello";
	id = 0;
	stream_id = 0;
	loglevel = 6;
	fields := struct {
		integer { size = 32; align = 8; signed = true; } _intfield;
		integer { size = 32; align = 8; signed = true; base = 16; } _intfield2;
		integer { size = 32; align = 8; signed = true; byte_order = be; } _netintfield;
		integer { size = 32; align = 8; signed = true; } _arrfield1[3];
		integer { size = 8; align = 8; encoding = UTF8; } _arrfield2[10];
		integer { size = 64; align = 8; } __seqfield1_length;
		integer { size = 8; align = 8; signed = true; } _seqfield1[__seqfield1_length];
		integer { size = 64; align = 8; } __seqfield2_length;
		integer { size = 8; align = 8; encoding = UTF8; } _seqfield2[__seqfield2_length];
		string _stringfield;
		floating_point { align = 8; mant_dig = 24; exp_dig = 8; } _floatfield;
		floating_point { align = 8; mant_dig = 53; exp_dig = 11; } _doublefield;
		enum : integer { size = 32; align = 8; signed = true; } {
			"ZERO" = 0,
			"ONE" = 1,
			"TWO" = 2,
		} _enumfield;
	};
};
event {
	name = "sched_switch";
	id = 1;
	stream_id = 0;
	fields := struct {
		integer { size = 32; align = 8; signed = true; } _prev_tid;
		integer { size = 8; align = 8; encoding = UTF8; } _prev_comm[16];
		integer { size = 32; align = 8; signed = true; } _next_tid;
		string _next_comm;
	};
};
)";

// Two programs read the same bits into the same slots with the same effects.
void ExpectSameProgram(const DecodePlan& a, int32_t pa, const DecodePlan& b, int32_t pb,
                       const std::string& where) {
  ASSERT_EQ(pa < 0, pb < 0) << where;
  if (pa < 0) return;
  const std::vector<Op>& x = a.program(pa);
  const std::vector<Op>& y = b.program(pb);
  ASSERT_EQ(x.size(), y.size()) << where;
  for (size_t i = 0; i < x.size(); ++i) {
    const std::string at = where + " op " + std::to_string(i);
    EXPECT_EQ(x[i].code, y[i].code) << at;
    EXPECT_EQ(x[i].size, y[i].size) << at;
    EXPECT_EQ(x[i].flags, y[i].flags) << at;
    EXPECT_EQ(x[i].slot, y[i].slot) << at;
    EXPECT_EQ(x[i].count, y[i].count) << at;
    EXPECT_EQ(x[i].sub_bits, y[i].sub_bits) << at;
    EXPECT_EQ(x[i].arg, y[i].arg) << at;
    if (x[i].code == Op::kArray) ExpectSameProgram(a, x[i].sub, b, y[i].sub, at + " elements");
    if (x[i].code == Op::kVariant) {
      const VariantTable& tx = a.variant(x[i].sub);
      const VariantTable& ty = b.variant(y[i].sub);
      EXPECT_EQ(tx.is_signed, ty.is_signed) << at;
      // TSDL's cases follow the options (each option's labels), CTF 2's the options' ranges:
      // the same here, as LTTng lists both in one order.
      ASSERT_EQ(tx.cases.size(), ty.cases.size()) << at;
      for (size_t c = 0; c < tx.cases.size(); ++c) {
        EXPECT_EQ(tx.cases[c].lo, ty.cases[c].lo) << at;
        EXPECT_EQ(tx.cases[c].hi, ty.cases[c].hi) << at;
        ExpectSameProgram(a, tx.cases[c].program, b, ty.cases[c].program, at + " option");
      }
    }
    if (x[i].code == Op::kFields) {
      const FieldRun& rx = a.field_run(x[i].sub);
      const FieldRun& ry = b.field_run(y[i].sub);
      EXPECT_EQ(rx.bits, ry.bits) << at;
      EXPECT_EQ(rx.on_byte, ry.on_byte) << at;
      ASSERT_EQ(rx.reads.size(), ry.reads.size()) << at;
      for (size_t r = 0; r < rx.reads.size(); ++r) {
        EXPECT_EQ(rx.reads[r].kind, ry.reads[r].kind) << at;
        EXPECT_EQ(rx.reads[r].offset, ry.reads[r].offset) << at;
        EXPECT_EQ(rx.reads[r].op.slot, ry.reads[r].op.slot) << at;
        EXPECT_EQ(rx.reads[r].op.flags, ry.reads[r].op.flags) << at;
      }
      ExpectSameProgram(a, rx.unfused, b, ry.unfused, at + " unfused");
    }
  }
}

// One packet of the LTTng 2.16 layout: a compact hello, an extended sched_switch, a compact
// sched_switch; `cpu` in the context.
std::vector<uint8_t> Lttng216Packet(uint32_t cpu) {
  Bytes b;
  b.Put(0xC1FC1FC1, 4);
  b.Text("\x89\x5a\x2f\x17\xdb\xd6\x46\x6f\xa7\xd0\xcf\x04\xea\x85\xba\x46", 16);
  b.Put(0, 4);                     // stream_id
  b.Put(cpu, 8);                   // stream_instance_id
  b.Put(0x100000000 + 0x500, 8);   // timestamp_begin
  b.Put(0x100000000 + 0x9000, 8);  // timestamp_end
  const size_t sizes = b.size();
  b.Put(0, 8);
  b.Put(0, 8);
  b.Put(3, 8);  // packet_seq_num
  b.Put(2, 8);  // events_discarded
  b.Put(cpu, 4);
  auto context = [&](int32_t vtid, const char* procname) {
    b.Put(static_cast<uint32_t>(vtid), 4);
    b.Text(procname, 16);
  };
  // hello, compact: 16-bit id 0, 32-bit timestamp.
  b.Put(0, 2);
  b.Put(0x600, 4);
  context(77, "hello");
  b.Put(static_cast<uint32_t>(-42), 4);
  b.Put(0xabc, 4);
  b.Put(1234, 4, /*big=*/true);
  b.Put(1, 4);
  b.Put(2, 4);
  b.Put(3, 4);
  b.Text("test", 10);
  b.Put(3, 8);
  b.Text("\x01\x02\x03", 3);
  b.Put(5, 8);
  b.Text("texts", 5);
  b.Str("a string");
  b.Put(0x40490fdb, 4);  // 3.1415927f
  b.Put(0x400921fb54442d18, 8);
  b.Put(2, 4);
  // sched_switch, extended: id 65535, then the 32-bit id and the 64-bit timestamp.
  b.Put(65535, 2);
  b.Put(1, 4);
  b.Put(0x100000000 + 0x700, 8);
  context(78, "switcher");
  b.Put(static_cast<uint32_t>(-7), 4);
  b.Text("swapper/1", 16);
  b.Put(42, 4);
  b.Str("worker");
  // sched_switch, compact: its 32 bits above the clock's low 32 bits.
  b.Put(1, 2);
  b.Put(0x800, 4);
  context(79, "switcher");
  b.Put(8, 4);
  b.Text("a", 16);
  b.Put(9, 4);
  b.Str("b");
  const size_t content = b.size();
  b.Align(512);
  b.Patch(sizes, content * 8, 8);
  b.Patch(sizes + 8, b.size() * 8, 8);
  return b.bytes();
}

TEST(Ctf2Metadata, Lttng216TraceClassIsTheModelOfItsTsdl) {
  Metadata ctf2, tsdl;
  std::string error;
  const std::string text = Lttng216Ctf2();
  ASSERT_TRUE(ParseMetadataText(text, &ctf2, &error)) << error;
  ASSERT_TRUE(ParseMetadataText(kLttng216Tsdl, &tsdl, &error)) << error;
  EXPECT_EQ(ctf2.format, Metadata::Format::kCtf2);
  EXPECT_EQ(tsdl.format, Metadata::Format::kCtf18);
  EXPECT_EQ(ctf2.uuid, tsdl.uuid);
  EXPECT_EQ(ctf2.tracer_name, "lttng-ust");
  EXPECT_EQ(ctf2.tracer_version, tsdl.tracer_version);
  ASSERT_EQ(ctf2.clocks.size(), 1u);
  EXPECT_EQ(ctf2.clocks[0].name, tsdl.clocks[0].name);
  EXPECT_EQ(ctf2.clocks[0].uid, tsdl.clocks[0].uid);
  EXPECT_EQ(ctf2.clocks[0].offset_s * 1000000000 + ctf2.clocks[0].offset,
            tsdl.clocks[0].offset_s * 1000000000 + tsdl.clocks[0].offset);

  // The same roles on the same fields: TSDL's from their names, CTF 2's as written.
  std::function<void(TypeId, TypeId, const std::string&)> same_roles = [&](TypeId a, TypeId b,
                                                                           const std::string& at) {
    const Type& x = ctf2.type(a);
    const Type& y = tsdl.type(b);
    EXPECT_EQ(x.roles, y.roles) << at;
    EXPECT_EQ(x.kind, y.kind) << at;
    EXPECT_EQ(x.clock, y.clock) << at;
    EXPECT_EQ(x.base, y.base) << at;  // the display base (TSDL base, CTF 2 preferred)
    ASSERT_EQ(x.members.size(), y.members.size()) << at;
    for (size_t i = 0; i < x.members.size(); ++i)
      same_roles(x.members[i].second, y.members[i].second, at + "." + x.members[i].first);
  };
  same_roles(ctf2.packet_header, tsdl.packet_header, "packet header");
  const StreamClass& sa = ctf2.streams.at(0);
  const StreamClass& sb = tsdl.streams.at(0);
  same_roles(sa.packet_context, sb.packet_context, "packet context");
  same_roles(sa.event_header, sb.event_header, "event header");
  const Type& pc = ctf2.type(sa.packet_context);
  EXPECT_TRUE(Member(ctf2, pc, "cpu_id").Has(Role::kCpuId));
  EXPECT_TRUE(Member(ctf2, pc, "timestamp_begin").Has(Role::kDefaultClockTimestamp));
  const Type& eh = tsdl.type(sb.event_header);
  EXPECT_TRUE(Member(tsdl, eh, "id").Has(Role::kEventRecordClassId));

  // The same programs, scope by scope: as the decoder compiles them, and reading every field.
  TraceDecoder a, b;
  ASSERT_TRUE(a.OpenText("ctf2", text, &error)) << error;
  ASSERT_TRUE(b.OpenText("tsdl", kLttng216Tsdl, &error)) << error;
  ExpectSameProgram(a.plan(), a.packet_header(), b.plan(), b.packet_header(), "packet header");
  EXPECT_EQ(a.magic().slot, b.magic().slot);
  EXPECT_EQ(a.stream_id().slot, b.stream_id().slot);
  StreamPlan* pa = a.FindStream(0);
  StreamPlan* pb = b.FindStream(0);
  ASSERT_TRUE(pa && pb);
  ExpectSameProgram(a.plan(), pa->packet_context, b.plan(), pb->packet_context, "context");
  ExpectSameProgram(a.plan(), pa->event_header, b.plan(), pb->event_header, "event header");
  ExpectSameProgram(a.plan(), pa->common_context, b.plan(), pb->common_context, "common");
  using Handles = std::vector<std::pair<FieldHandle, FieldHandle>>;
  for (const auto& [ha, hb] : Handles{{pa->ts_begin, pb->ts_begin},
                                      {pa->ts_end, pb->ts_end},
                                      {pa->discarded, pb->discarded},
                                      {pa->packet_size, pb->packet_size},
                                      {pa->content_size, pb->content_size},
                                      {pa->cpu_id, pb->cpu_id}}) {
    EXPECT_TRUE(ha.valid());
    EXPECT_EQ(ha.slot, hb.slot);
  }
  EXPECT_EQ(pa->fixed_header.on, pb->fixed_header.on);
  for (size_t i = 0; i < 2; ++i) {
    uint32_t da = 0, db = 0;
    const EventPlan& ea = a.Event(*pa, i, &da);
    const EventPlan& eb = b.Event(*pb, i, &db);
    EXPECT_EQ(ea.known, eb.known);
    EXPECT_EQ(da, db);
    ExpectSameProgram(a.plan(), ea.payload, b.plan(), eb.payload, "payload " + std::to_string(i));
  }
  for (size_t i = 0; i < 2; ++i) {
    DecodePlan all_a(ctf2), all_b(tsdl);
    const int32_t xa = all_a.Compile(sa.events[i].fields, DecodePlan::Scope::kPayload, true);
    const int32_t xb = all_b.Compile(sb.events[i].fields, DecodePlan::Scope::kPayload, true);
    ASSERT_TRUE(all_a.error().empty()) << all_a.error();
    for (DecodePlan* p : {&all_a, &all_b}) {
      p->Finish(p == &all_a ? xa : xb);
      p->Fuse(p == &all_a ? xa : xb);
    }
    ExpectSameProgram(all_a, xa, all_b, xb, "every field of " + sa.events[i].name);
  }
}

TEST(Ctf2Metadata, Lttng216PacketsDecodeAsTheirTsdl) {
  TraceDir ctf2("lttng216-ctf2"), tsdl("lttng216-tsdl");
  ctf2.Write("metadata", Lttng216Ctf2());
  tsdl.Write("metadata", std::string(kLttng216Tsdl));
  std::vector<uint8_t> stream = Lttng216Packet(1);
  const std::vector<uint8_t> second = Lttng216Packet(1);
  stream.insert(stream.end(), second.begin(), second.end());
  ctf2.Write("chan_1", stream);
  tsdl.Write("chan_1", stream);

  TraceDecoder a, b;
  std::string error;
  ASSERT_TRUE(a.Open(ctf2.path(), &error)) << error;
  ASSERT_TRUE(b.Open(tsdl.path(), &error)) << error;
  EXPECT_EQ(a.ToNs(0), 1795835586499356096);
  EXPECT_EQ(a.ToNs(0), b.ToNs(0));
  StreamCursor ca(a, a.files()[0]), cb(b, b.files()[0]);
  using Item = StreamCursor::Item;
  int events = 0, switches = 0;
  for (;;) {
    const Item ia = ca.Next();
    const Item ib = cb.Next();
    ASSERT_EQ(ia, ib) << ca.error() << " / " << cb.error();
    if (ia == Item::kEnd) break;
    ASSERT_NE(ia, Item::kError) << ca.error();
    if (ia == Item::kPacket) {
      EXPECT_EQ(ca.packet_cpu(), 1);
    }
    if (ia == Item::kDiscarded) {
      EXPECT_EQ(ca.discarded_count(), cb.discarded_count());
      EXPECT_EQ(ca.discarded_begin(), cb.discarded_begin());
    }
    if (ia != Item::kEvent) continue;
    ++events;
    EXPECT_EQ(ca.timestamp(), cb.timestamp());
    const ptrdiff_t index = &ca.event() - ca.stream()->events.data();
    EXPECT_EQ(index, &cb.event() - cb.stream()->events.data());
    if (!ca.event().known) continue;
    ++switches;
    const ClassFields<FieldHandle>& fa = ca.event().fields;
    const ClassFields<FieldHandle>& fb = cb.event().fields;
    using Handles = std::vector<std::pair<FieldHandle, FieldHandle>>;
    for (const auto& [ha, hb] : Handles{{fa.a, fb.a}, {fa.b, fb.b}}) {
      ASSERT_TRUE(ha.valid());
      EXPECT_EQ(ca.Raw(ha), cb.Raw(hb));
    }
    for (const auto& [ha, hb] : Handles{{fa.c, fb.c}, {fa.d, fb.d}}) {
      ASSERT_TRUE(ha.is_string());
      EXPECT_EQ(ca.Text(ha), cb.Text(hb));
    }
  }
  EXPECT_EQ(events, 6);
  EXPECT_EQ(switches, 4);
}

// ---- hostile input -----------------------------------------------------------------------

void ExpectOneLineError(const std::string& text, const std::string& want,
                        const Ctf2Limits& limits = {}) {
  Metadata m;
  std::string error;
  EXPECT_FALSE(ParseCtf2(text, &m, &error, limits)) << want;
  EXPECT_NE(error.find(want), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_LT(error.size(), 600u) << error;
}

TEST(Ctf2Metadata, HostileInputIsAOneLineErrorNamingItsLimit) {
  // 10,000 nested arrays: JSON deeper than the bound, refused while it is read.
  std::string deep;
  for (int i = 0; i < 10000; ++i)
    deep += R"({"type": "static-length-array", "length": 1, "element-field-class": )";
  deep += R"({"type": "null-terminated-string"})" + std::string(10000, '}');
  ExpectOneLineError(WithPayload(R"({"name": "d", "field-class": )" + deep + "}"),
                     "metadata record 3: JSON nested deeper than 256 levels (the limit)");
  // 100: JSON within its bound, field classes beyond theirs.
  std::string hundred;
  for (int i = 0; i < 100; ++i)
    hundred += R"({"type": "static-length-array", "length": 1, "element-field-class": )";
  hundred += R"({"type": "null-terminated-string"})" + std::string(100, '}');
  ExpectOneLineError(WithPayload(R"({"name": "d", "field-class": )" + hundred + "}"),
                     "field classes nested deeper than 64 (the limit)");

  // A gibibyte's claims.
  ExpectOneLineError(
      WithPayload(R"({"name": "s", "field-class": {"type": "static-length-string",
                         "length": 1073741824}})"),
      "a static-length string of 1073741824 bytes (more than the limit of 16777216)");
  ExpectOneLineError(WithPayload(R"({"name": "a", "field-class": {"type": "static-length-array",
                         "length": 1073741824, "element-field-class": {"type":
                         "null-terminated-string"}}})"),
                     "a static-length array of 1073741824 elements");
  Ctf2Limits small;
  small.max_bytes = 100;
  ExpectOneLineError(WithPayload(""), "more than the limit of 100", small);

  // A million members: refused at the 65,537th, before the rest is built.
  std::string members;
  members.reserve(1000000 * 40);
  for (int i = 0; i < 1000000; ++i)
    members += std::string(i ? "," : "") + R"({"name": "m)" + std::to_string(i) +
               R"(", "field-class": "u8"})";
  ExpectOneLineError(Sequence({kPreamble, R"({"type": "field-class-alias", "name": "u8",
                         "field-class": {"type": "fixed-length-unsigned-integer", "length": 8,
                         "byte-order": "little-endian"}})",
                               R"({"type": "data-stream-class"})",
                               R"({"type": "event-record-class", "payload-field-class":
                         {"type": "structure", "member-classes": [)" +
                                   members + "]}}"}),
                     "metadata record 4: a structure of more than 65536 members (the limit)");
  ExpectOneLineError(WithPayload(R"({"name": "e", "field-class": {"type":
      "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian",
      "mappings": {"A": [)" +
                                 [] {
                                   std::string r;
                                   for (int i = 0; i < 70000; ++i)
                                     r += std::string(i ? "," : "") + "[1, 1]";
                                   return r;
                                 }() +
                                 "]}}}"),
                     "an integer range set of more than 65536 ranges");

  // Not a JSON text sequence, or a damaged one.
  ExpectOneLineError(std::string(kPreamble), "does not start with the record separator 0x1E");
  const std::string lttng = Lttng216Ctf2();
  ExpectOneLineError(lttng.substr(0, lttng.size() / 2), "not JSON: ");
  ExpectOneLineError(lttng.substr(0, lttng.size() - 1), "not JSON: ");
  ExpectOneLineError(
      Sequence({kPreamble, "{\"type\": \"data-stream-class\", \"name\": \"\xff\xfe\"}"}),
      "metadata record 2: not JSON: ");
  ExpectOneLineError(Sequence({kPreamble, std::string("{\"type\": \"data-stream-class\"}\0x", 31)}),
                     "a NUL byte inside the record");
  ExpectOneLineError(Sequence({kPreamble, "[1, 2]"}), "a fragment is a JSON object");
  ExpectOneLineError("\x1e\x1e\n", "no record");

  // Unknown or incomplete: one line naming the record and where in it.
  ExpectOneLineError(WithPayload(R"({"name": "q", "field-class": {"type": "quaternion"}})"),
                     "metadata record 3 (event-record-class): event record class 0 'e'."
                     "payload-field-class.member-classes[0] 'q'.field-class: unknown field class "
                     "type 'quaternion'");
  ExpectOneLineError(WithPayload(R"({"name": "i", "field-class": {"type":
                         "fixed-length-unsigned-integer", "length": 8}})"),
                     "'i'.field-class: missing required property 'byte-order'");
  ExpectOneLineError(WithPayload(R"({"name": "s", "field-class": {"type":
                         "dynamic-length-string"}})"),
                     "missing required property 'length-field-location'");
  ExpectOneLineError(Sequence({kPreamble, R"({"type": "mystery"})"}),
                     "metadata record 2 (mystery): unknown fragment type 'mystery'");
  ExpectOneLineError(Sequence({R"({"type": "trace-class"})"}),
                     "metadata record 1 (trace-class): the first fragment is a 'trace-class', not "
                     "a preamble");
  ExpectOneLineError(Sequence({R"({"type": "preamble", "version": 3})"}),
                     "CTF version 3 (2 expected)");
  ExpectOneLineError(Sequence({kPreamble, kPreamble}), "metadata record 2 (preamble): a second");
  ExpectOneLineError(Sequence({R"({"type": "preamble", "version": 2, "extensions":
                         {"my.tracer": {"piano": {"keys": 88}}}})"}),
                     "metadata record 1 (preamble): extension 'my.tracer/piano' declared");
  ExpectOneLineError(Sequence({kPreamble, R"({"type": "event-record-class",
                         "data-stream-class-id": 3})"}),
                     "of undeclared data stream class 3");
  ExpectOneLineError(Sequence({kPreamble, R"({"type": "data-stream-class"})",
                               R"({"type": "event-record-class", "id": 4})",
                               R"({"type": "event-record-class", "id": 4})"}),
                     "metadata record 4 (event-record-class): event record class id 4 declared "
                     "twice");
  ExpectOneLineError(Sequence({kPreamble, R"({"type": "data-stream-class",
                         "default-clock-class-id": "none"})"}),
                     "unknown default clock class 'none'");
  ExpectOneLineError(WithPayload(R"({"name": "f", "field-class": {"type":
                         "fixed-length-floating-point-number", "length": 16,
                         "byte-order": "little-endian"}})"),
                     "a floating point number of 16 bits");
  ExpectOneLineError(WithPayload(R"({"name": "v", "field-class": {"type":
                         "variable-length-unsigned-integer"}})"),
                     "(LEB128) is not decoded natively");
  ExpectOneLineError(WithPayload(R"({"name": "s", "field-class": {"type":
                         "null-terminated-string", "encoding": "utf-16le"}})"),
                     "string encoding 'utf-16le'");
  ExpectOneLineError(WithPayload(R"({"name": "b", "field-class": {"type":
                         "fixed-length-unsigned-integer", "length": 8, "byte-order": "big-endian",
                         "bit-order": "first-to-last"}})"),
                     "is not decoded natively");
  ExpectOneLineError(WithPayload(R"({"name": "i", "field-class": {"type":
                         "fixed-length-unsigned-integer", "length": 65,
                         "byte-order": "little-endian"}})"),
                     "of 65 bits (1 to 64");
  ExpectOneLineError(WithPayload(R"({"name": "i", "field-class": "nope"})"),
                     "unknown field class alias 'nope'");
  ExpectOneLineError(
      WithPayload(R"({"name": "a", "field-class": {"type": "null-terminated-string"}},
                         {"name": "a", "field-class": {"type": "null-terminated-string"}})"),
      "duplicate member 'a'");
  ExpectOneLineError(WithPayload(R"({"name": "r", "field-class": {"type":
                         "fixed-length-unsigned-integer", "length": 8, "byte-order": "little-endian",
                         "mappings": {"A": [[5, 1]]}}})"),
                     "integer range [5, 1] ends before it begins");
}

TEST(Ctf2Metadata, IgnoresWhatDoesNotChangeDecoding) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseCtf2(Sequence({R"({"type": "preamble", "version": 2,
                                      "extensions": {"empty.ns": {}}})",
                                  R"({"type": "data-stream-class", "attributes": {"x": [1]},
                                      "extensions": {"undeclared": {"e": 1}}, "uid": "u"})",
                                  "\n",  // RFC 7464: an empty record is no record
                                  R"({"type": "event-record-class", "namespace": "n"})"}) +
                            "\n",
                        &m, &error))
      << error;
  EXPECT_EQ(m.streams.size(), 1u);
}

// ---- the real thing: LTTng 2.16's two formats of one run ---------------------------------

// One event as the native decoder reads it: its class, CPU, and every field (as text).
struct DecodedEvent {
  std::string name;
  int64_t cpu;
  int64_t ns;
  std::vector<std::pair<std::string, std::string>> fields;
};

std::vector<DecodedEvent> ReadEveryEvent(const std::string& dir,
                                         std::map<std::string, int>* per_class) {
  std::vector<DecodedEvent> out;
  TraceDecoder trace;
  trace.ReadEveryField();
  std::string error;
  EXPECT_TRUE(trace.Open(dir, &error)) << error;
  if (!error.empty()) return out;
  for (const std::string& file : trace.files()) {
    StreamCursor c(trace, file);
    int64_t cpu = -1;
    for (auto item = c.Next(); item != StreamCursor::Item::kEnd; item = c.Next()) {
      EXPECT_NE(item, StreamCursor::Item::kError) << c.error();
      if (item == StreamCursor::Item::kPacket) cpu = c.packet_cpu();
      if (item != StreamCursor::Item::kEvent) continue;
      const StreamPlan& sp = *c.stream();
      const size_t index = static_cast<size_t>(&c.event() - sp.events.data());
      const EventClass& ec = sp.sc->events[index];
      DecodedEvent e{ec.name, cpu, trace.ToNs(c.timestamp()), {}};
      ++(*per_class)[ec.name];
      auto read = [&](int32_t program, TypeId root) {
        if (root < 0) return;
        for (const auto& [name, type] : trace.meta().type(root).members) {
          // The decoder's names drop one leading underscore (TSDL writers add one).
          std::string_view query = name;
          if (!query.empty() && query.front() == '_') query.remove_prefix(1);
          const FieldHandle h = trace.plan().Find(program, {query});
          if (!h.valid()) {
            e.fields.emplace_back(name, "(not read)");  // floats: skipped by the decoder
          } else if (h.is_string()) {
            e.fields.emplace_back(name, std::string(c.Text(h)));
          } else {
            e.fields.emplace_back(name, std::to_string(c.Raw(h)));
          }
        }
      };
      read(sp.common_context, sp.sc->event_context);
      read(c.event().payload, ec.fields);
      out.push_back(std::move(e));
    }
  }
  return out;
}

TEST(Ctf2Metadata, Lttng216FixtureReadsAsItsCtf18Twin) {
  const std::string root = std::string(WAITPATH_FIXTURES) + "/lttng216";
  if (!fs::exists(root + "/ust-ctf2/metadata")) {
    GTEST_SKIP() << "no " << root;
  }
  Metadata m;
  std::string error;
  ASSERT_TRUE(LoadMetadata(root + "/ust-ctf2", &m, &error)) << error;
  EXPECT_EQ(m.format, Metadata::Format::kCtf2);
  EXPECT_EQ(m.tracer_name, "lttng-ust");
  EXPECT_EQ(m.tracer_version, "2.16");

  std::map<std::string, int> classes2, classes18;
  const std::vector<DecodedEvent> ctf2 = ReadEveryEvent(root + "/ust-ctf2", &classes2);
  const std::vector<DecodedEvent> ctf18 = ReadEveryEvent(root + "/ust-ctf18", &classes18);
  EXPECT_EQ(ctf2.size(), 2550u);
  EXPECT_EQ(classes2, classes18);
  EXPECT_EQ(classes2["ust_fields:ints"], 600);
  EXPECT_EQ(classes2["ust_fields:blobs"], 150);
  ASSERT_EQ(ctf2.size(), ctf18.size());
  for (size_t i = 0; i < ctf2.size(); ++i) {
    const DecodedEvent& a = ctf2[i];
    const DecodedEvent& b = ctf18[i];
    ASSERT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.cpu, b.cpu) << i;
    // Each session's buffers read the clock themselves: a few hundred ns apart.
    EXPECT_LT(std::llabs(a.ns - b.ns), 1000000) << i;
    // TSDL's names carry LTTng's leading underscore.
    ASSERT_EQ(a.fields.size(), b.fields.size()) << a.name;
    for (size_t f = 0; f < a.fields.size(); ++f) {
      EXPECT_EQ("_" + a.fields[f].first, b.fields[f].first) << a.name;
      EXPECT_EQ(a.fields[f].second, b.fields[f].second) << a.name << "." << a.fields[f].first;
    }
  }
}

// ReadForDump + LogEveryRead (tools/ctf_dump's, for the babeltrace2 2.1 oracle): every value
// of an event in decode order, floats and each array element included.
TEST(Ctf2Metadata, DisplayBasesAreThoseOfTheMetadata) {
  // How babeltrace2 prints an integer (tools/ctf_dump follows it): ust_fields:ints' x32 is
  // hexadecimal in both formats, s32 decimal.
  for (const char* name : {"ust-ctf2", "ust-ctf18"}) {
    const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng216/" + name;
    if (!fs::exists(dir + "/metadata")) GTEST_SKIP() << "no " << dir;
    Metadata m;
    std::string error;
    ASSERT_TRUE(LoadMetadata(dir, &m, &error)) << error;
    const EventClass* ints = nullptr;
    for (const EventClass& ec : m.streams.at(0).events) {
      if (ec.name == "ust_fields:ints") ints = &ec;
    }
    ASSERT_TRUE(ints) << name;
    std::map<std::string, int> bases;
    for (const auto& [member, type] : m.type(ints->fields).members)
      bases[member] = m.type(type).base;
    EXPECT_EQ(bases[m.format == Metadata::Format::kCtf2 ? "x32" : "_x32"], 16) << name;
    EXPECT_EQ(bases[m.format == Metadata::Format::kCtf2 ? "s32" : "_s32"], 10) << name;
  }
}

TEST(Ctf2Metadata, DumpModeLogsEveryValueInOrder) {
  const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng216/ust-ctf2";
  if (!fs::exists(dir + "/metadata")) GTEST_SKIP() << "no " << dir;
  TraceDecoder trace;
  trace.ReadForDump();
  std::string error;
  ASSERT_TRUE(trace.Open(dir, &error)) << error;
  StreamCursor c(trace, trace.files()[0]);  // chan_0: thread 0
  c.LogEveryRead();
  using Item = StreamCursor::Item;
  using Logged = StreamCursor::Logged;
  using S = DecodePlan::Scope;
  bool blobs = false, floats = false;
  for (auto item = c.Next(); item != Item::kEnd && !(blobs && floats); item = c.Next()) {
    ASSERT_NE(item, Item::kError) << c.error();
    if (item != Item::kEvent) continue;
    const StreamPlan& sp = *c.stream();
    const std::string& name =
        sp.sc->events[static_cast<size_t>(&c.event() - sp.events.data())].name;
    const std::span<const Logged> payload = c.logged(S::kPayload);
    // The packet context: cpu_id among its values (packet properties too), 0 on chan_0.
    ASSERT_FALSE(c.logged(S::kPacketContext).empty());
    ASSERT_EQ(c.logged(S::kCommonContext).size(), 3u);  // vpid, vtid, procname
    EXPECT_EQ(c.LoggedText(c.logged(S::kCommonContext)[2]), "ust-fields-0");
    if (name == "ust_fields:blobs" && !blobs) {
      blobs = true;
      // fixed16 (16 bytes 0x00, 0x11 ... 0xff), _var_length = 0, var (none).
      ASSERT_EQ(payload.size(), 1u + 16u + 1u + 1u);
      EXPECT_EQ(payload[0].kind, Logged::kArray);
      EXPECT_EQ(payload[0].v, 16u);
      for (uint64_t i = 0; i < 16; ++i) {
        EXPECT_EQ(payload[1 + i].kind, Logged::kValue);
        EXPECT_EQ(payload[1 + i].v, (i * 0x11) & 0xff) << i;
      }
      EXPECT_EQ(payload[17].v, 0u);
      EXPECT_EQ(payload[18].kind, Logged::kArray);
      EXPECT_EQ(payload[18].v, 0u);
    }
    if (name == "ust_fields:floats" && !floats) {
      floats = true;  // the first: f32 = 0, f64 = -0 (their bits)
      ASSERT_EQ(payload.size(), 2u);
      EXPECT_EQ(payload[0].v, 0u);
      EXPECT_EQ(payload[1].v, uint64_t{1} << 63);
    }
  }
  EXPECT_TRUE(blobs && floats);
}

}  // namespace
}  // namespace waitpath::ctf
