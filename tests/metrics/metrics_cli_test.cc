// `waitpath analyze` metrics end to end: the exported counters equal analyze's own totals,
// the config file and its overrides, bounded labels, and scraping while the engine runs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <tuple>

#include "tests/e2e/cli_test_util.h"
#include "tests/metrics/metrics_test_util.h"

namespace waitpath::testing {
namespace {

using nlohmann::json;

// Counters are sums of float increments of ns * 1e-9 (a few thousand per series here):
// their rounding error is far below a nanosecond, so we ask for 1 ns plus 1e-12 relative.
bool CloseToNs(double seconds, int64_t ns) {
  const double expected = static_cast<double>(ns) * 1e-9;
  return std::fabs(seconds - expected) <= 1e-9 + 1e-12 * std::fabs(expected);
}

using Key = std::tuple<std::string, std::string, std::string>;  // host, process, state

// analyze's task records summed per (host, process, state), process as the metrics label it.
std::map<Key, int64_t> JsonTotals(const std::string& json_lines) {
  std::map<Key, int64_t> out;
  for (const json& r : JsonLines(json_lines)) {
    if (r["type"] != "task") continue;
    for (const auto& [state, ns] : r["breakdown_ns"].items()) {
      // The label rule of docs/metrics.md, written independently of the exporter's code (the
      // fixtures' names are printable): the name as it is, `unnamed` when there is none.
      const std::string comm = r["comm"].get<std::string>();
      const std::string process = comm.empty() ? "unnamed" : comm;
      out[{r["host"], process, state}] += ns.get<int64_t>();
    }
  }
  return out;
}

std::map<Key, double> MetricTotals(const std::vector<Sample>& samples, const std::string& name) {
  std::map<Key, double> out;
  for (const Sample& s : samples) {
    if (s.name != name) continue;
    out[{s.labels.at("host"), s.labels.at("process"), s.labels.at("state")}] += s.value;
  }
  return out;
}

class MetricsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("waitpath-metrics-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Generate(const std::string& scenario, const std::string& extra = "") {
    const fs::path out = dir_ / scenario;
    const std::string cmd = std::string(WAITPATH_GEN) + " --scenario " + WAITPATH_SCENARIOS + "/" +
                            scenario + ".toml --out " + out.string() + " " + extra +
                            " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }

  // Runs analyze --json with --metrics-file; both outputs must agree state by state, and the
  // blame family split of each process must add up to the same totals.
  void ExpectCountersEqualJson(const std::string& args) {
    const fs::path prom = dir_ / "out.prom";
    const CommandResult r =
        RunWaitpath("analyze --json --metrics-file " + prom.string() + " " + args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::map<Key, int64_t> truth = JsonTotals(r.out);
    ASSERT_FALSE(truth.empty());
    const std::vector<Sample> samples = ParseExposition(ReadFile(prom));
    const auto seconds = MetricTotals(samples, "waitpath_active_path_seconds_total");
    const auto blame = MetricTotals(samples, "waitpath_active_path_blame_seconds_total");
    int64_t total_ns = 0;
    for (const auto& [key, ns] : truth) {
      total_ns += ns;
      const auto& [host, process, state] = key;
      const double got = seconds.count(key) ? seconds.at(key) : 0.0;
      EXPECT_TRUE(CloseToNs(got, ns))
          << host << "/" << process << " " << state << ": " << got << " s vs " << ns << " ns";
      const double split = blame.count(key) ? blame.at(key) : 0.0;
      EXPECT_TRUE(CloseToNs(split, ns)) << "blame " << host << "/" << process << " " << state
                                        << ": " << split << " s vs " << ns << " ns";
    }
    for (const auto& [key, value] : seconds) {
      if (!truth.count(key)) {
        EXPECT_EQ(value, 0.0) << std::get<1>(key) << " not in analyze";
      }
    }
    EXPECT_GT(total_ns, 0);
  }

  fs::path dir_;
};

TEST_F(MetricsCliTest, CountersEqualAnalyzeOnPerfRpc) {
  ExpectCountersEqualJson(kFixtures + "/perf/rpc");
  ExpectCountersEqualJson("--watch 'comm=wl-rpc.*' " + kFixtures + "/perf/rpc");
}

TEST_F(MetricsCliTest, CountersEqualAnalyzeOnGeneratedThreeTier) {
  const fs::path trace = Generate("three-tier");
  ExpectCountersEqualJson(trace.string());
}

TEST_F(MetricsCliTest, PipelineHealthFamiliesPresent) {
  const fs::path prom = dir_ / "out.prom";
  ASSERT_EQ(RunWaitpath("analyze --metrics-file " + prom.string() + " " + kFixtures + "/perf/rpc")
                .exit_code,
            0);
  std::map<std::string, double> first;
  for (const Sample& s : ParseExposition(ReadFile(prom))) first.try_emplace(s.name, s.value);
  for (const char* name :
       {"waitpath_events_total", "waitpath_events_discarded_total",
        "waitpath_timestamp_regressions_total", "waitpath_stream_lag_seconds",
        "waitpath_clock_sync_quality", "waitpath_clock_sync_accuracy_seconds",
        "waitpath_packets_matched_total", "waitpath_packets_expired_total",
        "waitpath_pending_cross_host_waits", "waitpath_history_bytes",
        "waitpath_history_evictions_total", "waitpath_history_evicted_reads_total",
        "waitpath_waits_resolved_total"}) {
    EXPECT_TRUE(first.count(name)) << name;
  }
  // The rpc fixture's expect file: 562 events, loopback packets matched.
  EXPECT_EQ(first["waitpath_events_total"], 562);
  EXPECT_GT(first["waitpath_packets_matched_total"], 0);
  EXPECT_GT(first["waitpath_waits_resolved_total"], 0);
  EXPECT_GT(first["waitpath_history_bytes"], 0);
  EXPECT_EQ(first["waitpath_build_info"], 1);
}

// The reference host's clock series says `reference`, as the terminal view does (it said
// `accurate`); the inferred switches have a series per host from the start, as their siblings
// (they had no `host` label).
TEST_F(MetricsCliTest, ReferenceHostAndPerHostInferredSwitches) {
  const fs::path prom = dir_ / "out.prom";
  auto samples = [&](const std::string& trace) {
    const CommandResult r =
        RunWaitpath("analyze --metrics-file " + prom.string() + " " + trace + " >/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, double> out;  // name{label values...}
    for (const Sample& s : ParseExposition(ReadFile(prom))) {
      if (s.name != "waitpath_clock_sync_quality" && s.name != "waitpath_inferred_switches_total")
        continue;
      std::string key = s.name;
      for (const auto& [k, v] : s.labels) key += " " + k + "=" + v;
      out[key] = s.value;
    }
    return out;
  };
  auto one = samples(kFixtures + "/perf/rpc");
  EXPECT_EQ(one["waitpath_clock_sync_quality host=vm quality=reference"], 1);
  EXPECT_EQ(one["waitpath_clock_sync_quality host=vm quality=accurate"], 0);
  EXPECT_TRUE(one.count("waitpath_inferred_switches_total host=vm"));
  auto two = samples(kFixtures + "/lttng/overlay");
  EXPECT_EQ(two["waitpath_clock_sync_quality host=vm-client quality=reference"], 1);
  EXPECT_EQ(two["waitpath_clock_sync_quality host=vm-client quality=accurate"], 0);
  EXPECT_EQ(two["waitpath_clock_sync_quality host=vm-server quality=accurate"], 1);
  EXPECT_EQ(two["waitpath_clock_sync_quality host=vm-server quality=reference"], 0);
  EXPECT_EQ(two.count("waitpath_inferred_switches_total host=vm-client"), 1u);
  EXPECT_EQ(two.count("waitpath_inferred_switches_total host=vm-server"), 1u);
  EXPECT_EQ(two.count("waitpath_inferred_switches_total"), 0u);
}

TEST_F(MetricsCliTest, ProcessLabelsAreBounded) {
  const fs::path trace = Generate("three-tier");
  const fs::path prom = dir_ / "out.prom";
  ASSERT_EQ(RunWaitpath("analyze --max-processes 2 --metrics-file " + prom.string() + " " +
                        trace.string() + " >/dev/null")
                .exit_code,
            0);
  std::set<std::string> processes, blamed;
  for (const Sample& s : ParseExposition(ReadFile(prom))) {
    if (s.labels.count("process")) processes.insert(s.labels.at("process"));
    if (s.labels.count("blamed_process")) blamed.insert(s.labels.at("blamed_process"));
  }
  EXPECT_EQ(processes.size(), 3u);  // two names and `other`
  EXPECT_TRUE(processes.count("other"));
  EXPECT_LE(blamed.size(), 3u);
}

TEST_F(MetricsCliTest, ConfigFileAppliesAndFlagsOverrideIt) {
  const fs::path prom = dir_ / "out.prom";
  const fs::path config = dir_ / "waitpath.toml";
  std::ofstream(config) << "# test\n[analyze]\nmax-processes = 1\nmetrics-file = \""
                        << prom.string() << "\"\n";
  auto processes = [&] {
    std::set<std::string> out;
    for (const Sample& s : ParseExposition(ReadFile(prom))) {
      if (s.name == "waitpath_active_path_seconds_total") out.insert(s.labels.at("process"));
    }
    return out;
  };
  const std::string trace = kFixtures + "/perf/rpc";
  ASSERT_EQ(
      RunWaitpath("--config " + config.string() + " analyze " + trace + " >/dev/null").exit_code,
      0);
  EXPECT_EQ(processes().size(), 2u);  // one name and `other`
  // After the subcommand too (what the systemd unit does), and a flag wins over the file.
  fs::remove(prom);
  ASSERT_EQ(RunWaitpath("analyze --config " + config.string() + " --max-processes 50 " + trace +
                        " >/dev/null")
                .exit_code,
            0);
  EXPECT_GT(processes().size(), 2u);
  EXPECT_FALSE(processes().count("other"));
}

// The packaged configuration (/etc/waitpath/waitpath.toml) is the systemd unit's: `analyze`
// with it reports and exits (it held the terminal for 5 minutes, serving metrics, and said
// nothing of its --watch matching none of the tasks).
TEST_F(MetricsCliTest, PackagedConfigAnalyzeReportsAndExits) {
  const CommandResult r = RunWaitpath("--config " + std::string(WAITPATH_CONFIGS) +
                                          "/waitpath.toml analyze " + kFixtures + "/perf/rpc",
                                      "timeout 60");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("waitpath: --watch 'comm=nginx.*' 'comm=postgres.*' matched none", 0), 0u)
      << r.err;
  EXPECT_EQ(r.err.find("serving metrics"), std::string::npos) << r.err;
}

// Serving after the report says for how long and how to stop it.
TEST_F(MetricsCliTest, ServingAfterTheReportSaysHowToStop) {
  const CommandResult r = RunWaitpath("analyze --metrics 127.0.0.1:0 --metrics-linger 0s " +
                                      kFixtures + "/perf/rpc >/dev/null");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(
      std::regex_search(r.err, std::regex("\nwaitpath: analysis done; serving metrics on "
                                          "http://127\\.0\\.0\\.1:[0-9]+/metrics for 0s more "
                                          "\\(--metrics-linger\\); Ctrl-C or SIGTERM stops it\n$")))
      << r.err;
}

TEST_F(MetricsCliTest, MalformedConfigIsOneLineAndExit2) {
  const std::string trace = kFixtures + "/perf/rpc";
  for (const std::string text :
       {"[analyze]\nmax-processes 1\n", "[analyze]\nmax-procs = 1\n",
        "[analyze\nmax-processes = 2\n", "[analyze]\nmax-processes = \"x\"\n"}) {
    const fs::path config = dir_ / "bad.toml";
    std::ofstream(config) << text;
    const CommandResult r = RunWaitpath("--config " + config.string() + " analyze " + trace);
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("waitpath: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  const CommandResult missing =
      RunWaitpath("--config " + (dir_ / "none.toml").string() + " analyze " + trace);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.toml"), std::string::npos) << missing.err;
}

TEST_F(MetricsCliTest, BadMetricsFlagsAreOneLine) {
  const std::string trace = kFixtures + "/perf/rpc";
  CommandResult r = RunWaitpath("analyze --metrics 127.0.0.1:99999 " + trace);
  EXPECT_EQ(r.exit_code, 2);  // a usage error
  EXPECT_NE(r.err.find("--metrics"), std::string::npos) << r.err;
  r = RunWaitpath("analyze --metrics 127.0.0.1:0 --metrics-linger soon " + trace);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--metrics-linger"), std::string::npos) << r.err;
}

// Scrapes the endpoint as fast as it answers while the engine runs on a large trace; the
// analysis and its metrics must be the same as without a server. No assertion on timing.
TEST_F(MetricsCliTest, ScrapingUnderLoadChangesNothing) {
  const fs::path trace = Generate("scale", "--set duration=3s");
  const fs::path quiet_prom = dir_ / "quiet.prom", quiet_json = dir_ / "quiet.json";
  ASSERT_EQ(RunWaitpath("analyze --json --metrics-file " + quiet_prom.string() + " " +
                        trace.string() + " >" + quiet_json.string())
                .exit_code,
            0);

  const fs::path prom = dir_ / "served.prom", out = dir_ / "served.json", err = dir_ / "err";
  Background waitpath({kWaitpath, "analyze", "--json", "--metrics", "127.0.0.1:0",
                       "--metrics-linger", "0s", "--metrics-file", prom.string(), trace.string()},
                      out, err);
  ASSERT_TRUE(waitpath.started());
  const std::string address = WaitForMetricsAddress(err, std::chrono::seconds(60));
  ASSERT_FALSE(address.empty()) << ReadFile(err);
  int scrapes = 0, code = -1;
  double last_waits = 0;
  while (!waitpath.Exited(&code)) {
    const std::string text = Scrape(address);
    if (text.empty()) continue;  // the server closes once the analysis is done
    ++scrapes;
    double waits = 0;
    for (const Sample& s : ParseExposition(text)) {
      if (s.name == "waitpath_waits_resolved_total") waits += s.value;
    }
    EXPECT_GE(waits, last_waits);  // counters never go back
    last_waits = waits;
  }
  EXPECT_EQ(code, 0) << ReadFile(err);
  EXPECT_GT(scrapes, 0);
  EXPECT_EQ(ReadFile(out), ReadFile(quiet_json));
  auto active = [](const fs::path& p) {
    std::vector<Sample> keep;
    for (Sample& s : ParseExposition(ReadFile(p))) {
      if (s.name.rfind("waitpath_active_path", 0) == 0 ||
          s.name == "waitpath_waits_resolved_total" || s.name == "waitpath_events_total")
        keep.push_back(std::move(s));
    }
    std::sort(keep.begin(), keep.end(), [](const Sample& a, const Sample& b) {
      return std::tie(a.name, a.labels) < std::tie(b.name, b.labels);
    });
    return keep;
  };
  const auto quiet = active(quiet_prom), served = active(prom);
  ASSERT_EQ(quiet.size(), served.size());
  for (size_t i = 0; i < quiet.size(); ++i) {
    EXPECT_EQ(quiet[i].labels, served[i].labels);
    EXPECT_EQ(quiet[i].value, served[i].value) << quiet[i].name;
  }
  std::cerr << "scrapes during the analysis: " << scrapes << "\n";
}

// A port already in use is said so, in one line naming the flag and the address (it read
// "null context when constructing CivetServer. Possible problem binding to port.").
TEST_F(MetricsCliTest, PortInUseIsOneLineNamingIt) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t size = sizeof at;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&at), &size), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(at.sin_port));
  const CommandResult r =
      RunWaitpath("analyze --metrics " + address + " " + kFixtures + "/perf/rpc");
  close(fd);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "waitpath: --metrics " + address + ": address in use\n");
}

