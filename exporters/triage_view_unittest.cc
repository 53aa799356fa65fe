// The headline of a wait, the terminal view's model (slowest recent waits, per-process
// shares, untraced-peer waits apart) and its rendering, from hand-made waits.
#include "exporters/triage_view.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "exporters/terminal_screen.h"
#include "model/dialect.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr int64_t kMs = 1'000'000;

ResolvedWait Wait(Utid task, int64_t start, int64_t end, WaitLink link, StateVec breakdown) {
  return ResolvedWait{task, start, end, link, breakdown, StateVec{}};
}

TEST(WaitHeadlineTest, LargestStateWhereItWasAndRunnerUp) {
  StateVec b;
  b[Leaf::kDisk] = 55 * kMs;
  b[Leaf::kNetwork] = 15 * kMs;
  b[Leaf::kRunning] = 30 * kMs;
  const ResolvedWait w =
      Wait(1, 0, 100 * kMs, WaitLink{WaitLink::Type::kTask, Leaf::kBlocked, 2}, b);
  // Disk mostly under task 3, a little under task 2.
  const PathSegment path[] = {{2, Leaf::kRunning, 0, 30 * kMs, 1},
                              {3, Leaf::kDisk, 30 * kMs, 80 * kMs, 2},
                              {2, Leaf::kDisk, 80 * kMs, 85 * kMs, 1},
                              {kNoTask, Leaf::kNetwork, 85 * kMs, 100 * kMs, 0}};
  const WaitHeadline h = HeadlineOf(w, path);
  EXPECT_EQ(h.leaf, Leaf::kDisk);
  EXPECT_EQ(h.leaf_ns, 55 * kMs);
  EXPECT_EQ(h.where, 3u);
  EXPECT_EQ(h.second, Leaf::kRunning);
  EXPECT_FALSE(h.untraced_peer);
  EXPECT_EQ(FormatHeadline(h, "db/postgres"), "disk 55% on db/postgres (running 30%)");
  EXPECT_EQ(FormatWaitDuration(h.duration_ns), "100.000 ms");
}

