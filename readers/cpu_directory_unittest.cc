#include "readers/cpu_directory.h"

#include <gtest/gtest.h>

namespace waitpath {
namespace {

using Cpus = std::vector<uint16_t>;

TEST(CpuDirectoryTest, StreamsTakeTheCpuOfTheirPackets) {
  CpuDirectory d;
  int s0 = 0, s1 = 0, s2 = 0;
  EXPECT_EQ(d.CpuOf(&s0, 9), 9) << "unknown until a packet says";
  EXPECT_TRUE(d.SetStreamCpu(&s0, 3));
  EXPECT_TRUE(d.SetStreamCpu(&s1, 1));
  EXPECT_FALSE(d.SetStreamCpu(&s2, 3)) << "a second stream of CPU 3 is no new CPU";
  EXPECT_FALSE(d.SetStreamCpu(&s0, 3)) << "a stream already known is no new CPU";
  EXPECT_EQ(d.CpuOf(&s0, 9), 3);
  EXPECT_EQ(d.CpuOf(&s1, 9), 1);
  EXPECT_EQ(d.AllCpus(), (Cpus{1, 3}));
}

TEST(CpuDirectoryTest, ForgottenStreamsKeepTheirCpus) {
  CpuDirectory d;
  int s0 = 0, s1 = 0;
  d.SetStreamCpu(&s0, 2);
  d.ForgetStreams();
  EXPECT_EQ(d.CpuOf(&s0, 7), 7) << "a new graph's stream may reuse the address";
  d.SetStreamCpu(&s1, 0);
  EXPECT_EQ(d.AllCpus(), (Cpus{0, 2}));
}

TEST(CpuDirectoryTest, ReplayedCpusAreCountedOnce) {
  CpuDirectory d;
  d.NoteReplayedCpu(5);
  d.NoteReplayedCpu(1);
  d.NoteReplayedCpu(5);
  EXPECT_EQ(d.replayed_count(), 2u);
  EXPECT_EQ(d.ReplayedCpus(), (Cpus{1, 5}));
  int s = 0;
  d.SetStreamCpu(&s, 0);  // the replayer's own UST stream
  EXPECT_EQ(d.AllCpus(), (Cpus{0, 1, 5}));
}

// One stream whose packets name several CPUs (LTTng 2.14+'s per-channel user-space buffers):
// each packet's CPU decides, and every CPU it named is counted and kept.
TEST(CpuDirectoryTest, AStreamOfSeveralCpusFollowsEachPacket) {
  CpuDirectory d;
  int s = 0;
  EXPECT_TRUE(d.SetStreamCpu(&s, 0));
  EXPECT_TRUE(d.SetStreamCpu(&s, 1)) << "a CPU no packet named before";
  EXPECT_EQ(d.CpuOf(&s, 9), 1);
  EXPECT_FALSE(d.SetStreamCpu(&s, 0));
  EXPECT_EQ(d.CpuOf(&s, 9), 0);
  EXPECT_EQ(d.AllCpus(), (Cpus{0, 1}));
}

}  // namespace
}  // namespace waitpath
