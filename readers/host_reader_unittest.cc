#include "readers/host_reader.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include "model/event_views.h"
#include "model/string_table.h"
#include "readers/bt_util.h"
#include "readers/event_decoder.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

const std::string kShared = WAITPATH_SHARED_TRACES;

struct ReadResult {
  std::vector<Event> events;
  std::vector<PacketKey> packets;
  ReaderCounters counters;
  uint64_t batches = 0;
  std::string error;
};

ReadResult ReadAll(const std::vector<std::string>& dirs, ReaderOptions options = {}) {
  ConfigureBabeltraceLogging(false);
  HostSpec spec{"test", dirs, {}, {}, {}, {}, {}};
  moodycamel::LightweightSemaphore ready;
  HostReader reader(0, spec, options, &ready);
  reader.Start();
  ReadResult r;
  for (;;) {
    Batch* b = nullptr;
    if (!reader.queue().try_dequeue(b)) {
      ready.wait(10000);
      continue;
    }
    std::unique_ptr<Batch> owned(b);
    ++r.batches;
    for (Event e : b->events) {
      if ((e.kind == EventKind::kPacketIn || e.kind == EventKind::kPacketOut) && e.a >= 0) {
        r.packets.push_back(b->packets[static_cast<size_t>(e.a)]);
        e.a = static_cast<int32_t>(r.packets.size() - 1);
      }
      r.events.push_back(e);
    }
    r.counters = b->counters;
    if (b->last) {
      r.error = b->error;
      break;
    }
  }
  return r;
}

// babeltrace2's own count of event and discarded-events messages, without the muxer (which
// rejects the regressing LTTng 2.1 / 2.3 traces): each stream file is counted alone, in a
// scratch trace directory holding only the metadata and that stream.
struct BtCount {
  uint64_t events = 0, discarded_messages = 0;
};
BtCount BabeltraceCount(const std::string& dir) {
  BtCount count;
  const fs::path scratch =
      fs::temp_directory_path() / ("waitpath-btcount-" + std::to_string(::getpid()));
  std::regex re(R"(^\s*(\d+) (Event messages|Discarded event messages))");
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name == "metadata" || name.starts_with(".")) continue;
    fs::remove_all(scratch);
    fs::create_directories(scratch);
    fs::create_symlink(fs::absolute(fs::path(dir) / "metadata"), scratch / "metadata");
    fs::create_symlink(fs::absolute(entry.path()), scratch / name);
    const std::string cmd =
        "babeltrace2 run --component=src:source.ctf.fs --params='inputs=[\"" + scratch.string() +
        "\"]' --component=c:sink.utils.counter --params='step=+0' --connect=src:c 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
      std::cmatch m;
      if (std::regex_search(line, m, re)) {
        (m[2] == "Event messages" ? count.events : count.discarded_messages) += std::stoull(m[1]);
      }
    }
    if (p) pclose(p);
  }
  fs::remove_all(scratch);
  return count;
}

bool HaveShared(const std::string& name) {
  return fs::exists(kShared + "/" + name + "/metadata");
}

#define REQUIRE_SHARED(name) \
  if (!HaveShared(name))     \
  GTEST_SKIP() << "needs ../shared/traces/" name " (the research traces; see docs/testing.md)"

void ExpectMonotonic(const std::vector<Event>& events) {
  for (size_t i = 1; i < events.size(); ++i) {
    ASSERT_LE(events[i - 1].ts, events[i].ts) << "at event " << i;
  }
}

