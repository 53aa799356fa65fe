#include "ctf/stream_cursor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace waitpath::ctf {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadata = R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
trace { major = 1; minor = 8; byte_order = le;
  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
env { hostname = "t"; };
clock { name = "mono"; freq = 1000000000; offset_s = 10; offset = 5; };
typealias integer { size = 27; align = 1; signed = false; map = clock.mono.value; } := ts27;
typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := ts64;
stream { id = 0;
  packet.context := struct { ts64 timestamp_begin; ts64 timestamp_end; uint64_t content_size;
    uint64_t packet_size; uint64_t events_discarded; uint32_t cpu_id; };
  event.header := struct { enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
    variant <id> { struct { ts27 timestamp; } compact;
                   struct { uint32_t id; ts64 timestamp; } extended; } v; } align(8);
};
event { name = "sched_switch"; id = 0; stream_id = 0; fields := struct {
  integer { size = 32; align = 8; signed = 1; } _prev_tid;
  integer { size = 8; align = 8; signed = 1; encoding = UTF8; } _prev_comm[16];
  integer { size = 32; align = 8; signed = 1; } _next_tid;
  string _next_comm; }; };
event { name = "other"; id = 1; stream_id = 0; fields := struct {
  uint16_t _len; uint8_t _data[_len]; uint32_t _after; }; };
)";

// Writes CTF's bit orders: little-endian (from each byte's least significant bit, the value's
// least significant bit first) or big-endian (from the most significant, most significant first).
class Bits {
 public:
  explicit Bits(bool big = false) : big_(big) {}
  void Put(uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i) {
      if (pos_ / 8 >= bytes_.size()) bytes_.push_back(0);
      const unsigned bit = big_ ? size - 1 - i : i;
      const unsigned at = big_ ? 7 - pos_ % 8 : pos_ % 8;
      if ((v >> bit) & 1) bytes_[pos_ / 8] |= static_cast<uint8_t>(1u << at);
      ++pos_;
    }
  }
  void Align(unsigned bits) {
    while (pos_ % bits) Put(0, 1);
  }
  void Text(const std::string& s, size_t n) {
    Align(8);
    for (size_t i = 0; i < n; ++i) Put(i < s.size() ? static_cast<uint8_t>(s[i]) : 0, 8);
  }
  size_t pos() const { return pos_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  // Overwrites 64 bits at `bit` (byte-aligned).
  void Patch(size_t bit, uint64_t v) {
    for (int i = 0; i < 8; ++i)
      bytes_[bit / 8 + i] = static_cast<uint8_t>(v >> (8 * (big_ ? 7 - i : i)));
  }

 private:
  bool big_;
  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
};

struct PacketSpec {
  uint64_t begin, end, discarded;
  std::vector<uint64_t> compact_ts;  // events: 27-bit compact timestamps, sched_switch each
  uint64_t extended_ts = 0;          // then one `other` event with an extended header (if != 0)
};

void WritePacket(Bits& b, const PacketSpec& p) {
  const size_t start = b.pos();
  b.Put(0xC1FC1FC1, 32);
  b.Put(0, 32);
  b.Put(p.begin, 64);
  b.Put(p.end, 64);
  const size_t content_at = b.pos();
  b.Put(0, 64);
  b.Put(0, 64);
  b.Put(p.discarded, 64);
  b.Put(3, 32);  // cpu_id
  for (uint64_t ts : p.compact_ts) {
    b.Align(8);
    b.Put(0, 5);  // id 0: sched_switch
    b.Put(ts, 27);
    b.Align(8);
    b.Put(static_cast<uint64_t>(-7) & 0xffffffff, 32);
    b.Text("swapper/3", 16);
    b.Put(42, 32);
    b.Text("worker", 7);
  }
  if (p.extended_ts) {
    b.Align(8);
    b.Put(31, 5);
    b.Align(8);
    b.Put(1, 32);
    b.Put(p.extended_ts, 64);
    b.Put(3, 16);
    b.Put(0xAA, 8);
    b.Put(0xBB, 8);
    b.Put(0xCC, 8);
    b.Put(0xDEADBEEF, 32);
  }
  const size_t content = b.pos() - start;
  b.Align(8);
  while ((b.pos() - start) % 512) b.Put(0, 8);
  b.Patch(content_at, content);
  b.Patch(content_at + 64, b.pos() - start);
}

class StreamCursorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("waitpath-ctf-cursor-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "metadata") << kMetadata;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteMetadata(const std::string& text) { std::ofstream(dir_ / "metadata") << text; }

  void WriteStream(Bits& b, size_t cut = 0) {
    std::ofstream out(dir_ / "channel0_3", std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.bytes().data()),
              static_cast<std::streamsize>(b.bytes().size() - cut));
  }

  fs::path dir_;
};

