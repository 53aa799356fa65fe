// The native reader live and recorded: one session's packets, whatever order the relayd
// announces its streams in, merge into the events a read of the recorded trace gives.
#include "readers/native_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ctf/trace_check.h"

namespace waitpath {
namespace {

struct Seen {
  int64_t ts;
  uint16_t cpu;
  EventKind kind;
  int32_t cur_tid;
  bool operator==(const Seen&) const = default;
};

// A host's input that keeps every event it is handed.
struct Collected {
  BatchPool pool{64};
  std::vector<Seen> events;
  HostInput input{0, 512, pool, [this](Batch* b) {
                    for (const Event& e : b->events)
                      events.push_back({e.ts, e.cpu, e.kind, e.cur_tid});
                    pool.Give(b);
                  }};
};

std::vector<Seen> ReadRecorded(const std::string& dir) {
  Collected c;
  c.input.recorded = true;
  NativeReader reader(c.input);
  std::string why;
  EXPECT_TRUE(reader.Open({dir}, &why)) << why;
  std::atomic<bool> stop{false};
  EXPECT_TRUE(reader.Run(stop));
  c.input.Finish("");
  return c.events;
}

// The trace's streams as a relayd would serve them: each stream's packets, the streams added
// in `order` (indexes into the trace's stream files).
std::vector<Seen> ReadLive(const std::string& dir, const std::vector<size_t>& order) {
  const CheckedTrace checked = CheckTrace(dir, {}, /*make_view=*/false);
  EXPECT_TRUE(checked.error.empty()) << checked.error;
  EXPECT_TRUE(checked.packets_checked);
  auto trace = std::make_shared<ctf::TraceDecoder>();
  std::string why;
  EXPECT_TRUE(trace->OpenText(dir, checked.metadata, &why)) << why;
  std::vector<LivePackets> streams(checked.streams.size());
  for (size_t i = 0; i < checked.streams.size(); ++i) {
    const StreamPackets& s = checked.streams[i];
    std::ifstream in(s.path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    streams[i].trace = trace;
    streams[i].ended = true;
    for (size_t k = 0; k < s.offsets.size(); ++k) {
      const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + s.offsets[k];
      streams[i].packets.emplace_back(p, p + s.sizes[k]);
    }
  }
  Collected c;
  NativeReader reader(c.input);
  for (size_t i : order) {
    const std::string name = checked.streams[i].path;
    reader.AddLiveStream(&streams[i], name.substr(name.rfind('/') + 1), checked.streams[i].cpu);
  }
  std::atomic<bool> stop{false};
  EXPECT_EQ(reader.Merge(stop), NativeReader::Merged::kEnded);
  c.input.Finish("");
  return c.events;
}

// lttng-relayd announces a session's streams in its hash table's order, not the CPUs'. The lab's
// guests have a coarse clock: the rpc fixture has 21 events that share their time with the
// previous event of another CPU. Ties merged by port (the order of announcement) put those in
// another order than `analyze` of the same session did.
TEST(NativeReaderTest, LiveStreamsInAnyOrderMergeAsTheRecordedTraceDoes) {
  const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng/rpc";
  const std::vector<Seen> recorded = ReadRecorded(dir);
  ASSERT_GT(recorded.size(), 6000u);
  size_t ties = 0;
  for (size_t i = 1; i < recorded.size(); ++i)
    ties += recorded[i].ts == recorded[i - 1].ts && recorded[i].cpu != recorded[i - 1].cpu;
  ASSERT_GT(ties, 0u);  // what the test is about
  const size_t streams = CheckTrace(dir, {}, false).streams.size();
  ASSERT_EQ(streams, 2u);
  EXPECT_TRUE(ReadLive(dir, {0, 1}) == recorded);
  EXPECT_TRUE(ReadLive(dir, {1, 0}) == recorded);
}

}  // namespace
}  // namespace waitpath