// Only GET /metrics is served, and idle clients holding connections open do not block a scrape
// (the server has more workers than these, and a request timeout).
TEST_F(MetricsCliTest, OnlyMetricsPathAndIdleClientsDoNotBlockScrapes) {
  const fs::path out = dir_ / "out", err = dir_ / "err";
  Background waitpath({kWaitpath, "analyze", "--metrics", "127.0.0.1:0", "--metrics-linger", "60s",
                       kFixtures + "/perf/rpc"},
                      out, err);
  ASSERT_TRUE(waitpath.started());
  const std::string address = WaitForMetricsAddress(err, std::chrono::seconds(30));
  ASSERT_FALSE(address.empty()) << ReadFile(err);
  const int port = std::stoi(address.substr(address.rfind(':') + 1));
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    idle.push_back(fd);  // connected, sends nothing
  }
  // Only waitpath's families: prometheus-cpp's Exposer added `exposer_*` ones, whose summary
  // quantiles read `Nan` once a minute passed without a scrape.
  const std::string text = Scrape(address);
  EXPECT_NE(text.find("waitpath_"), std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_EQ(line.rfind("waitpath_", 0), 0u) << line;
  }
  auto status = [&](const std::string& path) {
    const std::string cmd = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://" +
                            address + path + " 2>/dev/null";
    std::string code;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[16];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) code.append(buf, n);
      pclose(p);
    }
    return code;
  };
  EXPECT_EQ(status("/metrics"), "200");
  for (const std::string path : {"/metricsfoo", "/metrics/x", "/METRICS", "/"})
    EXPECT_EQ(status(path), "404") << path;
  for (int fd : idle) close(fd);
}

}  // namespace
}  // namespace waitpath::testing
