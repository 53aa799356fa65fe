// The pipeline over real recorded traces (the repository's LTTng and perf fixtures, and the
// shared two-host scp traces when present): every event delivered once, in order, the same
// whatever the policy's path (kept batches or a second read, a slow host, the live policy).
#include "stream/pipeline.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/gen/scenario.h"
#include "tools/gen/trace_generator.h"

namespace waitpath {
namespace {

struct Seen {
  uint16_t host;
  int64_t ts;
  EventKind kind;
  uint16_t cpu;
  int32_t cur_tid;
  bool operator==(const Seen&) const = default;
};

// Records what the pipeline delivers, and checks its promises as they happen.
class RecordingSink : public PipelineSink {
 public:
  void OnClocks(const std::vector<HostClock>& clocks) override {
    if (clock_calls++ == 0) events_at_first_clocks = events.size();
    clocks_before_first_event = events.empty();
    last_clocks = clocks;
  }
  void OnEvent(const Event& e, const Batch& from) override {
    events.push_back({from.host, e.ts, e.kind, e.cpu, e.cur_tid});
    open_batches[&from] = true;
  }
  void OnBatchDone(const Batch& batch) override {
    ++batches_done;
    done_events += batch.events.size();
    open_batches.erase(&batch);
  }
  void OnHostEnded(uint16_t host, const Batch& last) override {
    ended.push_back(host);
    EXPECT_TRUE(last.last);
  }