TEST(WaitHeadlineTest, NoRunnerUpUnderTenPercentAndNeverARoundedHundred) {
  StateVec b;
  b[Leaf::kTimer] = 9'996;
  b[Leaf::kRunning] = 4;
  const ResolvedWait w = Wait(1, 0, 10'000, WaitLink{WaitLink::Type::kLeaf, Leaf::kTimer}, b);
  const WaitHeadline h = HeadlineOf(w, {});
  EXPECT_EQ(h.second_ns, 0);
  EXPECT_EQ(h.where, 1u);  // no path piece: the waiting task itself
  EXPECT_EQ(FormatHeadline(h, "box/x"), "timer 99% on box/x");
  EXPECT_EQ(FormatWaitDuration(10'000), "10 us");
}

TEST(WaitHeadlineTest, UntracedPeer) {
  StateVec b;
  b[Leaf::kNetwork] = 5 * kMs;
  const ResolvedWait by_leaf =
      Wait(1, 0, 5 * kMs, WaitLink{WaitLink::Type::kLeaf, Leaf::kNetwork}, b);
  const ResolvedWait by_packet =
      Wait(1, 0, 5 * kMs, WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, kNoTask}, b);
  const ResolvedWait traced =
      Wait(1, 0, 5 * kMs, WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, 7, 0}, b);
  EXPECT_TRUE(IsUntracedPeerWait(by_leaf));
  EXPECT_TRUE(IsUntracedPeerWait(by_packet));
  EXPECT_FALSE(IsUntracedPeerWait(traced));
  EXPECT_EQ(FormatHeadline(HeadlineOf(by_leaf, {}), "x"), "network 100% from an untraced peer");
}

// Two tasks on host "box": "web" (tid 10) and "db" (tid 20), both watched.
class TriageViewTest : public ::testing::Test {
 protected:
  TriageViewTest() : accounting_(engine_, WatchAll(), {"box"}) {
    const int32_t web = static_cast<int32_t>(StringTable::Global().Intern("web"));
    const int32_t db = static_cast<int32_t>(StringTable::Global().Intern("db"));
    Batch batch;
    batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
    batch.events = {SwitchEvent(0, 0, 0, 10, 0, -1, web), SwitchEvent(0, 1, 0, 20, 0, -1, db)};
    engine_.Push(batch);
    web_ = engine_.tasks().Find(0, 10);
    db_ = engine_.tasks().Find(0, 20);
  }
  static WatchSet WatchAll() {
    WatchSet watch;
    WatchSelector s;
    std::string error;
    EXPECT_TRUE(ParseWatch("comm=.*", &s, &error));
    watch.Add(std::move(s));
    return watch;
  }
  // A wait of `task` ending at `end`, all in `leaf`, accounted as the accounting would.
  void Resolve(TriageView& view, Utid task, int64_t end, int64_t length, Leaf leaf,
               WaitLink link = WaitLink{WaitLink::Type::kLeaf, Leaf::kDisk}) {
    StateVec b;
    b[leaf] = length;
    if (link.type == WaitLink::Type::kLeaf) link.leaf = leaf;
    const ResolvedWait w = Wait(task, end - length, end, link, b);
    const PathSegment path[] = {{kNoTask, leaf, end - length, end, 0}};
    view.OnAccounted(task, end - length, end, b, path);
    view.OnWatchedWait(w, path);
  }

  Engine engine_;
  WatchedAccounting accounting_;
  Utid web_ = kNoTask, db_ = kNoTask;
};

TEST_F(TriageViewTest, SlowestRecentWaitsAndTheWindow) {
  TriageOptions options;
  options.window_ns = 10'000 * kMs;
  TriageView view(accounting_, options);
  constexpr int64_t kS = 1'000 * kMs;
  Resolve(view, web_, 1 * kS, 500 * kMs, Leaf::kDisk);  // old by the end
  Resolve(view, web_, 20 * kS, 3 * kMs, Leaf::kTimer);
  Resolve(view, db_, 21 * kS, 7 * kMs, Leaf::kDisk);
  Resolve(view, web_, 22 * kS, 5 * kMs, Leaf::kNetwork,
          WaitLink{WaitLink::Type::kPacket, Leaf::kNetwork, kNoTask});  // untraced: apart
  const std::vector<TriageWait> recent = view.Slowest(10, true);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].duration, 7 * kMs);
  EXPECT_EQ(recent[0].who, "box/db 20");
  EXPECT_EQ(recent[0].headline, "disk 100% on box/db");
  EXPECT_EQ(recent[1].duration, 3 * kMs);
  // Since the start the old one leads.
  EXPECT_EQ(view.Slowest(10, false).front().duration, 500 * kMs);

  const std::vector<TriageProcess> processes = view.Processes(true);
  ASSERT_EQ(processes.size(), 2u);
  const TriageProcess& web = processes[0].name == "box/web" ? processes[0] : processes[1];
  EXPECT_EQ(web.waits, 2u);
  EXPECT_EQ(web.untraced_waits, 1u);
  EXPECT_EQ(web.untraced_ns, 5 * kMs);
  EXPECT_EQ(web.states.total(), 8 * kMs);  // the old disk wait is outside the window
  EXPECT_EQ(view.Processes(false)[0].states.total(), 508 * kMs);  // 500 + 3 + 5
}

TEST_F(TriageViewTest, StateFilterAndMinWait) {
  TriageOptions options;
  options.states = 1u << static_cast<int>(Leaf::kDisk);
  options.min_wait_ns = 4 * kMs;
  TriageView view(accounting_, options);
  Resolve(view, web_, 100 * kMs, 9 * kMs, Leaf::kTimer);  // not disk
  Resolve(view, db_, 200 * kMs, 2 * kMs, Leaf::kDisk);    // too short
  Resolve(view, db_, 300 * kMs, 6 * kMs, Leaf::kDisk);
  const std::vector<TriageWait> shown = view.Slowest(10, true);
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].duration, 6 * kMs);
  EXPECT_EQ(view.waits_seen(), 3u);
}

