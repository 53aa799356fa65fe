// `waitpath stats` end to end: the real binary on real traces.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "tests/e2e/cli_test_util.h"

namespace waitpath::testing {
namespace {

TEST(StatsCliTest, TwoHostsGiveTwoJsonRecordsWithExactCounts) {
  if (!HaveShared("scp_src") || !HaveShared("scp_dest"))
    GTEST_SKIP() << "needs ../shared/traces/scp_src and scp_dest (the research traces; see "
                    "docs/testing.md)";
  CommandResult r = RunWaitpath("stats --json " + kShared + "/scp_src " + kShared + "/scp_dest");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto records = JsonLines(r.out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["host"], "VM1");
  EXPECT_EQ(records[0]["events"], 110771);
  EXPECT_EQ(records[1]["events"], 85729);
  for (const auto& j : records) {
    for (const char* key :
         {"host", "events", "first_ns", "last_ns", "discarded", "regressions", "dialect", "cpus"}) {
      EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_LT(j["first_ns"].get<int64_t>(), j["last_ns"].get<int64_t>());
    EXPECT_TRUE(j["analysable"].get<bool>());
  }
}

TEST(StatsCliTest, LossIsReportedPerCpu) {
  if (!HaveShared("hello-lost"))
    GTEST_SKIP() << "needs ../shared/traces/hello-lost (the research traces; see docs/testing.md)";
  CommandResult r = RunWaitpath("stats --json " + kShared + "/hello-lost");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = JsonLines(r.out).at(0);
  EXPECT_EQ(j["events"], 32300);
  EXPECT_GT(j["discarded"].get<uint64_t>(), 0u);
  uint64_t per_cpu = 0;
  for (const auto& [cpu, n] : j["discarded_by_cpu"].items()) per_cpu += n.get<uint64_t>();
  EXPECT_EQ(per_cpu, j["discarded"].get<uint64_t>());
  EXPECT_FALSE(j["analysable"].get<bool>());
}

// A user-space trace has no scheduler events: the recorded LTTng 2.16 fixture ust-ctf18 (host vm;
// always) and hello-lost (host loki; when ../shared/traces is present).
TEST(StatsCliTest, TextOutputWarnsAboutUnanalysableTraces) {
  std::vector<std::pair<std::string, std::string>> traces = {
      {kFixtures + "/lttng216/ust-ctf18", "vm"}};
  if (HaveShared("hello-lost")) traces.emplace_back(kShared + "/hello-lost", "loki");
  for (const auto& [trace, host] : traces) {
    CommandResult r = RunWaitpath("stats " + trace);
    EXPECT_EQ(r.exit_code, 0) << trace;
    EXPECT_NE(r.out.find("host " + host), std::string::npos) << trace;
    EXPECT_NE(r.out.find("warning: no scheduler switch events"), std::string::npos) << trace;
  }
}

TEST(StatsCliTest, BadInputIsOneLineAndNonZero) {
  CommandResult missing = RunWaitpath("stats /nonexistent/trace");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "waitpath: /nonexistent/trace: no such file or directory\n");
  CommandResult usage = RunWaitpath("stats");
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(std::count(usage.err.begin(), usage.err.end(), '\n'), 1);
}

}  // namespace
}  // namespace waitpath::testing

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;

// The kernel traces recorded on this machine by scripts/record-workloads.sh: perf dialect,
// every event read.
TEST(StatsCliTest, RecordedPerfFixturesReadInThePerfDialect) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(kFixtures) / "perf")) {
    if (!entry.path().string().ends_with(".expect.json")) continue;
    const auto expect = nlohmann::json::parse(std::ifstream(entry.path()));
    const fs::path trace = fs::path(kFixtures) / "perf" / expect["trace"].get<std::string>();
    CommandResult r = RunWaitpath("stats --json " + trace.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto records = JsonLines(r.out);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0]["host"], expect["host"]);
    EXPECT_EQ(records[0]["events"], expect["events"]) << trace;
    EXPECT_TRUE(records[0]["dialect"].get<std::string>().starts_with("perf"))
        << records[0]["dialect"];
    EXPECT_TRUE(records[0]["analysable"].get<bool>());
    ++checked;
  }
  EXPECT_GE(checked, 7);
}