  std::vector<Seen> events;
  std::map<const Batch*, bool> open_batches;
  std::vector<HostClock> last_clocks;
  std::vector<uint16_t> ended;
  int clock_calls = 0;
  size_t events_at_first_clocks = 0;
  bool clocks_before_first_event = false;
  size_t batches_done = 0;
  size_t done_events = 0;
};

std::string Fixture(const std::string& name) {
  return std::string(WAITPATH_FIXTURES) + "/" + name;
}

std::vector<HostSpec> Hosts(const std::vector<std::string>& paths) {
  std::vector<HostSpec> hosts;
  std::string error;
  EXPECT_TRUE(DiscoverHosts(paths, &hosts, &error)) << error;
  return hosts;
}

// Two hosts that exchanged packets, `first` the first by name: the recorded two-guest LTTng
// fixture lttng/overlay (vm-client, vm-server; always) and scp_src / scp_dest (VM1, VM3; the
// research traces, when ../shared/traces is present).
struct HostPair {
  std::vector<std::string> paths;
  std::string first;
};

std::vector<HostPair> HostPairs() {
  std::vector<HostPair> pairs = {
      {{Fixture("lttng/overlay/vm-client"), Fixture("lttng/overlay/vm-server")}, "vm-client"}};
  const std::string shared = WAITPATH_SHARED_TRACES;
  if (std::filesystem::exists(shared + "/scp_src"))
    pairs.push_back({{shared + "/scp_src", shared + "/scp_dest"}, "VM1"});
  return pairs;
}

uint64_t DecodedEvents(const std::vector<HostStats>& stats) {
  uint64_t n = 0;
  for (const HostStats& s : stats) {
    for (const auto& [cpu, count] : s.events_by_cpu) n += count;
  }
  return n;
}

RecordingSink RunWith(const std::vector<HostSpec>& hosts, PipelineOptions options,
                      std::vector<HostStats>* stats = nullptr) {
  RecordingSink sink;
  Pipeline pipeline(std::move(options), &sink);
  for (const HostSpec& h : hosts) pipeline.AddSource(h);
  std::string error;
  EXPECT_TRUE(pipeline.Run(&error)) << error;
  if (stats) *stats = pipeline.stats();
  return sink;
}

void ExpectOrdered(const std::vector<Seen>& events) {
  for (size_t i = 1; i < events.size(); ++i) {
    ASSERT_LE(events[i - 1].ts, events[i].ts) << "event " << i;
  }
}

TEST(Pipeline, IdentityDeliversEveryEventOnceInOrder) {
  std::vector<HostStats> stats;
  const RecordingSink sink = RunWith(Hosts({Fixture("lttng/rpc")}), PipelineOptions{}, &stats);
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_TRUE(stats[0].ended);
  EXPECT_GT(sink.events.size(), 1000u);
  EXPECT_EQ(sink.events.size(), DecodedEvents(stats));
  EXPECT_EQ(sink.done_events, sink.events.size());  // every batch done once, after its events
  EXPECT_TRUE(sink.open_batches.empty());
  EXPECT_EQ(sink.clock_calls, 0);  // one host: its own clock, no sync
  EXPECT_EQ(sink.ended, std::vector<uint16_t>{0});
  ExpectOrdered(sink.events);
}

TEST(Pipeline, ReadAllCountsWhatRunDelivers) {
  const std::vector<HostSpec> hosts = Hosts({Fixture("perf/rpc")});
  std::vector<HostStats> run_stats;
  const RecordingSink sink = RunWith(hosts, PipelineOptions{}, &run_stats);
  Pipeline counting(PipelineOptions{}, nullptr);
  counting.AddSource(hosts[0]);
  std::string error;
  ASSERT_TRUE(counting.ReadAll(&error));
  EXPECT_EQ(DecodedEvents(counting.stats()), sink.events.size());
  EXPECT_EQ(counting.stats()[0].by_kind, run_stats[0].by_kind);
  EXPECT_EQ(counting.sync(), nullptr);  // kIdentity: no clock sync
}

TEST(Pipeline, UnrelatedHostsMergeInTimeWithoutSync) {
  // Two hosts that exchanged nothing: the sync has nothing to say, the merger still orders.
  PipelineOptions options;
  options.policy = SyncPolicy::kPrePass;
  std::vector<HostStats> stats;
  const RecordingSink sink =
      RunWith(Hosts({Fixture("lttng/rpc"), Fixture("lttng/mutex")}), options, &stats);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(sink.clock_calls, 1);
  EXPECT_TRUE(sink.clocks_before_first_event);
  EXPECT_EQ(sink.events.size(), DecodedEvents(stats));
  ExpectOrdered(sink.events);
  size_t from_second = 0;
  for (const Seen& s : sink.events) from_second += s.host == 1;
  EXPECT_GT(from_second, 0u);
  EXPECT_LT(from_second, sink.events.size());
}

TEST(Pipeline, PrePassSynchronizesThenMergesTheSameFromMemoryOrASecondRead) {
  for (const HostPair& pair : HostPairs()) {
    SCOPED_TRACE(pair.first);
    const auto PairHosts = [&] { return Hosts(pair.paths); };
    PipelineOptions kept;
    kept.policy = SyncPolicy::kPrePass;
    std::vector<HostStats> kept_stats;
    const RecordingSink from_memory = RunWith(PairHosts(), kept, &kept_stats);
    PipelineOptions reread = kept;
    reread.keep_decoded_bytes = 0;
    std::vector<HostStats> reread_stats;
    const RecordingSink from_disk = RunWith(PairHosts(), reread, &reread_stats);

    ASSERT_EQ(from_memory.clock_calls, 1);
    EXPECT_TRUE(from_memory.clocks_before_first_event);
    ASSERT_EQ(from_memory.last_clocks.size(), 2u);
    EXPECT_EQ(from_memory.last_clocks[1].quality, SyncQuality::kAccurate);
    ExpectOrdered(from_memory.events);
    EXPECT_EQ(from_memory.events.size(), DecodedEvents(kept_stats));
    EXPECT_TRUE(from_memory.events == from_disk.events);
    EXPECT_EQ(DecodedEvents(kept_stats), DecodedEvents(reread_stats));  // counted once each way
  }
}

TEST(Pipeline, ASlowHostChangesNothing) {
  for (const HostPair& pair : HostPairs()) {
    SCOPED_TRACE(pair.first);
    const auto PairHosts = [&] { return Hosts(pair.paths); };
    PipelineOptions options;
    options.policy = SyncPolicy::kPrePass;
    const RecordingSink normal = RunWith(PairHosts(), options);
    setenv("WAITPATH_TEST_SLOW_HOST", (pair.first + ":1").c_str(), 1);
    const RecordingSink slow = RunWith(PairHosts(), options);
    unsetenv("WAITPATH_TEST_SLOW_HOST");
    EXPECT_TRUE(normal.events == slow.events);
  }
}

// The hosts seen, each one's events in time order (0 when one is not).
size_t HostsInOrder(const std::vector<Seen>& events) {
  std::map<uint16_t, int64_t> last;
  for (const Seen& s : events) {
    auto [it, inserted] = last.try_emplace(s.host, s.ts);
    if (it->second > s.ts) return 0;
    it->second = s.ts;
  }
  return last.size();
}

// One read: every event once, per host in order; the transforms set before the first event
// and again, final, at the end; the same events in the same order from run to run, with a
// slow host, and whether the hold or the byte budget decides what goes.
TEST(Pipeline, OnePassDeliversEverythingOnceTheSameEachRun) {
  for (const HostPair& pair : HostPairs()) {
    SCOPED_TRACE(pair.first);
    const auto PairHosts = [&] { return Hosts(pair.paths); };
    PipelineOptions options;
    options.policy = SyncPolicy::kOnePass;
    std::vector<HostStats> stats;
    const RecordingSink sink = RunWith(PairHosts(), options, &stats);
    EXPECT_EQ(sink.clock_calls, 2);
    EXPECT_EQ(sink.events_at_first_clocks, 0u);
    ASSERT_EQ(sink.last_clocks.size(), 2u);
    EXPECT_EQ(sink.last_clocks[1].quality, SyncQuality::kAccurate);
    EXPECT_EQ(sink.events.size(), DecodedEvents(stats));
    EXPECT_TRUE(sink.open_batches.empty());
    EXPECT_EQ(HostsInOrder(sink.events), 2u);
    EXPECT_TRUE(RunWith(PairHosts(), options).events == sink.events);
    setenv("WAITPATH_TEST_SLOW_HOST", (pair.first + ":1").c_str(), 1);
    EXPECT_TRUE(RunWith(PairHosts(), options).events == sink.events);
    unsetenv("WAITPATH_TEST_SLOW_HOST");

    for (const auto& [hold_ns, budget] : {std::pair<int64_t, size_t>{100'000'000, 512u << 20},
                                          std::pair<int64_t, size_t>{2'000'000'000, 64u << 10}}) {
      SCOPED_TRACE(hold_ns);
      PipelineOptions early = options;
      early.hold_ns = hold_ns;
      early.keep_decoded_bytes = budget;
      std::vector<HostStats> early_stats;
      const RecordingSink first = RunWith(PairHosts(), early, &early_stats);
      EXPECT_EQ(first.events.size(), DecodedEvents(early_stats));
      EXPECT_TRUE(RunWith(PairHosts(), early).events == first.events);
    }
  }
}

TEST(Pipeline, BootstrapPolicyOverRecordedTracesDeliversEverything) {
  for (const HostPair& pair : HostPairs()) {
    SCOPED_TRACE(pair.first);
    const auto PairHosts = [&] { return Hosts(pair.paths); };
    PipelineOptions options;
    options.policy = SyncPolicy::kBootstrap;
    std::vector<HostStats> stats;
    const RecordingSink sink = RunWith(PairHosts(), options, &stats);
    EXPECT_GE(sink.clock_calls, 1);
    EXPECT_TRUE(sink.clocks_before_first_event);  // nothing before the bootstrap ends
    EXPECT_EQ(sink.events.size(), DecodedEvents(stats));
    EXPECT_TRUE(sink.open_batches.empty());
    // Transforms may improve as packets arrive: time is monotonic per host, not across.
    EXPECT_EQ(HostsInOrder(sink.events), 2u);
  }
}

// Live, the relayd lists sessions in any order: the reference is the first host by name.
TEST(Pipeline, BootstrapReferenceIsTheFirstHostByName) {
  for (const HostPair& pair : HostPairs()) {
    SCOPED_TRACE(pair.first);
    const auto PairHosts = [&] { return Hosts(pair.paths); };
    PipelineOptions options;
    options.policy = SyncPolicy::kBootstrap;
    std::vector<HostSpec> hosts = PairHosts();
    std::swap(hosts[0], hosts[1]);  // the second by name first
    const RecordingSink sink = RunWith(hosts, options);
    ASSERT_FALSE(sink.last_clocks.empty());
    for (const HostClock& c : sink.last_clocks) EXPECT_EQ(c.reference, pair.first);
  }
}

// Live, a recreated session reads the same host again with a new reader whose own counters
// start from zero. Downstream, a batch's counters are the host's across both readers: they
// never fall, and end at both readers' sum. (waitpath_events_total follows them: when the new
// reader's first batch held as many events as the old reader had read in all, it counted none.)
TEST(Pipeline, AReopenedSourceCountsOnFromWhereItsLastReaderEnded) {
  struct CountingSink : RecordingSink {
    void OnBatchDone(const Batch& batch) override {
      RecordingSink::OnBatchDone(batch);
      counted.push_back(batch.counters.events);
    }
    std::vector<uint64_t> counted;
  };
  PipelineOptions options;
  options.policy = SyncPolicy::kBootstrap;
  options.bootstrap_limit = std::chrono::milliseconds(0);
  CountingSink sink;
  Pipeline pipeline(options, &sink);
  pipeline.AddSource(Hosts({Fixture("lttng/rpc")})[0]);
  auto pump_until_ended = [&](size_t times) {
    for (int i = 0; i < 100'000 && sink.ended.size() < times; ++i) pipeline.Pump(1000);
    ASSERT_EQ(sink.ended.size(), times);
  };
  pump_until_ended(1);
  const uint64_t once = pipeline.stats()[0].reader.events;
  ASSERT_GT(once, 1000u);
  ASSERT_TRUE(pipeline.ReopenSource(0));
  pump_until_ended(2);
  pipeline.Drain();
  ASSERT_FALSE(sink.counted.empty());
  for (size_t i = 1; i < sink.counted.size(); ++i) ASSERT_LE(sink.counted[i - 1], sink.counted[i]);
  EXPECT_EQ(sink.counted.back(), 2 * once);
  EXPECT_EQ(pipeline.stats()[0].reader.events, 2 * once);
}

// Live, `live --all` attached while one session existed, the others appearing later: the first
// host's packets wait for the hosts that come (its clock sync kept nothing: with nobody else to
// be behind, every packet expired at once, and the hosts that came later, whose first exchanges
// were with it, synchronized only from exchanges after they appeared, if any).
TEST(Pipeline, AHostAloneKeepsItsPacketsForTheHostsThatComeLater) {
  struct ClockSink : PipelineSink {
    void OnClocks(const std::vector<HostClock>& clocks) override {
      auto known = [&](size_t h) {
        return h < clocks.size() && (clocks[h].quality == SyncQuality::kAccurate ||
                                     clocks[h].quality == SyncQuality::kApproximate);
      };
      late_known = known(1) && known(2);
    }
    void OnEvent(const Event&, const Batch& from) override { ++events[from.host]; }
    void OnHostEnded(uint16_t host, const Batch&) override { ended.insert(host); }
    bool late_known = false;
    std::map<uint16_t, size_t> events;
    std::set<uint16_t> ended;
  };
  // Three hosts calling each other, their clocks seconds apart (the generator's three-tier
  // scenario): the client first, alone; the web server and the database later.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("waitpath-late-hosts-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  gen::TraceGenerator::Generate(
      gen::ScenarioLoader::Load(std::string(WAITPATH_GEN_SCENARIOS) + "/three-tier.toml", {},
                                nullptr),
      dir.string());
  const std::vector<HostSpec> hosts = Hosts({dir.string()});  // client, db, web
  ASSERT_EQ(hosts.size(), 3u);
  PipelineOptions options;
  options.policy = SyncPolicy::kBootstrap;
  ClockSink sink;
  Pipeline pipeline(options, &sink);
  pipeline.AddSource(hosts[0]);
  for (int i = 0; i < 100'000 && sink.events[0] == 0; ++i) pipeline.Pump(1000);
  ASSERT_GT(sink.events[0], 0u);  // one host: its bootstrap ended at once
  pipeline.AddSource(hosts[1]);
  pipeline.AddSource(hosts[2]);
  for (int i = 0; i < 100'000 && sink.ended.size() < 3; ++i) pipeline.Pump(1000);
  pipeline.Drain();
  std::filesystem::remove_all(dir);
  EXPECT_GT(sink.events[1], 0u);
  EXPECT_GT(sink.events[2], 0u);
  EXPECT_TRUE(sink.late_known);  // the web server and the database: synchronized
}

TEST(Pipeline, UnknownReferenceIsAnError) {
  PipelineOptions options;
  options.policy = SyncPolicy::kPrePass;
  options.reference = "nosuchhost";
  RecordingSink sink;
  Pipeline pipeline(options, &sink);
  for (const HostSpec& h : Hosts({Fixture("lttng/rpc"), Fixture("lttng/mutex")}))
    pipeline.AddSource(h);
  std::string error;
  EXPECT_FALSE(pipeline.Run(&error));
  EXPECT_EQ(error, "--reference nosuchhost: no such host in the traces");
  EXPECT_TRUE(sink.events.empty());
}

}  // namespace
}  // namespace waitpath
