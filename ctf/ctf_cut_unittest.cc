// Cutting a relayd's stored kernel trace (the diskwrite fixture) to a window: fewer packets,
// still a trace babeltrace2 reads, and every event of the window is in it.
#include "ctf/ctf_cut.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ctf/trace_check.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

// The events' times (ns) babeltrace2 prints for `dir`; empty when it fails.
std::vector<int64_t> EventTimes(const std::string& dir, int* status) {
  const std::string cmd = "babeltrace2 --clock-seconds " + dir + " 2>/dev/null";
  std::vector<int64_t> out;
  FILE* p = popen(cmd.c_str(), "r");
  char line[4096];
  while (p && fgets(line, sizeof line, p)) {
    long long s = 0, ns = 0;
    if (sscanf(line, "[%lld.%lld]", &s, &ns) == 2) out.push_back(s * 1'000'000'000 + ns);
  }
  *status = p ? pclose(p) : -1;
  return out;
}

TEST(CtfCutTest, KeepsThePacketsOverlappingTheWindowAndBabeltraceReadsThem) {
  if (std::system("babeltrace2 --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no babeltrace2";
  const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng/diskwrite";
  const CheckedTrace trace = CheckTrace(dir);
  ASSERT_TRUE(trace.error.empty()) << trace.error;
  size_t packets = 0;
  for (const StreamPackets& s : trace.streams) packets += s.offsets.size();
  ASSERT_GT(packets, 4u);
  // A window between the events a third and half way through.
  int status = 0;
  std::vector<int64_t> all = EventTimes(dir, &status);
  ASSERT_EQ(status, 0);
  ASSERT_GT(all.size(), 100u);
  std::sort(all.begin(), all.end());
  const int64_t from = all[all.size() / 3], to = all[all.size() / 2];
  const std::string out = fs::temp_directory_path() / ("waitpath-cut-" + std::to_string(getpid()));
  fs::remove_all(out);
  const CtfCut cut = CutTrace(dir, from, to, out);
  ASSERT_TRUE(cut.error.empty()) << cut.error;
  EXPECT_GT(cut.packets, 0u);
  EXPECT_LT(cut.packets, packets);
  EXPECT_TRUE(fs::exists(fs::path(out) / "metadata"));

  const std::vector<int64_t> part = EventTimes(out, &status);
  ASSERT_EQ(status, 0) << "babeltrace2 cannot read the cut trace " << out;
  EXPECT_LT(part.size(), all.size());
  auto in_window = [&](const std::vector<int64_t>& times) {
    return std::count_if(times.begin(), times.end(),
                         [&](int64_t t) { return t >= from && t <= to; });
  };
  EXPECT_GT(in_window(all), 0);
  EXPECT_EQ(in_window(part), in_window(all));
  fs::remove_all(out);
}

// A relayd still writing a stream's last packet: that packet is left out, the others cut from
// the trace's own files (no cleaned copy of the stream is made).
TEST(CtfCutTest, APacketBeingWrittenIsLeftOut) {
  if (std::system("babeltrace2 --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no babeltrace2";
  const fs::path tmp = fs::temp_directory_path() / ("waitpath-cut-w-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  fs::copy(std::string(WAITPATH_FIXTURES) + "/lttng/diskwrite", tmp / "in",
           fs::copy_options::recursive);
  const fs::path stream = tmp / "in" / "waitpath_0_0";
  fs::resize_file(stream, fs::file_size(stream) - 1000);
  const CtfCut cut = CutTrace((tmp / "in").string(), 0, INT64_MAX, (tmp / "out").string());
  ASSERT_TRUE(cut.error.empty()) << cut.error;
  EXPECT_GT(cut.packets, 0u);
  EXPECT_LT(fs::file_size(tmp / "out" / "waitpath_0_0"), fs::file_size(stream));
  int status = 0;
  EXPECT_FALSE(EventTimes((tmp / "out").string(), &status).empty());
  EXPECT_EQ(status, 0);
  fs::remove_all(tmp);
}

// A relayd rotating its files overwrote a stream's oldest packets: a window that starts before
// what is left is refused (its start is gone), one within what is left is cut.
TEST(CtfCutTest, AWindowWhoseStartWasRotatedAwayIsRefused) {
  const fs::path tmp = fs::temp_directory_path() / ("waitpath-cut-r-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const std::string fixture = std::string(WAITPATH_FIXTURES) + "/lttng/diskwrite";
  fs::copy_file(fixture + "/metadata", tmp / "metadata");
  fs::copy_file(fixture + "/waitpath_1_0", tmp / "waitpath_1_0");
  const CheckedTrace whole = CheckTrace(fixture);
  ASSERT_TRUE(whole.error.empty()) << whole.error;
  const auto s = std::find_if(whole.streams.begin(), whole.streams.end(),
                              [](const StreamPackets& p) { return p.path.ends_with("_0_0"); });
  ASSERT_NE(s, whole.streams.end());
  ASSERT_GT(s->offsets.size(), 2u);
  ASSERT_EQ(s->first_seq.value_or(1), 0u) << "the fixture's packets carry packet_seq_num";
  std::ifstream in(s->path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // One file without the stream's first packet: no rotation, so not refused (LTTng numbers
  // the empty packets it does not send in live mode too: a gap is not a loss by itself).
  std::ofstream(tmp / "waitpath_0_0", std::ios::binary) << bytes.substr(s->offsets[1]);
  const CtfCut one = CutTrace(tmp.string(), s->begin_ns[0], s->end_ns[1], (tmp / "a").string());
  EXPECT_TRUE(one.error.empty()) << one.error;
  // Rotated: the stream over two files (as the relayd names them), its first packet gone.
  fs::remove(tmp / "waitpath_0_0");
  std::ofstream(tmp / "waitpath_0_1", std::ios::binary)
      << bytes.substr(s->offsets[1], s->offsets[2] - s->offsets[1]);
  std::ofstream(tmp / "waitpath_0_2", std::ios::binary) << bytes.substr(s->offsets[2]);
  const CtfCut gone = CutTrace(tmp.string(), s->begin_ns[0], s->end_ns[1], (tmp / "b").string());
  EXPECT_TRUE(gone.overwritten) << gone.error;
  EXPECT_NE(gone.error.find("no longer stored"), std::string::npos) << gone.error;
  EXPECT_FALSE(fs::exists(tmp / "b"));
  const CtfCut kept = CutTrace(tmp.string(), s->begin_ns[1], s->end_ns[2], (tmp / "c").string());
  EXPECT_TRUE(kept.error.empty()) << kept.error;
  EXPECT_FALSE(kept.overwritten);
  fs::remove_all(tmp);
}

TEST(CtfCutTest, AWindowWithoutPacketsIsAnError) {
  const std::string out = fs::temp_directory_path() / ("waitpath-cut0-" + std::to_string(getpid()));
  const CtfCut cut = CutTrace(std::string(WAITPATH_FIXTURES) + "/lttng/diskwrite", 0, 1, out);
  EXPECT_NE(cut.error.find("no packet overlaps"), std::string::npos) << cut.error;
  fs::remove_all(out);
}

}  // namespace
}  // namespace waitpath