TEST_F(TriageViewTest, KeepsOnlyTheSlowestPerSecond) {
  TriageOptions options;
  options.slowest_per_second = 3;
  TriageView view(accounting_, options);
  for (int i = 1; i <= 50; ++i) Resolve(view, web_, 100 * kMs + i * kMs, i * 1000, Leaf::kTimer);
  Resolve(view, db_, 160 * kMs, 1000, Leaf::kDisk);  // not among the 3 slowest of its second
  const std::vector<TriageWait> shown = view.Slowest(10, true);
  // The 3 kept are one thread waiting the same way: one row, the slowest, and how many.
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].duration, 50'000);
  EXPECT_EQ(shown[0].count, 3u);
}

// Repeats of one path (the same thread, state and place) are one row with their count; other
// paths keep their rows, slowest first and, on equal durations, in time order.
TEST_F(TriageViewTest, RepeatsFoldIntoOneRowAndTiesKeepTheirOrder) {
  TriageView view(accounting_, TriageOptions{});
  for (int i = 0; i < 5; ++i) Resolve(view, web_, (100 + 10 * i) * kMs, 3 * kMs, Leaf::kTimer);
  Resolve(view, db_, 300 * kMs, 3 * kMs, Leaf::kDisk);
  Resolve(view, db_, 200 * kMs, 3 * kMs, Leaf::kTimer);
  Resolve(view, web_, 400 * kMs, 2 * kMs, Leaf::kDisk);
  const std::vector<TriageWait> shown = view.Slowest(10, true);
  ASSERT_EQ(shown.size(), 4u);
  EXPECT_EQ(shown[0].who.rfind("box/web", 0), 0u);  // 3 ms, the first to end
  EXPECT_EQ(shown[0].end, 100 * kMs);
  EXPECT_EQ(shown[0].count, 5u);
  EXPECT_EQ(shown[1].end, 200 * kMs);  // 3 ms, db's timer wait
  EXPECT_EQ(shown[2].end, 300 * kMs);  // 3 ms, db's disk wait: another path
  EXPECT_EQ(shown[2].count, 1u);
  EXPECT_EQ(shown[3].duration, 2 * kMs);
}

// A server woken by a client's packet to its port was awaiting work: idle, counted apart and
// never among the slowest, however long the client thought.
TEST_F(TriageViewTest, AServerAwaitingARequestIsIdleNotSlow) {
  TriageView view(accounting_, TriageOptions{});
  WaitLink request{WaitLink::Type::kPacket, Leaf::kNetwork, web_, 50 * kMs};
  request.for_work = true;
  Resolve(view, db_, 2000 * kMs, 1900 * kMs, Leaf::kTimer, request);
  Resolve(view, web_, 2100 * kMs, 4 * kMs, Leaf::kDisk);
  const std::vector<TriageWait> shown = view.Slowest(10, true);
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0].duration, 4 * kMs);
  const std::vector<TriageProcess> processes = view.Processes(true);
  const auto db = std::find_if(processes.begin(), processes.end(),
                               [](const TriageProcess& p) { return p.name == "box/db"; });
  ASSERT_NE(db, processes.end());
  EXPECT_EQ(db->waits, 1u);
  EXPECT_EQ(db->for_work_waits, 1u);
  EXPECT_EQ(db->for_work_ns, 1900 * kMs);
  ScreenStatus status;
  const std::vector<std::string> lines = RenderTriage(view, status, 120, 40);
  int idle = 0;
  for (const std::string& line : lines)
    idle += line == "idle, not below: 1 waits of servers for a request";
  EXPECT_EQ(idle, 1);
}

// Which packets are a client's request to a server: from an ephemeral port to a lower one.
TEST(RequestToServerTest, FromAnEphemeralPortToAListeningOne) {
  PacketKey k;
  k.has_tcp = true;
  k.sport = 41000;
  k.dport = 5432;
  EXPECT_TRUE(RequestToServer(k));
  std::swap(k.sport, k.dport);  // the server's answer
  EXPECT_FALSE(RequestToServer(k));
  k.sport = 40000;
  k.dport = 41000;  // two ephemeral ports: the ports do not say
  EXPECT_FALSE(RequestToServer(k));
  k.sport = 41000;
  k.dport = 80;
  k.has_tcp = false;
  EXPECT_FALSE(RequestToServer(k));
}

