#include "ctf/decode_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace waitpath::ctf {
namespace {

constexpr const char* kMetadata = R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace { major = 1; minor = 8; byte_order = le; };
stream { id = 0; };
event { name = "e"; id = 0; stream_id = 0; fields := struct {
  uint32_t _a;
  uint64_t _b;
  uint8_t _skipped[16];
  uint32_t _c;
  enum : uint8_t { _none = 0, _ipv4 = 4, _ipv6 = 6 } _type;
  variant <_type> { struct { } _none; struct { uint32_t _saddr; } _ipv4; uint64_t _ipv6; } _nh;
  uint16_t _n;
  uint32_t _seq[_n];
}; };
)";

class DecodePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(ParseTsdl(kMetadata, &meta_, &error)) << error;
    fields_ = meta_.streams[0].events[0].fields;
  }
  Metadata meta_;
  TypeId fields_ = -1;
};

TEST_F(DecodePlanTest, ReadsWhatIsWantedAndSkipsTheRestInOneRun) {
  DecodePlan plan(meta_);
  const int32_t p = plan.Compile(fields_, DecodePlan::Scope::kPayload, false);
  const FieldHandle c = plan.Find(p, {"c"});  // found without its leading underscore
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(c.leaf, FieldHandle::kUnsigned);
  EXPECT_FALSE(plan.Find(p, {"nope"}).valid());
  plan.Finish(p);
  ASSERT_TRUE(plan.error().empty()) << plan.error();
  const std::vector<Op>& ops = plan.program(p);
  // a, b and the 16 bytes are one skip; c is read; the tag is read (the variant needs it).
  ASSERT_GE(ops.size(), 4u);
  EXPECT_EQ(ops[0].code, Op::kAlign);
  EXPECT_EQ(ops[1].code, Op::kSkip);
  EXPECT_EQ(ops[1].arg, 32u + 64u + 128u);
  EXPECT_EQ(ops[2].code, Op::kIntFast);
  EXPECT_EQ(ops[2].slot, c.slot);
  EXPECT_EQ(ops[3].code, Op::kIntFast);  // the variant's tag
  EXPECT_EQ(ops[4].code, Op::kVariant);
  const VariantTable& table = plan.variant(ops[4].sub);
  ASSERT_EQ(table.cases.size(), 3u);
  EXPECT_EQ(table.cases[1].lo, 4u);
  // The sequence's length is read, its unwanted elements skipped by count.
  EXPECT_EQ(ops.back().code, Op::kSkipArray);
  EXPECT_EQ(ops.back().sub_bits, 32u);
  EXPECT_GE(ops.back().count, 0);
}

TEST_F(DecodePlanTest, FieldsInsideVariantOptionsAndArraysAsAddresses) {
  DecodePlan plan(meta_);
  const int32_t p = plan.Compile(fields_, DecodePlan::Scope::kPayload, false);
  const FieldHandle saddr = plan.Find(p, {"nh", "ipv4", "saddr"});
  EXPECT_TRUE(saddr.valid());
  const FieldHandle seq = plan.Find(p, {"seq"});
  ASSERT_TRUE(seq.valid());
  EXPECT_EQ(seq.leaf, FieldHandle::kAddress);
  plan.Finish(p);
  EXPECT_EQ(plan.program(p).back().code, Op::kAddress);
}

TEST_F(DecodePlanTest, FuseJoinsFixedSizeFieldsIntoOneRunAndKeepsTheOpsForDamage) {
  DecodePlan plan(meta_);
  const int32_t p = plan.Compile(fields_, DecodePlan::Scope::kPayload, false);
  const FieldHandle a = plan.Find(p, {"a"});
  const FieldHandle c = plan.Find(p, {"c"});
  plan.Finish(p);
  const std::vector<Op> before = plan.program(p);
  plan.Fuse(p);
  const std::vector<Op>& ops = plan.program(p);
  // a, b + the 16 bytes skipped, c and the tag: one run; the variant and the sequence stay.
  ASSERT_GE(ops.size(), 3u);
  EXPECT_EQ(ops[0].code, Op::kAlign);
  ASSERT_EQ(ops[1].code, Op::kFields);
  EXPECT_EQ(ops[2].code, Op::kVariant);
  const FieldRun& run = plan.field_run(ops[1].sub);
  EXPECT_EQ(run.bits, 32u + 64u + 128u + 32u + 8u);
  EXPECT_TRUE(run.on_byte);
  ASSERT_EQ(run.reads.size(), 3u);
  EXPECT_EQ(run.reads[0].offset, 0u);
  EXPECT_EQ(run.reads[0].kind, FieldRead::kU32);
  EXPECT_EQ(run.reads[0].op.slot, a.slot);
  EXPECT_EQ(run.reads[1].offset, 32u + 64u + 128u);
  EXPECT_EQ(run.reads[1].op.slot, c.slot);
  EXPECT_EQ(run.reads[2].kind, FieldRead::kU8);  // the variant's tag
  // The same fields one by one, read when the run does not fit in a damaged packet.
  const std::vector<Op>& unfused = plan.program(run.unfused);
  ASSERT_EQ(unfused.size(), 4u);
  for (size_t i = 0; i < unfused.size(); ++i) EXPECT_EQ(unfused[i].code, before[i + 1].code);
}

TEST_F(DecodePlanTest, AVariantWhoseTagIsMissingIsAnError) {
  Metadata m;
  std::string error;
  ASSERT_TRUE(ParseTsdl(R"(
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
trace { major = 1; minor = 8; byte_order = le; };
stream { id = 0; };
event { name = "e"; id = 0; stream_id = 0; fields := struct {
  variant <nowhere> { uint8_t a; } v; }; };
)",
                        &m, &error))
      << error;
  DecodePlan plan(m);
  plan.Compile(m.streams[0].events[0].fields, DecodePlan::Scope::kPayload, false);
  EXPECT_NE(plan.error().find("variant tag 'nowhere'"), std::string::npos) << plan.error();
}

}  // namespace
}  // namespace waitpath::ctf
