#include "relayd/ctf_directory_writer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace waitpath {
namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CtfDirectoryWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("ctf-writer-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(CtfDirectoryWriterTest, MetadataAndPacketsLandWhereTheRelaydPutsThem) {
  CtfDirectoryWriter writer(root_);
  writer.Write(ViewerMetadata{
      .session_id = 1, .trace_id = 7, .path = "ust/uid/0/64-bit", .text = "/* CTF 1.8 */\n"});
  writer.Write(ViewerMetadata{
      .session_id = 1, .trace_id = 7, .path = "ust/uid/0/64-bit", .text = "trace {};\n"});
  const std::byte a[] = {std::byte{1}, std::byte{2}};
  const std::byte b[] = {std::byte{3}};
  ViewerPacket p;
  p.path = "ust/uid/0/64-bit";
  p.channel = "chan_1";
  p.bytes = a;
  writer.Write(p);
  p.bytes = b;
  writer.Write(p);
  writer.Write(ViewerBeacon{.session_id = 1, .stream_id = 3, .ctf_stream_id = 0, .timestamp = 9});
  writer.Flush();
  EXPECT_EQ(Slurp(root_ / "ust/uid/0/64-bit/metadata"), "/* CTF 1.8 */\ntrace {};\n");
  EXPECT_EQ(Slurp(root_ / "ust/uid/0/64-bit/chan_1"), std::string("\x01\x02\x03", 3));
  EXPECT_EQ(writer.packets(), 2u);
  EXPECT_EQ(writer.packet_bytes(), 3u);
  EXPECT_EQ(writer.metadata_bytes(), 24u);
}

TEST_F(CtfDirectoryWriterTest, ARelaydPathLeavingTheDirectoryIsRefused) {
  CtfDirectoryWriter writer(root_);
  EXPECT_THROW(writer.Write(ViewerMetadata{.path = "ust/../../etc", .text = "x"}),
               std::runtime_error);
  ViewerPacket p;
  p.path = "ust";
  p.channel = "../x";
  EXPECT_THROW(writer.Write(p), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(root_.parent_path() / "etc" / "metadata"));
}

}  // namespace
}  // namespace waitpath