// Generated multi-host traces: one record per host, with the event counts the generator wrote.
TEST(StatsCliTest, GeneratedTracesHaveTheirHostsAndCounts) {
  for (const char* scenario : {"rpc", "three-tier"}) {
    const fs::path out = fs::temp_directory_path() / ("waitpath-stats-" + std::string(scenario));
    fs::remove_all(out);
    const std::string cmd = std::string(WAITPATH_GEN) + " --scenario " + WAITPATH_SCENARIOS + "/" +
                            scenario + ".toml --out " + out.string() + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    const auto truth = nlohmann::json::parse(std::ifstream(out / "truth.json"));
    CommandResult r = RunWaitpath("stats --json " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, int64_t> got;
    for (const auto& j : JsonLines(r.out)) {
      got[j["host"]] = j["events"];
      EXPECT_TRUE(j["dialect"].get<std::string>().starts_with("lttng>=2.7")) << j["dialect"];
      EXPECT_NE(j["dialect"].get<std::string>().find("+network_header"), std::string::npos);
      EXPECT_EQ(j["regressions"], 0);
    }
    std::map<std::string, int64_t> want;
    for (const auto& h : truth["hosts"]) want[h["host"]] = h["events"];
    EXPECT_EQ(got, want);
    fs::remove_all(out);
  }
}

// Times as babeltrace2 shows them (--clock-date, --clock-gmt, --clock-seconds); perf's clock
// counts from boot and says so.
TEST(StatsCliTest, TimesShowAsBabeltrace2ShowsThem) {
  const std::string perf = kFixtures + "/perf/rpc";
  CommandResult r = RunWaitpath("stats " + perf);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("time                 boot+0:15:15.580340089 .. boot+"), std::string::npos)
      << r.out;
  if (!HaveShared("scp_src")) return;
  r = RunWaitpath("stats --clock-gmt --clock-date " + kShared + "/scp_src");
  EXPECT_NE(r.out.find("2013-02-18 19:01:16.525090092 .. 2013-02-18 19:01:39.530082855"),
            std::string::npos)
      << r.out;
  r = RunWaitpath("stats --clock-seconds " + kShared + "/scp_src");
  EXPECT_NE(r.out.find("1361214076.525090092 .. 1361214099.530082855"), std::string::npos) << r.out;
}

