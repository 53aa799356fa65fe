// The native CTF decoder against babeltrace2 (the oracle): every trace we have (the shared
// real traces, the recorded fixtures, generator outputs, one with loss) is read by a HostReader
// with each decoder, and the two event sequences must be identical, field for field (loss
// markers, timestamps, interned strings, packet keys), with the same reader counters; then
// `waitpath analyze --json` must print the same bytes with either decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "model/string_table.h"
#include "readers/host_reader.h"  // (brings the semaphore, after concurrentqueue.h)
#include "readers/trace_discovery.h"
#include "tests/e2e/cli_test_util.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;
using testing::GenerateScenario;
using testing::RunWaitpath;

struct HostRead {
  std::vector<Event> events;
  std::vector<PacketKey> keys;  // of packet events, in order
  ReaderCounters counters;
  std::string error;
};

HostRead ReadHost(const HostSpec& spec, TraceDecoderChoice decoder) {
  moodycamel::LightweightSemaphore ready;
  ReaderOptions options;
  options.decoder = decoder;
  options.contain = false;
  HostReader reader(0, spec, options, &ready);
  reader.Start();
  HostRead out;
  for (bool last = false; !last;) {
    Batch* b = nullptr;
    if (!reader.queue().try_dequeue(b)) {
      ready.wait(100000);
      continue;
    }
    for (const Event& e : b->events) {
      out.events.push_back(e);
      if ((e.kind == EventKind::kPacketOut || e.kind == EventKind::kPacketIn) && e.a >= 0)
        out.keys.push_back(b->packets[static_cast<size_t>(e.a)]);
    }
    out.counters = b->counters;
    last = b->last;
    out.error = b->error;
    reader.Recycle(b);
  }
  reader.Join();
  return out;
}

std::string Describe(const Event& e) {
  return "ts=" + std::to_string(e.ts) + " cpu=" + std::to_string(e.cpu) +
         " kind=" + std::string(EventKindName(e.kind)) + " ctx=" + std::to_string(e.ctx) +
         " cur=" + std::to_string(e.cur_tid) + "/" + std::to_string(e.cur_pid) +
         " a=" + std::to_string(e.a) + " b=" + std::to_string(e.b) + " c=" + std::to_string(e.c) +
         " d=" + std::to_string(e.d) + " x=" + std::to_string(e.x);
}

bool SameKey(const PacketKey& a, const PacketKey& b) {
  return a.saddr == b.saddr && a.daddr == b.daddr && a.sport == b.sport && a.dport == b.dport &&
         a.seq == b.seq && a.ack_seq == b.ack_seq && a.flags == b.flags && a.ip_len == b.ip_len &&
         a.has_addresses == b.has_addresses && a.has_tcp == b.has_tcp;
}

// Reads every host under `path` with both decoders and compares.
void CompareDecoders(const std::string& path) {
  std::vector<HostSpec> hosts;
  std::string error;
  DiscoverOptions discover;
  discover.warn = [](const std::string&) {};
  ASSERT_TRUE(DiscoverHosts({path}, &hosts, &error, discover)) << error;
  for (const HostSpec& host : hosts) {
    SCOPED_TRACE(path + " host " + host.hostname);
    const HostRead bt = ReadHost(host, TraceDecoderChoice::kBabeltrace2);
    const HostRead native = ReadHost(host, TraceDecoderChoice::kNative);
    EXPECT_EQ(native.error, bt.error);
    ASSERT_EQ(native.events.size(), bt.events.size());
    size_t differ = 0;
    for (size_t i = 0; i < bt.events.size() && differ < 5; ++i) {
      if (std::memcmp(&bt.events[i], &native.events[i], sizeof(Event)) != 0) {
        ADD_FAILURE() << "event " << i << "\n babeltrace2: " << Describe(bt.events[i])
                      << "\n native:      " << Describe(native.events[i]);
        ++differ;
      }
    }
    ASSERT_EQ(native.keys.size(), bt.keys.size());
    for (size_t i = 0; i < bt.keys.size(); ++i) {
      EXPECT_TRUE(SameKey(native.keys[i], bt.keys[i])) << "packet key " << i;
    }
    const ReaderCounters& a = bt.counters;
    const ReaderCounters& b = native.counters;
    EXPECT_EQ(b.events, a.events);
    EXPECT_EQ(b.unknown, a.unknown);
    EXPECT_EQ(b.regressions, a.regressions);
    EXPECT_EQ(b.discarded, a.discarded);
    EXPECT_EQ(b.first_ns, a.first_ns);
    EXPECT_EQ(b.last_ns, a.last_ns);
    EXPECT_EQ(b.dialect, a.dialect);
    EXPECT_EQ(b.cpus, a.cpus);
    EXPECT_EQ(b.damaged, a.damaged);
    // A replayed host: when its last event was emitted (its lag; captures' clock offset).
    EXPECT_EQ(b.emitted_ns, a.emitted_ns);
  }
}

