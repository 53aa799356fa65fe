// Just-in-time capture over recorded traces (`analyze --capture-dir`): a generated host with
// one slow disk write gives one capture, babeltrace2 reads it, and analysing the capture gives
// the captured wait's answer again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/e2e/cli_test_util.h"
#include "tests/e2e/trace_event_checks.h"

namespace waitpath::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A database writer whose 40th write takes 80 ms; the rest take 200 µs.
constexpr const char* kSlowDisk = R"(name = "slow-disk"
seed = 3
duration = "300ms"
watch = ["writer"]

[[hosts]]
name = "db"
cpus = 2

  [[hosts.tasks]]
  name = "writer"
  comm = "db-writer"
  start = "1ms"
  script = ["repeat 40", "compute 1ms", "disk 200us", "end", "disk 80ms 65536 write",
            "repeat 40", "compute 1ms", "disk 200us", "end"]

  [[hosts.tasks]]
  name = "noise"
  comm = "noise"
  start = "1ms"
  script = ["repeat 80", "compute 2ms", "sleep 1ms", "end"]
)";

std::vector<json> Waits(const std::string& out) {
  std::vector<json> waits;
  for (const json& r : JsonLines(out)) {
    if (r["type"] == "wait") waits.push_back(r);
  }
  return waits;
}

