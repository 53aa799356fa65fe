// End-to-end: every scenario generates, babeltrace2 reads each host trace with the event
// count of truth.json, breakdowns sum exactly, and a seed makes the output reproducible.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tools/gen/scenario.h"
#include "tools/gen/trace_generator.h"

namespace waitpath::gen {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;
  std::string out;
};

CommandResult RunCommand(const std::string& cmd) {
  CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  r.status = pclose(p);
  return r;
}

size_t CountLines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

fs::path TempDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("waitpath-gen-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

nlohmann::json ReadJson(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json Generate(const std::string& scenario, const fs::path& dir,
                        const std::vector<std::string>& overrides = {},
                        const uint64_t* seed = nullptr) {
  Scenario s = ScenarioLoader::Load(std::string(WAITPATH_GEN_SCENARIOS) + "/" + scenario + ".toml",
                                    overrides, seed);
  TraceGenerator::Generate(s, dir.string());
  return ReadJson(dir / "truth.json");
}

void CheckTruthSums(const nlohmann::json& truth) {
  ASSERT_FALSE(truth["tasks"].empty());
  for (const auto& task : truth["tasks"]) {
    const auto& bd = task["breakdown_ns"];
    ASSERT_EQ(bd.size(), 11u) << task.dump();
    int64_t sum = 0;
    for (const auto& [k, v] : bd.items()) sum += v.get<int64_t>();
    EXPECT_EQ(sum, task["end_ns"].get<int64_t>() - task["start_ns"].get<int64_t>()) << task["name"];
    int64_t by_task = 0;
    for (const auto& b : task["by_task"]) by_task += b["ns"].get<int64_t>();
    EXPECT_EQ(by_task, sum) << task["name"];
  }
}

void CheckReadableByBabeltrace(const nlohmann::json& truth, const fs::path& dir) {
  for (const auto& host : truth["hosts"]) {
    fs::path trace = dir / host["host"].get<std::string>();
    CommandResult text = RunCommand("babeltrace2 '" + trace.string() + "' 2>/dev/null");
    ASSERT_EQ(text.status, 0) << trace;
    EXPECT_EQ(CountLines(text.out), host["events"].get<size_t>()) << trace;
    EXPECT_EQ(RunCommand("babeltrace2 '" + trace.string() + "' -o dummy 2>&1").status, 0) << trace;
  }
}

class EveryScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryScenario, GeneratesReadableTracesWithExactTruth) {
  std::string name = GetParam();
  fs::path dir = TempDir(name);
  std::vector<std::string> overrides;
  if (name == "scale") overrides = {"duration=50ms", "scale.event_rate=200000", "scale.hosts=3"};
  nlohmann::json truth = Generate(name, dir, overrides);
  EXPECT_EQ(truth["scenario"], name);
  EXPECT_EQ(truth["clocks"][0]["slope"].get<double>(), 1.0);
  EXPECT_EQ(truth["clocks"][0]["offset_ns"].get<double>(), 0.0);
  CheckTruthSums(truth);
  CheckReadableByBabeltrace(truth, dir);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, EveryScenario,
                         ::testing::Values("rpc", "three-tier", "fork-chain", "cpu-contention",
                                           "mutex-convoy", "scale"));

TEST(Generator, SameSeedSameOutputOtherSeedOtherOutput) {
  fs::path a = TempDir("seed-a"), b = TempDir("seed-b"), c = TempDir("seed-c");
  uint64_t seed = 1234, other = 99;
  Generate("three-tier", a, {}, &seed);
  Generate("three-tier", b, {}, &seed);
  Generate("three-tier", c, {}, &other);
  EXPECT_EQ(ReadFile(a / "truth.json"), ReadFile(b / "truth.json"));
  // sink.ctf.fs gives every written trace a fresh UUID, so compare decoded contents.
  for (const char* host : {"client", "web", "db"}) {
    std::string ta = RunCommand("babeltrace2 '" + (a / host).string() + "'").out;
    std::string tb = RunCommand("babeltrace2 '" + (b / host).string() + "'").out;
    EXPECT_FALSE(ta.empty());
    EXPECT_TRUE(ta == tb) << host;
  }
  EXPECT_NE(ReadFile(a / "truth.json"), ReadFile(c / "truth.json"));
  for (const auto& d : {a, b, c}) fs::remove_all(d);
}

TEST(Generator, ForkChainMasterWaitsOnGrandchild) {
  fs::path dir = TempDir("fork");
  nlohmann::json truth = Generate("fork-chain", dir);
  const nlohmann::json* master = nullptr;
  for (const auto& t : truth["tasks"]) {
    if (t["name"] == "master") master = &t;
  }
  ASSERT_NE(master, nullptr);
  const auto& top = (*master)["by_task"][0];
  EXPECT_EQ(top["name"], "child2");
  EXPECT_GE(top["states"]["running"].get<int64_t>(), 19'900'000);  // child2 computes 20 ms
  fs::remove_all(dir);
}

TEST(Generator, ThreeTierClientSeesDiskAndNetwork) {
  fs::path dir = TempDir("3t");
  nlohmann::json truth = Generate("three-tier", dir);
  const auto& client = truth["tasks"][0];
  ASSERT_EQ(client["name"], "client");
  EXPECT_GT(client["breakdown_ns"]["disk"].get<int64_t>(), 0);
  EXPECT_GT(client["breakdown_ns"]["network"].get<int64_t>(), 0);
  // Non-reference hosts have real offsets and drifts.
  EXPECT_NE(truth["clocks"][1]["slope"].get<double>(), 1.0);
  fs::remove_all(dir);
}

// `span NAME from PEER` continues the context of the request it received: the demo's requests
// are one trace each across its three hosts (client checkout -> web cart -> db query).
TEST(Generator, DemoRequestsAreOneTraceAcrossHosts) {
  fs::path dir = TempDir("demo-spans");
  Scenario s = ScenarioLoader::Load(WAITPATH_DEMO_SCENARIO, {"duration=300ms"}, nullptr);
  TraceGenerator::Generate(s, dir.string());
  const nlohmann::json truth = ReadJson(dir / "truth.json");
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& span : truth["spans"]) by_id[span["span_id"].get<std::string>()] = span;
  std::map<std::string, int> count;
  for (const auto& [id, span] : by_id) {
    const std::string name = span["name"];
    ++count[name];
    if (name == "checkout") {
      EXPECT_EQ(span["host"], "client");
      EXPECT_TRUE(span["parent"].is_null()) << span.dump();
      continue;
    }
    const std::string parent_name = name == "cart" ? "checkout" : "cart";
    ASSERT_TRUE(span["parent"].is_string()) << span.dump();
    const auto parent = by_id.find(span["parent"].get<std::string>());
    ASSERT_NE(parent, by_id.end()) << span.dump();
    EXPECT_EQ(parent->second["name"], parent_name);
    EXPECT_EQ(parent->second["trace_id"], span["trace_id"]);
    EXPECT_NE(parent->second["host"], span["host"]);
    // The child runs within its parent (on the reference clock).
    EXPECT_GE(span["start_ns"].get<int64_t>(), parent->second["start_ns"].get<int64_t>());
    EXPECT_LE(span["end_ns"].get<int64_t>(), parent->second["end_ns"].get<int64_t>());
  }
  EXPECT_GT(count["checkout"], 10);
  EXPECT_EQ(count["cart"], count["query"]);
  EXPECT_GE(count["checkout"], count["cart"]);
  fs::remove_all(dir);
}

TEST(Generator, LossIsReportedByBabeltraceAndTruth) {
  fs::path dir = TempDir("loss");
  nlohmann::json truth = Generate(
      "rpc", dir, {"loss.host=server-host", "loss.cpu=0", "loss.share=0.3", "loss.chunk=8"});
  const auto& host = truth["hosts"][1];
  ASSERT_EQ(host["host"], "server-host");
  ASSERT_GT(host["discarded"].get<int64_t>(), 0);
  uint64_t listed = 0;
  for (const auto& d : host["dropped"]) listed += d["count"].get<uint64_t>();
  EXPECT_EQ(listed, host["discarded"].get<uint64_t>());
  CheckReadableByBabeltrace(truth, dir);
  CommandResult warn =
      RunCommand("babeltrace2 '" + (dir / "server-host").string() + "' 2>&1 >/dev/null");
  EXPECT_NE(warn.out.find("discarded"), std::string::npos) << warn.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace waitpath::gen