TEST_F(StreamCursorTest, DecodesEventsAndFollowsTheClock) {
  Bits b;
  // The 27-bit timestamps wrap: 0x7FFFFF0 then 0x10 is 2^27 + 0x10 past the packet's start.
  WritePacket(b, {0x100, (1u << 27) + 0x100, 0, {0x7FFFFF0, 0x10}, 0x9000000});
  WritePacket(b, {0x9000100, 0x9000200, 5, {0x1000101}, 0});
  WriteStream(b);
  TraceDecoder trace;
  std::string error;
  ASSERT_TRUE(trace.Open(dir_.string(), &error)) << error;
  ASSERT_EQ(trace.files().size(), 1u);
  EXPECT_EQ(trace.ToNs(1), 10'000'000'005 + 1);
  StreamCursor c(trace, trace.files()[0]);
  using Item = StreamCursor::Item;
  ASSERT_EQ(c.Next(), Item::kPacket);
  EXPECT_EQ(c.packet_cpu(), 3);

  ASSERT_EQ(c.Next(), Item::kEvent) << c.error();
  EXPECT_EQ(c.timestamp(), 0x7FFFFF0u);
  const ClassFields<FieldHandle>& f = c.event().fields;
  ASSERT_TRUE(c.event().known);
  EXPECT_EQ(static_cast<int64_t>(c.Raw(f.a)), -7);  // prev_tid, sign-extended
  EXPECT_EQ(c.Raw(f.b), 42u);
  EXPECT_EQ(c.Text(f.c), "swapper/3");  // a text array, up to its NUL
  EXPECT_EQ(c.Text(f.d), "worker");

  ASSERT_EQ(c.Next(), Item::kEvent);
  EXPECT_EQ(c.timestamp(), (uint64_t{1} << 27) + 0x10);  // wrapped once
  ASSERT_EQ(c.Next(), Item::kEvent);                     // `other`: extended header
  EXPECT_EQ(c.timestamp(), 0x9000000u);
  EXPECT_FALSE(c.event().known);

  // Second packet: 5 discarded since the first (count known), from the first one's end.
  ASSERT_EQ(c.Next(), Item::kDiscarded);
  EXPECT_TRUE(c.discarded_known());
  EXPECT_EQ(c.discarded_count(), 5u);
  EXPECT_EQ(c.discarded_begin(), (uint64_t{1} << 27) + 0x100);
  ASSERT_EQ(c.Next(), Item::kPacket);
  ASSERT_EQ(c.Next(), Item::kEvent);
  // timestamp_begin set the clock: low 27 bits 0x1000101 above its own 0x1000100.
  EXPECT_EQ(c.timestamp(), 0x9000101u);
  EXPECT_EQ(c.Next(), Item::kEnd);
}

TEST_F(StreamCursorTest, BigEndianTraces) {
  std::string meta = kMetadata;
  meta.replace(meta.find("byte_order = le"), 15, "byte_order = be");
  WriteMetadata(meta);
  Bits b(/*big=*/true);
  WritePacket(b, {0x100, 0x9000000, 0, {0x7FFFFF0, 0x10}, 0x8000000});
  WriteStream(b);
  TraceDecoder trace;
  std::string error;
  ASSERT_TRUE(trace.Open(dir_.string(), &error)) << error;
  StreamCursor c(trace, trace.files()[0]);
  using Item = StreamCursor::Item;
  ASSERT_EQ(c.Next(), Item::kPacket) << c.error();
  EXPECT_EQ(c.packet_cpu(), 3);
  ASSERT_EQ(c.Next(), Item::kEvent) << c.error();
  EXPECT_EQ(c.timestamp(), 0x7FFFFF0u);
  const ClassFields<FieldHandle>& f = c.event().fields;
  EXPECT_EQ(static_cast<int64_t>(c.Raw(f.a)), -7);
  EXPECT_EQ(c.Raw(f.b), 42u);
  EXPECT_EQ(c.Text(f.c), "swapper/3");
  ASSERT_EQ(c.Next(), Item::kEvent);
  EXPECT_EQ(c.timestamp(), (uint64_t{1} << 27) + 0x10);
  ASSERT_EQ(c.Next(), Item::kEvent);
  EXPECT_EQ(c.timestamp(), 0x8000000u);
  EXPECT_EQ(c.Next(), Item::kEnd) << c.error();
}

TEST_F(StreamCursorTest, ReportsDamageAndGoesOn) {
  Bits b;
  WritePacket(b, {0x100, 0x200, 0, {0x150}, 0});
  const size_t second = b.bytes().size();
  WritePacket(b, {0x300, 0x400, 0, {0x350, 0x360}, 0});
  WritePacket(b, {0x500, 0x600, 0, {0x550}, 0});
  // An event of an unknown class in the second packet (its first event's id: 7).
  b.bytes()[second + 52] = static_cast<uint8_t>((b.bytes()[second + 52] & ~0x1F) | 7);
  WriteStream(b);
  TraceDecoder trace;
  std::string error;
  ASSERT_TRUE(trace.Open(dir_.string(), &error)) << error;
  StreamCursor c(trace, trace.files()[0]);
  using Item = StreamCursor::Item;
  std::vector<Item> items;
  for (Item i = c.Next(); i != Item::kEnd; i = c.Next()) items.push_back(i);
  const std::vector<Item> want = {Item::kPacket, Item::kEvent,  Item::kPacket,
                                  Item::kError,  Item::kPacket, Item::kEvent};
  EXPECT_EQ(items, want);
  char want_error[64];
  snprintf(want_error, sizeof want_error, "packet at offset 0x%zx: no event class with id 7",
           second);
  EXPECT_NE(c.error().find(want_error), std::string::npos) << c.error();
}

TEST_F(StreamCursorTest, TruncatedAndBogusSizesAreErrorsNotCrashes) {
  for (int variant = 0; variant < 3; ++variant) {
    Bits b;
    WritePacket(b, {0x100, 0x200, 0, {0x150, 0x160}, 0});
    size_t cut = 0;
    if (variant == 0) cut = 40;                             // the file ends inside the packet
    if (variant == 1) b.Patch(8 * 8 + 64 * 3, 1ull << 62);  // packet_size absurd
    if (variant == 2) b.Patch(8 * 8 + 64 * 2, 1ull << 40);  // content_size past the packet
    WriteStream(b, cut);
    TraceDecoder trace;
    std::string error;
    ASSERT_TRUE(trace.Open(dir_.string(), &error)) << error;
    StreamCursor c(trace, trace.files()[0]);
    int errors = 0, n = 0;
    for (auto i = c.Next(); i != StreamCursor::Item::kEnd && n < 100; i = c.Next(), ++n)
      errors += i == StreamCursor::Item::kError;
    EXPECT_EQ(errors, 1) << variant;
    EXPECT_FALSE(c.error().empty());
  }
}

// A header of one fixed run (the event id and the clock, whole bytes: the generator's and
// perf's layout) is read directly (FixedHeader), with what its program gives: the id, the
// clock, and an error for a header past the packet's content.
TEST_F(StreamCursorTest, AFixedHeaderIsReadDirectly) {
  std::string meta = kMetadata;
  const size_t from = meta.find("event.header :=");
  const size_t to = meta.find("align(8);", from) + 9;
  meta.replace(from, to - from,
               "event.header := struct { uint16_t id; ts64 timestamp; } align(8);");
  WriteMetadata(meta);
  Bits b;
  const size_t start = b.pos();
  b.Put(0xC1FC1FC1, 32);
  b.Put(0, 32);
  b.Put(0x100, 64);
  b.Put(0x900, 64);
  const size_t content_at = b.pos();
  b.Put(0, 64);
  b.Put(0, 64);
  b.Put(0, 64);
  b.Put(2, 32);  // cpu_id
  for (uint64_t ts : {0x150, 0x800}) {
    b.Align(8);
    b.Put(0, 16);  // sched_switch
    b.Put(ts, 64);
    b.Put(static_cast<uint64_t>(-7) & 0xffffffff, 32);
    b.Text("swapper/2", 16);
    b.Put(42, 32);
    b.Text("worker", 7);
  }
  b.Align(8);
  b.Put(1, 16);  // `other`, its header cut after the id: past the content
  const size_t content = b.pos() - start;
  while ((b.pos() - start) % 512) b.Put(0, 8);
  b.Patch(content_at, content);
  b.Patch(content_at + 64, b.pos() - start);
  WriteStream(b);
  TraceDecoder trace;
  std::string error;
  ASSERT_TRUE(trace.Open(dir_.string(), &error)) << error;
  ASSERT_NE(trace.FindStream(0), nullptr);
  EXPECT_TRUE(trace.FindStream(0)->fixed_header.on);
  StreamCursor c(trace, trace.files()[0]);
  using Item = StreamCursor::Item;
  ASSERT_EQ(c.Next(), Item::kPacket);
  for (uint64_t ts : {0x150, 0x800}) {
    ASSERT_EQ(c.Next(), Item::kEvent) << c.error();
    EXPECT_EQ(c.timestamp(), ts);
    ASSERT_TRUE(c.event().known);
    EXPECT_EQ(c.Raw(c.event().fields.b), 42u);
    EXPECT_EQ(c.Text(c.event().fields.c), "swapper/2");
  }
  EXPECT_EQ(c.Next(), Item::kError);
  EXPECT_NE(c.error().find("past the packet's content"), std::string::npos) << c.error();
  EXPECT_EQ(c.Next(), Item::kEnd);

  // LTTng's header (a tag, then a variant) is not one.
  WriteMetadata(kMetadata);
  TraceDecoder lttng;
  ASSERT_TRUE(lttng.Open(dir_.string(), &error)) << error;
  EXPECT_FALSE(lttng.FindStream(0)->fixed_header.on);
}

// Live: the same stream fed packet by packet (as the relayd sends them), its trace's metadata
// growing in between, reads exactly as the file: the clock and the discarded-events counter go
// on from packet to packet, and an error names the offset in the stream.
TEST_F(StreamCursorTest, FedPacketsReadAsTheFile) {
  Bits b;
  WritePacket(b, {0x100, (1u << 27) + 0x100, 0, {0x7FFFFF0, 0x10}, 0x9000000});
  const size_t second = b.bytes().size();
  WritePacket(b, {0x9000100, 0x9000200, 5, {0x1000101}, 0});
  const size_t third = b.bytes().size();
  WritePacket(b, {0x9000300, 0x9000400, 5, {0x1000350}, 0});
  b.bytes()[third + 52] = static_cast<uint8_t>((b.bytes()[third + 52] & ~0x1F) | 7);
  WriteStream(b);
  TraceDecoder file_trace;
  std::string error;
  ASSERT_TRUE(file_trace.Open(dir_.string(), &error)) << error;
  struct Read {
    StreamCursor::Item item;
    uint64_t ts;
    bool operator==(const Read&) const = default;
  };
  auto read_all = [](StreamCursor& c, std::vector<Read>& out) {
    for (auto i = c.Next(); i != StreamCursor::Item::kEnd; i = c.Next())
      out.push_back({i, i == StreamCursor::Item::kEvent ? c.timestamp() : 0});
  };
  std::vector<Read> want;
  StreamCursor file(file_trace, file_trace.files()[0]);
  read_all(file, want);

  TraceDecoder first, grown;
  ASSERT_TRUE(first.OpenText("live/t", kMetadata, &error)) << error;
  const std::string more = std::string(kMetadata) +
                           "event { name = \"later\"; id = 2; stream_id = 0; fields := struct { "
                           "uint8_t _x; }; };\n";
  ASSERT_TRUE(grown.OpenText("live/t", more, &error)) << error;
  StreamCursor fed(first, "live/t/chan_3", StreamCursor::InMemory{});
  std::vector<Read> got;
  EXPECT_EQ(fed.Next(), StreamCursor::Item::kEnd);  // nothing fed yet
  const std::vector<uint8_t>& all = b.bytes();
  fed.Feed({all.data(), second});
  read_all(fed, got);
  fed.Rebind(grown);
  fed.Feed({all.data() + second, third - second});
  read_all(fed, got);
  fed.Feed({all.data() + third, all.size() - third});
  read_all(fed, got);
  EXPECT_EQ(got, want);
  char want_error[64];
  snprintf(want_error, sizeof want_error, "packet at offset 0x%zx: no event class with id 7",
           third);
  EXPECT_NE(fed.error().find(want_error), std::string::npos) << fed.error();
}

// A clock value no int64 nanosecond count holds (a damaged live packet, a relayd's index: the
// relayd mutation run gave a beacon of 2^63-1) saturates; it overflowed before (UBSan: signed
// integer overflow in ToNs).
TEST(TraceDecoderTest, ClockValuesPastInt64NanosecondsSaturate) {
  ctf::TraceDecoder t;
  std::string error;
  ASSERT_TRUE(t.OpenText("live/t", kMetadata, &error)) << error;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(t.ToNs(7), 10'000'000'012);
  EXPECT_EQ(t.ToNs(static_cast<uint64_t>(kMax)), kMax);
  EXPECT_EQ(t.ToNs(~uint64_t{0}), kMax);
  EXPECT_EQ(t.ToNs(static_cast<uint64_t>(kMax) - 10'000'000'005), kMax);
}

// A clock whose offset is past what int64 nanoseconds hold is refused in one line (before: the
// offset's nanoseconds overflowed).
TEST(TraceDecoderTest, AClockOffsetPastInt64NanosecondsIsRefused) {
  std::string meta = kMetadata;
  const std::string from = "offset_s = 10;";
  for (const char* offset_s : {"offset_s = 9300000000;", "offset_s = -9300000000;"}) {
    std::string bad = meta;
    bad.replace(bad.find(from), from.size(), offset_s);
    ctf::TraceDecoder t;
    std::string error;
    EXPECT_FALSE(t.OpenText("live/t", bad, &error)) << offset_s;
    EXPECT_NE(error.find("offset"), std::string::npos) << error;
  }
}
}  // namespace
}  // namespace waitpath::ctf
