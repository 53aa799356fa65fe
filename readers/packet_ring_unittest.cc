#include "readers/packet_ring.h"

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

// A relayd chooses the channel names: an absolute one or one that climbs must not write outside
// the capture's directory (waitpath runs as root). Each becomes one file inside it.
TEST(PacketRingTest, ChannelNamesFromTheRelaydNeverLeaveTheDirectory) {
  const fs::path base =
      fs::temp_directory_path() / ("waitpath-ring-hostile-" + std::to_string(getpid()));
  fs::remove_all(base);
  const fs::path dir = base / "capture";
  const std::string absolute = (base / "abs").string();
  const std::vector<std::string> names = {absolute,
                                          "../../escape",
                                          "..",
                                          ".",
                                          "",
                                          std::string("nul\0x", 5),
                                          std::string(5000, 'n'),
                                          "\xff\xfe\x1b[2J"};
  PacketRing ring(1 << 20);
  ring.SetMetadata("h/s/ust", "metadata");
  for (size_t i = 0; i < names.size(); ++i)
    ring.Add("h/s/ust", names[i], Packet(static_cast<char>('a' + i), 10));
  std::string error;
  const std::vector<std::string> traces = ring.WriteTo(dir.string(), &error);
  ASSERT_EQ(traces.size(), 1u) << error;
  // Every byte written is inside the trace's directory, one file per distinct name.
  size_t files = 0;
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(base)) {
    if (!e.is_regular_file()) continue;
    EXPECT_EQ(e.path().parent_path(), fs::path(traces[0])) << e.path();
    ++files;
    bytes += e.file_size();
  }
  EXPECT_EQ(files, names.size() + 1);  // and the metadata
  EXPECT_EQ(bytes, names.size() * 10 + 8);
  EXPECT_FALSE(fs::exists(base / "abs"));
  EXPECT_FALSE(fs::exists(base / "escape"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace waitpath
