#include "live/packet_ring.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace waitpath {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

PacketBytes Packet(char fill, size_t n) {
  return PacketBytes(n, fill);
}

// Bounded in bytes, the oldest packets going first (counted), their buffers given back; what
// is left is written as one CTF directory per trace, each stream's packets in order.
TEST(PacketRingTest, KeepsTheNewestPacketsAndWritesThemAsTraces) {
  PacketRing ring(300);
  ring.SetMetadata("h/s/ust/uid/0/64-bit", "/* CTF 1.8 */ v1");
  ring.SetMetadata("h/s/ust/uid/0/64-bit", "/* CTF 1.8 */ v2");  // grown: replaced
  ring.SetMetadata("h/s/kernel", "kernel metadata");             // no packet: not written
  EXPECT_TRUE(ring.Add("h/s/ust/uid/0/64-bit", "chan_0", Packet('a', 100)).empty());
  EXPECT_TRUE(ring.Add("h/s/ust/uid/0/64-bit", "chan_1", Packet('b', 100)).empty());
  EXPECT_TRUE(ring.Add("h/s/ust/uid/0/64-bit", "chan_0", Packet('c', 100)).empty());
  const PacketBytes reuse = ring.Add("h/s/ust/uid/0/64-bit", "chan_0", Packet('d', 100));
  EXPECT_EQ(reuse, Packet('a', 100));  // the oldest went
  const PacketRing::Counts c = ring.counts();
  EXPECT_EQ(c.packets, 3u);
  EXPECT_EQ(c.bytes, 300u);
  EXPECT_EQ(c.dropped, 1u);

  const fs::path dir = fs::temp_directory_path() / ("waitpath-ring-" + std::to_string(getpid()));
  std::string error;
  const std::vector<std::string> traces = ring.WriteTo(dir.string(), &error);
  ASSERT_EQ(traces.size(), 1u) << error;
  EXPECT_EQ(Slurp(fs::path(traces[0]) / "metadata"), "/* CTF 1.8 */ v2");
  EXPECT_EQ(Slurp(fs::path(traces[0]) / "chan_0"), std::string(100, 'c') + std::string(100, 'd'));
  EXPECT_EQ(Slurp(fs::path(traces[0]) / "chan_1"), std::string(100, 'b'));
  // Written again (the next capture): the files hold the ring as it is now (chan_1's only
  // packet went; its file with it).
  ring.Add("h/s/ust/uid/0/64-bit", "chan_0", Packet('e', 100));
  ASSERT_EQ(ring.WriteTo(dir.string(), &error).size(), 1u) << error;
  EXPECT_EQ(Slurp(fs::path(traces[0]) / "chan_0"),
            std::string(100, 'c') + std::string(100, 'd') + std::string(100, 'e'));
  EXPECT_FALSE(fs::exists(fs::path(traces[0]) / "chan_1"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace waitpath