// One stream whose packets name different CPUs in their cpu_id is valid CTF (babeltrace2 and
// Trace Compass read it): made here from LTTng 2.16's two per-CPU streams of
// lttng216/ust-ctf18, their packets in one file ordered by timestamp_begin and numbered again.
// Every event is read, each packet's CPU deciding, none skipped as damage (before: the packets
// of the second CPU were skipped, "cpu_id 1 in a stream of CPU 0", and a loss was invented).
TEST(StatsCliTest, AStreamWhosePacketsNameSeveralCpusIsReadWhole) {
  namespace fs = std::filesystem;
  const fs::path from = kFixtures + "/lttng216/ust-ctf18";
  const fs::path dir =
      fs::temp_directory_path() / ("waitpath-multicpu-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(from / "metadata", dir / "metadata");
  // LTTng's UST packet: header magic, uuid, stream_id (u32), stream_instance_id (u64); then
  // the context's timestamp_begin @32, packet_size @56 (bits), packet_seq_num @64, cpu_id @80.
  struct Packet {
    uint64_t begin;
    std::string bytes;
  };
  auto u64 = [](const std::string& b, size_t at) {
    uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    return v;
  };
  std::vector<Packet> packets;
  std::map<uint32_t, int> by_cpu;
  std::string first_instance;
  for (const char* stream : {"chan_0", "chan_1"}) {
    std::ifstream in(from / stream, std::ios::binary);
    const std::string data{std::istreambuf_iterator<char>(in), {}};
    for (size_t off = 0; off < data.size();) {
      const size_t size = u64(data, off + 56) / 8;
      ASSERT_GT(size, 0u);
      packets.push_back({u64(data, off + 32), data.substr(off, size)});
      uint32_t cpu;
      std::memcpy(&cpu, data.data() + off + 80, 4);
      ++by_cpu[cpu];
      off += size;
    }
  }
  ASSERT_EQ(by_cpu.size(), 2u);
  std::stable_sort(packets.begin(), packets.end(),
                   [](const Packet& a, const Packet& b) { return a.begin < b.begin; });
  std::ofstream out(dir / "chan_0", std::ios::binary);
  uint64_t seq = 0;
  const std::string instance = packets.front().bytes.substr(24, 8);
  for (Packet& p : packets) {
    p.bytes.replace(24, 8, instance);  // one stream
    std::memcpy(p.bytes.data() + 64, &seq, 8);
    ++seq;
    out << p.bytes;
  }
  out.close();
  const CommandResult r = RunWaitpath("stats --json " + dir.string());
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = JsonLines(r.out).at(0);
  EXPECT_EQ(j["events"], 2550) << r.err;
  EXPECT_EQ(j["damaged"], 0) << r.err;
  EXPECT_EQ(j["cpus"], 2) << r.err;
  EXPECT_EQ(r.err.find("skipped"), std::string::npos) << r.err;
}

// What LTTng 2.16 records by default (CTF 2, JSON metadata) reads like its CTF 1.8 twin, made
// from the same run of the same program (tests/fixtures/lttng216/README.md); `stats` names the
// format and the tracer. Before: "metadata: line 683: ends after '}' (truncated?)", exit 1.
TEST(StatsCliTest, Ctf2AndCtf18OfOneRunReadAlike) {
  for (const char* dir : {"ust-ctf2", "ust-ctf18", "ust-perchannel-ctf2", "ust-perchannel-ctf18"}) {
    SCOPED_TRACE(dir);
    const CommandResult r = RunWaitpath("stats --json " + kFixtures + "/lttng216/" + dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = JsonLines(r.out).at(0);
    EXPECT_EQ(j["host"], "vm");
    EXPECT_EQ(j["events"], 2550);
    EXPECT_EQ(j["damaged"], 0);
    EXPECT_EQ(j["discarded"], 0);
    const bool ctf2 = std::string(dir).find("ctf2") != std::string::npos;
    EXPECT_EQ(j["formats"],
              nlohmann::json::array({ctf2 ? "CTF 2, lttng-ust 2.16" : "CTF 1.8, lttng-ust 2.16"}));
  }
}

// babeltrace2 2.0 (Debian 12's) cannot read CTF 2: asked to, waitpath says so and what to do.
TEST(StatsCliTest, Babeltrace2OlderThan21OnCtf2SaysWhy) {
  const CommandResult r =
      RunWaitpath("stats --decoder babeltrace2 " + kFixtures + "/lttng216/ust-ctf2");
  if (r.err.find("babeltrace2 2.0 cannot read") == std::string::npos && r.exit_code == 0)
    GTEST_SKIP() << "this babeltrace2 reads CTF 2";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is CTF 2 (LTTng 2.15 and later record it by default), which babeltrace2 "
                       "2.0 cannot read (2.1 or later can): read it with --decoder native"),
            std::string::npos)
      << r.err;
}

// LTTng 2.16's kernel tracer in CTF 2 (recorded in the VM lab's sid guest: README beside the
// traces): every event babeltrace2 2.1 reads (its counts), none skipped as damage. Before: the
// network events' packets were cut short (1,517 of 7,111; 1,661 of 5,049), their
// `transport_header_type` declared in each option of a variant.
TEST(StatsCliTest, Lttng216KernelCtf2ReadsEveryEvent) {
  for (const auto& [dir, events] : std::vector<std::pair<std::string, int>>{
           {"rpc-ctf2", 7111}, {"rpc-ctf18", 7312}, {"kmod-ctf2", 5049}}) {
    SCOPED_TRACE(dir);
    const CommandResult r = RunWaitpath("stats --json " + kFixtures + "/lttng216/kernel/" + dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = JsonLines(r.out).at(0);
    EXPECT_EQ(j["events"], events);
    EXPECT_EQ(j["damaged"], 0);
    EXPECT_TRUE(j["analysable"].get<bool>());
    EXPECT_EQ(r.err, "");
  }
  // The client of the recorded RPC waits mostly on the server, in either format.
  for (const char* dir : {"rpc-ctf2", "rpc-ctf18"}) {
    const CommandResult r = RunWaitpath("analyze --json --watch 'comm=wl-rpc-client' " + kFixtures +
                                        "/lttng216/kernel/" + dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    bool seen = false;
    for (const auto& j : JsonLines(r.out)) {
      if (j["type"] != "task") continue;
      seen = true;
      int64_t server = 0, all = 0;
      for (const auto& t : j["by_task"]) {
        all += t["ns"].get<int64_t>();
        if (t["comm"] == "wl-rpc-server") server += t["ns"].get<int64_t>();
      }
      EXPECT_GT(server * 2, all) << dir;
    }
    EXPECT_TRUE(seen) << dir;
  }
}

}  // namespace
}  // namespace waitpath::testing