// `waitpath analyze --json` prints the same bytes with either decoder.
void CompareAnalyze(const std::string& path) {
  const auto bt = RunWaitpath("analyze --json --decoder babeltrace2 " + path);
  const auto native = RunWaitpath("analyze --json --decoder native " + path);
  EXPECT_EQ(native.exit_code, bt.exit_code) << native.err;
  EXPECT_TRUE(native.out == bt.out) << path << ": analyze --json differs";
}

bool HaveDir(const std::string& path) {
  return fs::exists(path);
}

const char* const kShared[] = {"many-threads", "bug446190", "scp_src", "scp_dest", "hello-lost"};

TEST(DecoderDifferential, SharedTraces) {
  int found = 0;
  for (const char* name : kShared) {
    const std::string path = testing::kShared + "/" + name;
    if (!HaveDir(path)) continue;
    ++found;
    CompareDecoders(path);
  }
  if (found == 0)
    GTEST_SKIP() << "needs ../shared/traces (the research traces; see docs/testing.md)";
}

TEST(DecoderDifferential, SharedTracesAnalyzeJson) {
  int found = 0;
  for (const char* name : kShared) {
    const std::string path = testing::kShared + "/" + name;
    if (!HaveDir(path)) continue;
    ++found;
    CompareAnalyze(path);
  }
  if (found == 0)
    GTEST_SKIP() << "needs ../shared/traces (the research traces; see docs/testing.md)";
}

std::vector<std::string> Fixtures() {
  std::vector<std::string> out;
  for (const char* family : {"lttng", "perf", "replay"}) {
    const fs::path dir = fs::path(testing::kFixtures) / family;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.is_directory()) out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DecoderDifferential, Fixtures) {
  for (const std::string& f : Fixtures()) CompareDecoders(f);
}

TEST(DecoderDifferential, FixturesAnalyzeJson) {
  for (const std::string& f : Fixtures()) CompareAnalyze(f);
}

TEST(DecoderDifferential, GeneratedScenarios) {
  struct Case {
    const char* scenario;
    const char* extra;
  };
  // Several scenarios, one of them with loss (discarded events in the packet counters).
  const Case cases[] = {
      {"rpc", ""},
      {"fork-chain", ""},
      {"mutex-convoy", ""},
      {"cpu-contention", ""},
      {"three-tier", ""},
      {"rpc", "--set loss.host=server-host --set loss.share=0.3 --set loss.chunk=8"}};
  for (const Case& c : cases) {
    const fs::path out = GenerateScenario(c.scenario, c.extra, "waitpath-diff-");
    SCOPED_TRACE(std::string(c.scenario) + " " + c.extra);
    CompareDecoders(out.string());
    CompareAnalyze(out.string());
    if (std::string(c.extra).find("loss") != std::string::npos) {
      // The loss really is there: discarded events reported by the packet counters.
      const auto stats = RunWaitpath("stats --json --decoder native " + out.string());
      EXPECT_NE(stats.out.find("\"discarded\":112"), std::string::npos) << stats.out;
    }
    fs::remove_all(out);
  }
}

}  // namespace
}  // namespace waitpath
