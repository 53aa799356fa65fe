// The timeline of a client woken by a server: its states tile its life, its wait is drawn over
// them with the server named, the wake-up is an arrow from the server's CPU, and the file keeps
// to the trace-event format.
#include "exporters/timeline_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"
#include "tests/e2e/trace_event_checks.h"

namespace waitpath {
namespace {

int32_t Name(const char* s) {
  return static_cast<int32_t>(StringTable::Global().Intern(s));
}

struct Result {
  std::string json;
  std::string error;
  bool ok = false;
  StateVec client;  // the accounting's total for the client
};

class Totals : public AccountingSink {
 public:
  void OnAccounted(Utid u, int64_t, int64_t, const StateVec& states,
                   std::span<const PathSegment>) override {
    by_task[u] += states;
  }
  std::map<Utid, StateVec> by_task;
};

// Client (tid 100, CPU 0) runs 1000..2000 then sleeps; the server (tid 200, CPU 1) runs from
// 1500 and wakes it at 40000; the client runs again from 45000 (preempted 5 µs) to 50000, then
// sleeps to the end of the input (60000).
Result Analyse(TimelineOptions options) {
  Engine engine;
  WatchSet watch;
  WatchSelector selector;
  std::string error;
  EXPECT_TRUE(ParseWatch("comm=client", &selector, &error)) << error;
  watch.Add(std::move(selector));
  WatchedAccounting accounting(engine, std::move(watch), {"h1"});
  TimelineWriter timeline(accounting, options);
  Totals totals;
  accounting.AddSink(&totals);
  engine.SetListener(&accounting);
  const int32_t client = Name("client"), server = Name("server");
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {
      SwitchEvent(1000, 0, 0, 100, 0, -1, client),
      SwitchEvent(1500, 1, 0, 200, 0, -1, server),
      SwitchEvent(2000, 0, 100, 0, 1, client, -1),
      WakeEvent(EventKind::kSchedWaking, 40000, 1, 100, 0, client),
      SwitchEvent(45000, 0, 0, 100, 0, -1, client),
      SwitchEvent(50000, 0, 100, 0, 1, client, -1),
      SwitchEvent(60000, 1, 200, 0, 1, server, -1),
  };
  for (const Event& e : batch.events) timeline.cpus().Observe(e);
  engine.Push(batch);
  accounting.Finish();
  Result run;
  std::ostringstream out;
  run.ok = timeline.Write(out, &run.error);
  run.json = out.str();
  for (const auto& [u, v] : totals.by_task) run.client += v;
  return run;
}

TEST(TimelineWriterTest, StatesTileTheTaskAndTheWaitIsArrowedFromItsWaker) {
  TimelineOptions options;
  options.min_wait_ns = 10'000;
  const Result run = Analyse(options);
  ASSERT_TRUE(run.ok) << run.error;
  const nlohmann::json trace = nlohmann::json::parse(run.json);
  EXPECT_EQ(testing::CheckTraceEventFormat(trace), 0);
  EXPECT_EQ(trace["otherData"]["origin_ns"], "1000");

  StateVec drawn;
  int waits = 0, cpu_slices = 0;
  std::map<std::string, std::string> names;  // "pid/tid" -> track name
  std::map<int64_t, nlohmann::json> flow_start, flow_end;
  for (const auto& e : trace["traceEvents"]) {
    const std::string track = e["pid"].dump() + "/" + e["tid"].dump();
    if (e["ph"] == "M" && e["name"] == "thread_name") names[track] = e["args"]["name"];
    if (e["ph"] == "s") flow_start[e["id"]] = e;
    if (e["ph"] == "f") flow_end[e["id"]] = e;
    if (e["ph"] != "X") continue;
    if (e["cat"] == "state") {
      EXPECT_EQ(track, "1/100");
      for (int i = 0; i < kLeafCount; ++i) {
        if (e["args"]["state"] == LeafName(static_cast<Leaf>(i)))
          drawn.ns[i] += std::llround(e["dur"].get<double>() * 1000);
      }
    } else if (e["cat"] == "wait") {
      ++waits;
      EXPECT_EQ(e["name"], "wait 0.038 ms (task) woken by server");
      EXPECT_EQ(e["ts"], 1.0);  // 2000 ns after the origin
      EXPECT_EQ(e["dur"], 38.0);
      EXPECT_EQ(e["args"]["waker"], "server h1/200");
    } else if (e["cat"] == "cpu") {
      ++cpu_slices;
    }
  }
  EXPECT_EQ(drawn.ns, run.client.ns);  // the slices are the accounting, state by state
  EXPECT_EQ(drawn.total(), 59000);     // to the end of the input: still alive
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(cpu_slices, 3);  // client twice on CPU 0, server on CPU 1
  EXPECT_EQ(names["1/100"], "client");
  EXPECT_EQ(names["1/8388610"], "CPU 1");
  // One wake-up: from the server on CPU 1 at 40000 to the client's track.
  ASSERT_EQ(flow_start.size(), 1u);
  const auto& [id, s] = *flow_start.begin();
  EXPECT_EQ(s["name"], "wake-up");
  EXPECT_EQ(s["tid"], 8388610);
  EXPECT_EQ(s["ts"], 39.0);
  ASSERT_TRUE(flow_end.count(id));
  EXPECT_EQ(flow_end[id]["tid"], 100);
  EXPECT_EQ(flow_end[id]["bp"], "e");
}

TEST(TimelineWriterTest, AWindowKeepsWhatOverlapsIt) {
  TimelineOptions options;
  options.window.from = 30000;
  options.window.to = 47000;
  const Result run = Analyse(options);
  ASSERT_TRUE(run.ok) << run.error;
  const nlohmann::json trace = nlohmann::json::parse(run.json);
  EXPECT_EQ(testing::CheckTraceEventFormat(trace), 0);
  int64_t states = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), 17.0 + 1e-9);
    if (e["cat"] == "state") states += std::llround(e["dur"].get<double>() * 1000);
  }
  EXPECT_EQ(states, 17000);
}

TEST(TimelineWriterTest, ATimelineOverItsCapIsRefusedWithAClearError) {
  TimelineOptions options;
  options.max_bytes = 300;
  const Result run = Analyse(options);
  EXPECT_FALSE(run.ok);
  EXPECT_TRUE(run.json.empty());
  EXPECT_NE(run.error.find("--timeline-max-mb"), std::string::npos) << run.error;
  EXPECT_NE(run.error.find("--from/--to"), std::string::npos) << run.error;
}

}  // namespace
}  // namespace waitpath