TEST(HostReaderTest, ReadsAllOfScpSrcDespiteRegressions) {
  REQUIRE_SHARED("scp_src");
  ReadResult r = ReadAll({kShared + "/scp_src"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.counters.events, 110771u);
  EXPECT_EQ(r.counters.events, BabeltraceCount(kShared + "/scp_src").events);
  EXPECT_EQ(r.counters.events - r.counters.unknown, r.events.size());
  ExpectMonotonic(r.events);
  EXPECT_TRUE(r.counters.dialect & kDialectSeedAddons);
  EXPECT_FALSE(r.counters.dialect & kDialectHasWaking);
}

TEST(HostReaderTest, ReadsAllOfScpDest) {
  REQUIRE_SHARED("scp_dest");
  ReadResult r = ReadAll({kShared + "/scp_dest"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.counters.events, 85729u);
  EXPECT_EQ(r.counters.events, BabeltraceCount(kShared + "/scp_dest").events);
  ExpectMonotonic(r.events);
}

TEST(HostReaderTest, SeedEraPacketsCarryTcpKeys) {
  REQUIRE_SHARED("scp_src");
  ReadResult r = ReadAll({kShared + "/scp_src"});
  size_t with_key = 0, packets = 0;
  for (const Event& e : r.events) {
    if (e.kind != EventKind::kPacketIn && e.kind != EventKind::kPacketOut) continue;
    ++packets;
    if (e.a >= 0 && r.packets[static_cast<size_t>(e.a)].has_tcp) ++with_key;
  }
  EXPECT_GT(packets, 0u);
  EXPECT_EQ(with_key, packets);
}

// kmod/'s events (the vmlab-overlay fixture, tests/fixtures/lttng/README.md): the socket-level
// TCP events key every packet, with addresses; with them in the trace, the host's own
// net_dev_queue / net_if_receive_skb key none (one source per host: no packet twice); the
// cgroup events name the client's unit.
TEST(HostReaderTest, KmodTcpEventsAreTheOnlyKeyedPacketsAndCgroupsAreRead) {
  const std::string dir = std::string(WAITPATH_FIXTURES) + "/lttng/overlay/vm-client";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " not present";
  ReadResult r = ReadAll({dir});
  ASSERT_EQ(r.error, "");
  EXPECT_TRUE(r.counters.dialect & kDialectKmodTcp);
  EXPECT_TRUE(r.counters.dialect & kDialectKmodCgroup);
  size_t keyed = 0, unkeyed = 0, cgroups = 0, in_unit = 0;
  for (const Event& e : r.events) {
    if (e.kind == EventKind::kPacketIn || e.kind == EventKind::kPacketOut) {
      if (AsPacket(e).key() < 0) {
        ++unkeyed;
        continue;
      }
      ++keyed;
      const PacketKey& k = r.packets[static_cast<size_t>(AsPacket(e).key())];
      EXPECT_TRUE(k.has_tcp && k.has_addresses && k.ip_len > 0);
    } else if (e.kind == EventKind::kCgroup) {
      ++cgroups;
      if (AsCgroup(e).hierarchy() == 0 && AsCgroup(e).path() >= 0 &&
          StringTable::Global().Get(static_cast<uint32_t>(AsCgroup(e).path())) ==
              "/system.slice/wl-client.service") {
        ++in_unit;
      }
    }
  }
  // babeltrace2's count of the kmod's TCP events: each, and only they, carries a key.
  FILE* p = popen(("babeltrace2 " + dir + " 2>/dev/null | grep -c ' waitpath_tcp_'").c_str(), "r");
  size_t kmod_packets = 0;
  ASSERT_TRUE(p != nullptr);
  ASSERT_EQ(fscanf(p, "%zu", &kmod_packets), 1);
  pclose(p);
  EXPECT_GT(kmod_packets, 40u);
  EXPECT_EQ(keyed, kmod_packets);
  EXPECT_GT(unkeyed, 0u);   // net_dev_queue / net_if_receive_skb, no key
  EXPECT_GT(cgroups, 10u);  // the state dump's, and the client's move
  EXPECT_GE(in_unit, 1u);
}

TEST(HostReaderTest, ManyThreadsMatchesBabeltraceAndMergesEightCpus) {
  REQUIRE_SHARED("many-threads");
  ReadResult r = ReadAll({kShared + "/many-threads"});
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.counters.events, BabeltraceCount(kShared + "/many-threads").events);
  EXPECT_EQ(r.counters.cpus, 8u);
  ExpectMonotonic(r.events);
  EXPECT_TRUE(r.counters.dialect & kDialectLttngModern);
  EXPECT_TRUE(r.counters.dialect & kDialectHasWaking);
  // Field decoding: every switch names real tids and interned comms.
  for (const Event& e : r.events) {
    if (e.kind != EventKind::kSchedSwitch) continue;
    ASSERT_GE(e.a, 0);
    ASSERT_GE(e.b, 0);
    ASSERT_GE(e.c, 0);
    ASSERT_GE(e.d, 0);
    ASSERT_LT(e.cpu, 8);
  }
}

TEST(HostReaderTest, LegacyLttngNamesAreDecoded) {
  REQUIRE_SHARED("bug446190");
  ReadResult r = ReadAll({kShared + "/bug446190"});
  EXPECT_EQ(r.counters.events, BabeltraceCount(kShared + "/bug446190").events);
  EXPECT_TRUE(r.counters.dialect & kDialectLttngLegacy);
  size_t softirq = 0, hrtimer = 0, packet_in = 0;
  for (const Event& e : r.events) {
    softirq += e.kind == EventKind::kSoftirqEntry;
    hrtimer += e.kind == EventKind::kHrtimerEntry;
    packet_in += e.kind == EventKind::kPacketIn && e.x != 0;  // skbaddr only in this layout
  }
  EXPECT_GT(softirq, 0u);
  EXPECT_GT(hrtimer, 0u);
  EXPECT_GT(packet_in, 0u);
}

TEST(HostReaderTest, DiscardedEventsBecomeLossMarkers) {
  REQUIRE_SHARED("hello-lost");
  ReadResult r = ReadAll({kShared + "/hello-lost"});
  const BtCount bt = BabeltraceCount(kShared + "/hello-lost");
  EXPECT_EQ(r.counters.events, bt.events);
  size_t markers = 0;
  for (const Event& e : r.events) markers += e.kind == EventKind::kLost;
  EXPECT_EQ(markers, bt.discarded_messages);
  EXPECT_GT(r.counters.discarded, 0u);
  EXPECT_FALSE(r.counters.dialect & kDialectHasSwitch);
  ExpectMonotonic(r.events);
}

TEST(HostReaderTest, SmallBatchesAndBackpressureKeepEverything) {
  std::vector<std::string> traces = {std::string(WAITPATH_FIXTURES) + "/lttng/rpc"};
  if (HaveShared("bug446190")) traces.push_back(kShared + "/bug446190");
  for (const std::string& trace : traces) {
    SCOPED_TRACE(trace);
    ReaderOptions small;
    small.batch_events = 7;
    small.max_queued_batches = 2;
    ReadResult r = ReadAll({trace}, small);
    ReadResult big = ReadAll({trace});
    EXPECT_GT(r.batches, 100u);
    ASSERT_EQ(r.events.size(), big.events.size());
    for (size_t i = 0; i < r.events.size(); ++i) {
      ASSERT_EQ(r.events[i].ts, big.events[i].ts);
      ASSERT_EQ(r.events[i].kind, big.events[i].kind);
    }
  }
}

// Damaged copies: never a crash; either a clear error or a partial read that says so. Of two
// multi-CPU traces: the recorded LTTng 2.13 fixture lttng/rpc (2 CPUs, 6,665 events;
// always) and bug446190 (LTTng 2.5, 4 CPUs, 31,556 events; when ../shared/traces is present).
class DamagedTraceTest : public ::testing::Test {
 protected:
  struct Trace {
    std::string dir;
    std::string cut, garbled;  // the stream cut in half, the stream garbled
  };
  static std::vector<Trace> Traces() {
    std::vector<Trace> t = {
        {std::string(WAITPATH_FIXTURES) + "/lttng/rpc", "waitpath_1_0", "waitpath_0_0"}};
    if (HaveShared("bug446190")) t.push_back({kShared + "/bug446190", "channel0_1", "channel0_2"});
    return t;
  }
  fs::path Copy(const std::string& from) {
    const fs::path dir = fs::temp_directory_path() /
                         ("waitpath-damaged-" + std::to_string(::getpid()) + "-" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::copy(from, dir, fs::copy_options::recursive);
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    }
    fs::remove_all(dir / "index");  // indexes would disagree with the damage
    made_.push_back(dir);
    return dir;
  }
  void TearDown() override {
    for (const fs::path& d : made_) fs::remove_all(d);
  }
  std::vector<fs::path> made_;
};

TEST_F(DamagedTraceTest, TruncatedStreamGivesPartialReadWithError) {
  for (const Trace& t : Traces()) {
    SCOPED_TRACE(t.dir);
    const uint64_t clean = ReadAll({t.dir}).counters.events;  // bug446190: 31556
    const fs::path dir = Copy(t.dir);
    const fs::path stream = dir / t.cut;
    fs::resize_file(stream, fs::file_size(stream) / 2 + 1001);
    ReadResult r = ReadAll({dir.string()});
    // babeltrace2 indexes every packet when it opens a trace, so a cut stream is refused up
    // front (nothing read) rather than failing half way; either way the error says so.
    EXPECT_LT(r.counters.events, clean);
    EXPECT_NE(r.error, "");
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << "one line: " << r.error;
  }
}

TEST_F(DamagedTraceTest, GarbledStreamBytesNeverCrash) {
  for (const Trace& t : Traces()) {
    SCOPED_TRACE(t.dir);
    const fs::path dir = Copy(t.dir);
    const fs::path stream = dir / t.garbled;
    std::fstream f(stream, std::ios::in | std::ios::out | std::ios::binary);
    for (std::streamoff off = 4096; off < static_cast<std::streamoff>(fs::file_size(stream));
         off += 8192) {
      f.seekp(off);
      const char junk[64] = {'\x7f', '\x13', '\x55', '\x00', '\xff'};
      f.write(junk, sizeof junk);
    }
    f.close();
    ReadResult r = ReadAll({dir.string()});
    // Either babeltrace2 notices (error, partial) or the damage decodes as odd values; no crash.
    if (!r.error.empty()) {
      EXPECT_EQ(r.error.find('\n'), std::string::npos);
    }
    ExpectMonotonic(r.events);
  }
}

TEST_F(DamagedTraceTest, CorruptMetadataIsAClearError) {
  for (const Trace& t : Traces()) {
    SCOPED_TRACE(t.dir);
    const fs::path dir = Copy(t.dir);
    std::ofstream(dir / "metadata", std::ios::trunc) << "/* CTF 1.8 */\ntrace { garbage";
    ReadResult r = ReadAll({dir.string()});
    EXPECT_EQ(r.counters.events, 0u);
    EXPECT_NE(r.error.find("cannot open trace"), std::string::npos) << r.error;
  }
}

// A relayd that accepts every connection and closes it at once (as one failing every attach
// with a protocol error): the reader backs off (250 ms doubling to 5 s), and discovery's
// "the relayd answers again" (RetryNow, once a second or more) skips the wait once per outage.
// Before, every RetryNow was a new attempt: about 30 in 3 s here, for ever.
TEST(HostReaderTest, AFailingRelaydIsRetriedWithBackoffNotAtEveryDiscovery) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  listen(listener, 16);
  std::atomic<int> connections{0};
  std::thread relayd([&] {
    for (;;) {
      const int c = accept(listener, nullptr, nullptr);
      if (c < 0) return;
      ++connections;
      close(c);
    }
  });
  HostSpec spec;
  spec.hostname = "h";
  spec.live_url = "net://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/host/h/s";
  ReaderOptions options;
  options.decoder = TraceDecoderChoice::kAuto;
  moodycamel::LightweightSemaphore ready;
  HostReader reader(0, spec, options, &ready);
  reader.Start();
  for (int i = 0; i < 30; ++i) {  // 3 s of discovery saying the relayd answers
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (reader.relayd().lost()) reader.RetryNow();
  }
  reader.RequestStop();
  reader.Join();
  shutdown(listener, SHUT_RDWR);
  close(listener);
  relayd.join();
  // The first attempt, one at once after the loss, then 250 ms, 500 ms, 1 s, 2 s apart.
  EXPECT_GE(connections.load(), 2);
  EXPECT_LE(connections.load(), 7);
  EXPECT_EQ(reader.relayd().losses, 1u);
}

}  // namespace
}  // namespace waitpath