// What a 120x40 terminal holds: every line fits, the sections are there, and the slowest
// wait comes first with its headline.
TEST_F(TriageViewTest, RendersAScreenThatFits) {
  TriageView view(accounting_, TriageOptions{});
  for (int i = 1; i <= 200; ++i)
    Resolve(view, i % 2 ? web_ : db_, i * 10 * kMs, i * 10'000, i % 3 ? Leaf::kDisk : Leaf::kTimer);
  ScreenStatus status;
  status.source = "relayd net://127.0.0.1:5344";
  status.filters = "min-wait 1ms";
  status.hosts = {HostHealth{"box", 1234.0, 0.4, 2, "reference", ""}};
  status.time_format.gmt = true;
  const std::vector<std::string> lines = RenderTriage(view, status, 120, 40, {"a message"});
  ASSERT_EQ(lines.size(), 40u);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 120u) << line;
  auto index_of = [&](std::string_view text) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(text) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_EQ(index_of("waitpath - relayd net://127.0.0.1:5344"), 0);
  EXPECT_GT(index_of("1.2k"), 0);
  EXPECT_GT(index_of("PROCESSES (last 10 s)"), 0);
  const int slowest = index_of("SLOWEST WAITS (last 10 s, min-wait 1ms)");
  ASSERT_GT(slowest, 0);
  // Every column named; the slowest first, its repeats counted.
  EXPECT_EQ(lines[slowest + 1].rfind("ENDED         HOST/PROCESS TID", 0), 0u)
      << lines[slowest + 1];
  EXPECT_NE(lines[slowest + 2].find("box/db"), std::string::npos) << lines[slowest + 2];
  EXPECT_NE(lines[slowest + 2].find("2.000 ms   x43"), std::string::npos) << lines[slowest + 2];
  EXPECT_NE(lines[slowest + 2].find("  disk 100% on box/db"), std::string::npos)
      << lines[slowest + 2];
  EXPECT_EQ(index_of("! a message"), 38);
  EXPECT_EQ(lines[39].rfind("q or Ctrl-C", 0), 0u);
  // The summary at the end is since the start and not cut to a height.
  status.final = true;
  const std::vector<std::string> summary = RenderTriage(view, status, 120, 0);
  EXPECT_NE(summary[4].find("since the start"), std::string::npos);
  EXPECT_EQ(summary.back().find("q or Ctrl-C"), std::string::npos);
}