TEST(CaptureCliTest, ASlowDiskWriteIsCapturedAndItsCaptureGivesTheSameAnswer) {
  const fs::path tmp = fs::temp_directory_path() / ("waitpath-capture-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::ofstream(tmp / "slow-disk.toml") << kSlowDisk;
  const std::string gen = std::string(WAITPATH_GEN) + " -q --scenario " +
                          (tmp / "slow-disk.toml").string() + " --out " + (tmp / "trace").string();
  ASSERT_EQ(std::system(gen.c_str()), 0) << gen;
  const fs::path captures = tmp / "captures";

  CommandResult r = RunWaitpath(
      "analyze --json --watch comm=db-writer --min-wait 50ms "
      "--capture-dir " +
      captures.string() + " --capture-min-wait 50ms --capture-margin 20ms " +
      (tmp / "trace").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 capture(s) written"), std::string::npos) << r.err;
  const std::vector<json> live = Waits(r.out);
  ASSERT_EQ(live.size(), 1u) << r.out;
  EXPECT_EQ(live[0]["cause"], "disk");
  EXPECT_GE(live[0]["duration_ns"].get<int64_t>(), 79'000'000);

  std::vector<fs::path> made;
  for (const auto& e : fs::directory_iterator(captures)) made.push_back(e.path());
  ASSERT_EQ(made.size(), 1u);
  const fs::path capture = made[0];
  const json info = json::parse(std::ifstream(capture / "wait.json"));
  EXPECT_EQ(info["wait"], live[0]);  // the record as --json wrote it
  ASSERT_EQ(info["hosts"].size(), 1u);
  EXPECT_EQ(info["hosts"][0]["host"], "db");
  EXPECT_EQ(info["window_ns"][0].get<int64_t>(), live[0]["start_ns"].get<int64_t>() - 20'000'000);

  // babeltrace2 reads the capture's trace, and it is smaller than the original.
  const fs::path trace = capture / "db" / "trace";
  ASSERT_TRUE(fs::exists(trace / "metadata"));
  EXPECT_EQ(std::system(("babeltrace2 " + trace.string() + " >/dev/null").c_str()), 0);

  // The capture analysed on its own: the same wait, the same answer.
  CommandResult again =
      RunWaitpath("analyze --json --watch comm=db-writer --min-wait 50ms " + capture.string());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::vector<json> replayed = Waits(again.out);
  ASSERT_EQ(replayed.size(), 1u) << again.out;
  for (const char* key : {"host", "tid", "comm", "start_ns", "end_ns", "cause", "breakdown_ns"})
    EXPECT_EQ(replayed[0][key], live[0][key]) << key;

  // Its timeline, over the capture's window.
  const json timeline = json::parse(std::ifstream(capture / "timeline.json"));
  EXPECT_EQ(CheckTraceEventFormat(timeline), 0);
  int waits = 0;
  for (const auto& e : timeline["traceEvents"]) waits += e["ph"] == "X" && e["cat"] == "wait";
  EXPECT_EQ(waits, 1);  // those of at least --capture-min-wait: the captured one
  // Its disk completion is an arrow from the interrupt that woke the writer.
  int from_interrupt = 0;
  for (const auto& e : timeline["traceEvents"]) {
    if (e["ph"] == "s" && e["tid"].get<int64_t>() >= (int64_t{1} << 23) &&
        e["tid"].get<int64_t>() % 2)
      ++from_interrupt;
  }
  EXPECT_EQ(from_interrupt, 1);
  fs::remove_all(tmp);
}

// Every 200 µs write is long enough here: one capture in the hour, the others skipped and
// counted; the size cap keeps the newest captures.
TEST(CaptureCliTest, CapsSkipAndRemoveAndSaySo) {
  const fs::path tmp = fs::temp_directory_path() / ("waitpath-capcap-" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::ofstream(tmp / "slow-disk.toml") << kSlowDisk;
  const std::string gen = std::string(WAITPATH_GEN) + " -q --scenario " +
                          (tmp / "slow-disk.toml").string() + " --out " + (tmp / "trace").string();
  ASSERT_EQ(std::system(gen.c_str()), 0) << gen;
  CommandResult r =
      RunWaitpath("analyze --watch comm=db-writer --capture-dir " + (tmp / "c1").string() +
                  " --capture-min-wait 150us --capture-margin 1ms "
                  "--capture-max-per-hour 1 --metrics-file " +
                  (tmp / "metrics.txt").string() + " " + (tmp / "trace").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 capture(s) written"), std::string::npos) << r.err;
  std::ifstream metrics(tmp / "metrics.txt");
  const std::string text((std::istreambuf_iterator<char>(metrics)), {});
  EXPECT_NE(text.find("waitpath_captures_total{outcome=\"written\"} 1"), std::string::npos) << text;
  const std::string skipped = "waitpath_captures_total{outcome=\"skipped_rate\"} ";
  const size_t at = text.find(skipped);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stoi(text.substr(at + skipped.size())), 80) << text;  // the other writes
  // A cap of 1 MB: captures of the whole trace (a 200 ms margin) do not all fit.
  r = RunWaitpath("analyze --watch comm=db-writer --capture-dir " + (tmp / "c2").string() +
                  " --capture-min-wait 150us --capture-margin 200ms --capture-max-mb 1 " +
                  (tmp / "trace").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0;
  int kept = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp / "c2")) {
    if (e.is_regular_file()) total += e.file_size();
    if (e.path().filename() == "wait.json") ++kept;
  }
  EXPECT_GE(kept, 1);
  EXPECT_LT(kept, 81);
  EXPECT_LE(total, uint64_t{1} << 20);
  fs::remove_all(tmp);
}

TEST(CaptureCliTest, TheCapFlagsAreChecked) {
  EXPECT_EQ(RunWaitpath("analyze --capture-dir /tmp/x /tmp").exit_code, 2);
  EXPECT_EQ(RunWaitpath("analyze --capture-min-wait 5ms /tmp").exit_code, 2);
  // Without --capture-traces, live cuts captures from the packets the native reader keeps;
  // babeltrace2's reader keeps none.
  CommandResult r =
      RunWaitpath("live --all --decoder babeltrace2 --capture-dir /tmp/x --capture-min-wait 5ms");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--capture-traces"), std::string::npos) << r.err;
  EXPECT_EQ(RunWaitpath("live --all --capture-dir /tmp/x --capture-min-wait 5ms "
                        "--capture-traces /nonexistent")
                .exit_code,
            2);
}

}  // namespace
}  // namespace waitpath::testing
