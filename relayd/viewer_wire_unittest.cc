#include "relayd/viewer_wire.h"

#include <gtest/gtest.h>

#include <cstring>

namespace waitpath::viewer_wire {
namespace {

TEST(ViewerWireTest, IntegersAreBigEndianOnTheWire) {
  CmdHeader h{};
  h.data_size.set(0x0102030405060708ull);
  h.cmd.set(kGetPacket);
  h.cmd_version.set(0);
  unsigned char bytes[sizeof(h)];
  std::memcpy(bytes, &h, sizeof(h));
  const unsigned char want[16] = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 5, 0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(bytes, want, sizeof(want)), 0);
  EXPECT_EQ(h.data_size.get(), 0x0102030405060708ull);
  EXPECT_EQ(h.cmd.get(), 5u);
}

TEST(ViewerWireTest, FieldsSitAtTheRelaydsOffsets) {
  // lttng_viewer_index: seven u64 then status and flags.
  IndexReply r{};
  r.status.set(kIndexInactive);
  r.flags.set(kFlagNewStream);
  unsigned char bytes[sizeof(r)];
  std::memcpy(bytes, &r, sizeof(r));
  EXPECT_EQ(bytes[59], kIndexInactive);
  EXPECT_EQ(bytes[63], kFlagNewStream);
  // lttng_viewer_stream: the channel name right after the 4096-byte path.
  StreamRecord s{};
  s.channel_name.chars[0] = 'c';
  EXPECT_EQ(reinterpret_cast<const char*>(&s)[8 + 8 + 4 + 4096], 'c');
}

TEST(ViewerWireTest, AFullNameWithoutItsNulIsReadToTheFieldsEnd) {
  FixedString<4> f;
  std::memcpy(f.chars.data(), "abcd", 4);
  EXPECT_EQ(f.str(), "abcd");
  f.chars[2] = '\0';
  EXPECT_EQ(f.str(), "ab");
}

}  // namespace
}  // namespace waitpath::viewer_wire