// The relayd lost for 72 s: the view says its data is that old (title and every "last 10 s"),
// the host's state says since when, and LOST the outage's time, not "1" (one gap).
TEST_F(TriageViewTest, DataFromBeforeAnOutageIsSaidToBeOld) {
  TriageView view(accounting_, TriageOptions{});
  Resolve(view, web_, 100 * kMs, 10 * kMs, Leaf::kDisk);
  ScreenStatus status;
  status.source = "relayd net://127.0.0.1:5344";
  HostHealth box{"box", 0, 72.4, 3, "", "relayd lost for 1m12s"};
  box.outage_s = 72.4;
  box.gaps = 1;
  status.hosts = {box};
  std::vector<std::string> lines = RenderTriage(view, status, 120, 40);
  EXPECT_NE(lines[0].find(", data 1m12s old"), std::string::npos) << lines[0];
  EXPECT_NE(lines[2].find("3 +1m12s"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("relayd lost for 1m12s"), std::string::npos) << lines[2];
  int old_windows = 0;
  for (const std::string& line : lines)
    old_windows += line.find("(last 10 s, data 1m12s old)") != std::string::npos;
  EXPECT_EQ(old_windows, 2);  // processes, slowest waits
  // Fresh data again: no note; a gap of unknown size without an outage is counted as one.
  box.lag_s = 0.3;
  box.outage_s = 0;
  box.state = "";
  status.hosts = {box};
  lines = RenderTriage(view, status, 120, 40);
  EXPECT_EQ(lines[0].find("old"), std::string::npos) << lines[0];
  EXPECT_NE(lines[2].find("3 +1gap"), std::string::npos) << lines[2];
  EXPECT_EQ(FormatAge(4.4), "4s");
  EXPECT_EQ(FormatAge(3725), "1h02m");
}

// A task the trace never named (a user-space-only session's threads): `(no name)` in the view,
// never `box/` or `box/ 30`.
TEST_F(TriageViewTest, AnUnnamedTaskIsShownAsSuch) {
  Batch batch;
  batch.counters.dialect = kDialectHasWaking | kDialectHasSwitch;
  batch.events = {SwitchEvent(1, 2, 0, 30, 0, -1, -1)};
  engine_.Push(batch);
  const Utid unnamed = engine_.tasks().Find(0, 30);
  ASSERT_NE(unnamed, kNoTask);
  TriageView view(accounting_, TriageOptions{});
  Resolve(view, unnamed, 100 * kMs, 10 * kMs, Leaf::kTimer);
  ScreenStatus status;
  const std::vector<std::string> lines = RenderTriage(view, status, 120, 40);
  int rows = 0, waits = 0;
  for (const std::string& line : lines) {
    rows += line.rfind("box/(no name) ", 0) == 0;
    waits += line.find("box/(no name) 30") != std::string::npos;
    EXPECT_EQ(line.find("box/ "), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(waits, 1);
}

// A span of `task` named `name` over [end - length, end), all of it `leaf` in `where`'s path.
ResolvedSpan Span(Utid task, Utid where, const char* name, uint64_t parent, int64_t end,
                  int64_t length, Leaf leaf, std::vector<PathSegment>* path) {
  ResolvedSpan s;
  s.span.span_id = 0x100 + static_cast<uint64_t>(end);
  s.span.ids.parent = parent;
  s.span.name = StringTable::Global().Intern(name);
  s.task = s.end_task = task;
  s.start = end - length;
  s.end = end;
  s.breakdown[leaf] = length;
  *path = {{where, leaf, end - length, end, 0}};
  s.path = *path;
  return s;
}

TEST_F(TriageViewTest, SlowestRequestsAreRootSpansWithTheirHeadline) {
  TriageView view(accounting_, TriageOptions{});
  std::vector<PathSegment> path;
  view.OnSpan(Span(web_, db_, "checkout", 0, 100 * kMs, 9 * kMs, Leaf::kDisk, &path));
  view.OnSpan(Span(web_, web_, "checkout", 0, 200 * kMs, 4 * kMs, Leaf::kRunning, &path));
  // A child span is part of its request: not listed.
  view.OnSpan(Span(db_, db_, "query", 0x101, 99 * kMs, 50 * kMs, Leaf::kDisk, &path));
  EXPECT_EQ(view.requests_seen(), 2u);
  const std::vector<TriageRequest> slow = view.SlowestRequests(10, true);
  ASSERT_EQ(slow.size(), 2u);
  EXPECT_EQ(slow[0].duration, 9 * kMs);
  EXPECT_EQ(slow[0].operation, "box:checkout");
  EXPECT_EQ(slow[0].headline, "disk 100% on box/db");
  EXPECT_EQ(slow[1].headline, "running 100% on box/web");

  ScreenStatus status;
  status.source = "test";
  status.time_format.gmt = true;
  const std::vector<std::string> lines = RenderTriage(view, status, 120, 40);
  ASSERT_EQ(lines.size(), 40u);
  int title = -1;
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), 120u) << lines[i];
    if (lines[i].rfind("SLOWEST REQUESTS (last 10 s)", 0) == 0) title = static_cast<int>(i);
  }
  // Above the processes: the request headline is the line most worth acting on.
  int processes = -1;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("PROCESSES", 0) == 0) processes = static_cast<int>(i);
  EXPECT_LT(title, processes);
  EXPECT_NE(lines[title + 2].find("box:checkout"), std::string::npos) << lines[title + 2];
  EXPECT_NE(lines[title + 2].find("9.000 ms  disk 100% on box/db"), std::string::npos)
      << lines[title + 2];
}

TEST_F(TriageViewTest, NoRequestSectionWithoutSpans) {
  TriageView view(accounting_, TriageOptions{});
  Resolve(view, web_, 100 * kMs, 3 * kMs, Leaf::kDisk);
  for (const std::string& line : RenderTriage(view, ScreenStatus{}, 120, 40))
    EXPECT_EQ(line.find("SLOWEST REQUESTS"), std::string::npos) << line;
}

}  // namespace
}  // namespace waitpath
