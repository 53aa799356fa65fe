// Two shards, east and west, each with its own engine, over an in-memory bus (fleet/
// memory_bus.h): a host of east sends to a host of west; west matches the receive with east's
// edge (waiting for it until east's progress has passed the receive, or east stalls), and asks
// east for the sender's cumulative vector.
#include "fleet/shard_peers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "fleet/memory_bus.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

constexpr uint32_t kEastAddr = 0x0a000001;  // 10.0.0.1: east's host
constexpr uint32_t kWestAddr = 0x0a000002;  // 10.0.0.2: west's host
constexpr int32_t kSender = 10;             // east's task that sends
constexpr int64_t kRunnable = 0;            // prev_state
constexpr int64_t kEastDone = 10'000'000;   // east's progress after RunEastsSender

PacketKey Key(uint32_t from, uint32_t to, uint32_t seq) {
  PacketKey k;
  k.saddr = from;
  k.daddr = to;
  k.sport = 40000;
  k.dport = 80;
  k.seq = seq;
  k.has_addresses = k.has_tcp = true;
  return k;
}

// One shard: its engine, the names of its hosts, its peers on the broker.
struct Shard {
  Shard(MemoryBroker& broker, const std::string& name, const std::string& host, int64_t wait_ms,
        size_t max_edges = 1u << 20, int64_t stall_ms = 300)
      : bus(broker),
        hosts{host},
        peers(ShardOptions{name, host, wait_ms, max_edges, 30, 150, stall_ms}, bus, engine, hosts,
              [this](uint16_t id, const std::string& n) { remote_names[id] = n; }) {}

  ShardCounters counters() const { return peers.counters(); }

  MemoryBus bus;
  Engine engine;
  std::vector<std::string> hosts;
  std::map<uint16_t, std::string> remote_names;
  ShardPeers peers;
};

class ShardPeersTest : public ::testing::Test {
 protected:
  // East's sender runs [0, 400), is preempted [400, 700) and runs again from 700 on until
  // 1200; east has processed its host up to 10 ms.
  void RunEastsSender() {
    const int32_t comm = static_cast<int32_t>(StringTable::Global().Intern("sender"));
    Batch batch;
    batch.host = 0;
    batch.events = {SwitchEvent(0, 0, 0, kSender, kRunnable, -1, comm),
                    SwitchEvent(400, 0, kSender, 11, kRunnable, comm),
                    SwitchEvent(700, 0, 11, kSender, kRunnable, -1, comm),
                    SwitchEvent(1200, 0, kSender, 11, kRunnable, comm),
                    SwitchEvent(kEastDone, 0, 11, 12, kRunnable)};
    east.engine.Push(batch);
    sender = east.engine.tasks().Find(0, kSender);
    ASSERT_NE(sender, kNoTask);
  }
  // East's sender sends `key` at `ts` (east's clock) to an address east does not own.
  void EastSends(const PacketKey& key, int64_t ts) {
    ASSERT_TRUE(east.peers.Remote(key));
    east.peers.OnSend(0, ts, key, sender, east.engine.Cumulative(sender, ts));
  }
  // East's engine thread, answering queries, until the test ends.
  void AnswerFromEast() {
    east_thread = std::thread([this] {
      while (!stop) {
        east.peers.Poll();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  void TearDown() override {
    stop = true;
    if (east_thread.joinable()) east_thread.join();
  }

  static int64_t MsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  }

  MemoryBroker broker;
  Shard east{broker, "east", "east-host", 300};
  Shard west{broker, "west", "west-host", 300};
  Utid sender = kNoTask;
  std::atomic<bool> stop{false};
  std::thread east_thread;
};

TEST_F(ShardPeersTest, AReceiveIsMatchedWithTheSendersEdge) {
  RunEastsSender();
  const PacketKey key = Key(kEastAddr, kWestAddr, 1);
  EastSends(key, 1000);
  // West learns its address at the receive: the edge published before is still delivered.
  const std::optional<RemoteSend> send = west.peers.OnReceive(0, 1000, key);
  ASSERT_TRUE(send);
  EXPECT_EQ(send->ts, 1000);  // the first match sets the one-way clock: no delay
  const Task& t = west.engine.tasks()[send->sender];
  EXPECT_TRUE(t.remote);
  EXPECT_EQ(t.tid, kSender);
  EXPECT_EQ(t.host, ShardPeers::kRemoteHostBase);
  EXPECT_EQ(StringTable::Global().Get(t.comm), "sender");
  EXPECT_EQ(west.remote_names[ShardPeers::kRemoteHostBase], "east-host");
  EXPECT_EQ(east.counters().edges_published, 1u);
  EXPECT_EQ(west.counters().edges_received, 1u);
  EXPECT_EQ(west.counters().edges_matched, 1u);
  EXPECT_EQ(west.counters().one_way_clock, 1u);
  // The match is a clock sample for east, published to it.
  EXPECT_EQ(west.counters().samples_published, 1u);
  EXPECT_EQ(east.counters().samples_received, 1u);
}

TEST_F(ShardPeersTest, OwnAddressesAreNeitherPublishedNorAwaited) {
  RunEastsSender();
  // A send between two addresses of east's hosts stays in east's own matcher.
  ASSERT_TRUE(east.peers.Remote(Key(kEastAddr, kWestAddr, 1)));
  EXPECT_FALSE(east.peers.Remote(Key(kEastAddr, kEastAddr, 2)));
  // A receive from one of its own addresses: its send was not traced; no waiting.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(east.peers.OnReceive(0, 2000, Key(kEastAddr, kEastAddr, 3)));
  EXPECT_LT(MsSince(start), 100);
  EXPECT_EQ(east.counters().receives_unmatched, 0u);
}

TEST_F(ShardPeersTest, AReceiveWaitsForAnEdgeOnItsWay) {
  RunEastsSender();
  const PacketKey key = Key(kEastAddr, kWestAddr, 1);
  ASSERT_TRUE(west.peers.Remote(Key(kWestAddr, kEastAddr, 9)));  // west learns its address
  // The relayd has east's host, whose shard has said nothing yet (a late attacher): waited for.
  EXPECT_FALSE(west.peers.Claim("east-host"));
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EastSends(key, 1000);
  });
  const auto start = std::chrono::steady_clock::now();
  const std::optional<RemoteSend> send = west.peers.OnReceive(0, 1000, key);
  late.join();
  EXPECT_TRUE(send);
  EXPECT_GE(MsSince(start), 90);
  EXPECT_EQ(west.counters().edges_matched, 1u);
}

// The watermark's release logic: a receive from east waits until its edge arrives or east's
// published progress has gone past it (then the edge does not exist), whatever the wall clock.
TEST_F(ShardPeersTest, AReceiveIsReleasedWhenTheSendersProgressPassesIt) {
  RunEastsSender();
  EastSends(Key(kEastAddr, kWestAddr, 1), 1000);
  ASSERT_TRUE(west.peers.OnReceive(0, 1000, Key(kEastAddr, kWestAddr, 1)));  // one-way clock
  // East at 10 ms: past a receive at 2 ms (in west's clock), whose edge never came.
  east.peers.PublishProgress();
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(west.peers.OnReceive(0, 2'000'000, Key(kEastAddr, kWestAddr, 2)));
  EXPECT_LT(MsSince(start), 100);
  EXPECT_EQ(west.counters().receives_unmatched, 1u);
  EXPECT_EQ(west.counters().receives_progressed, 1u);
  // A receive at 20 ms: east has not got there; it waits, for as long as east advances (past
  // the wait_ms of 300), until east's progress passes it.
  std::thread advance([&] {
    for (int64_t t = 11; t <= 22; ++t) {  // 12 steps of 1 ms (east's clock), every 50 ms
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      Batch b;
      b.host = 0;
      b.events = {SwitchEvent(t * 1'000'000, 0, 12, 11, kRunnable)};
      east.engine.Push(b);
      east.peers.PublishProgress();
    }
  });
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(west.peers.OnReceive(0, 20'000'000, Key(kEastAddr, kWestAddr, 3)));
  const int64_t waited = MsSince(start);
  advance.join();
  EXPECT_GE(waited, 500);  // east passed 21 ms (20 + the 1 ms margin) at its 11th step
  EXPECT_EQ(west.counters().receives_progressed, 2u);
  EXPECT_EQ(west.counters().peers_stalled, 0u);
  // An edge on its way when the progress that passed it came (the bus does not order the two):
  // not released until it has arrived.
  EastSends(Key(kEastAddr, kWestAddr, 4), 23'000'000);
  ProgressRecord ahead{"east", {{"east-host", 40'000'000, {kEastAddr}}}, {{kWestAddr, 24'000'000}}};
  const std::string bytes = EncodeProgress(ahead);
  MemoryBus other(broker);
  other.Publish("waitpath.edge.progress.east", bytes.data(), bytes.size());
  std::thread edge([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EastSends(Key(kEastAddr, kWestAddr, 5), 24'000'000);
  });
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(west.peers.OnReceive(0, 24'000'000, Key(kEastAddr, kWestAddr, 5)));
  edge.join();
  EXPECT_GE(MsSince(start), 90);
}

TEST_F(ShardPeersTest, AShardWhoseProgressStopsIsStalledAndItsReceivesUnknown) {
  RunEastsSender();
  EastSends(Key(kEastAddr, kWestAddr, 1), 1000);
  east.peers.PublishProgress();
  ASSERT_TRUE(west.peers.OnReceive(0, 1000, Key(kEastAddr, kWestAddr, 1)));
  // East stops at 10 ms: a receive at 50 ms waits the stall bound (300 ms), then is unknown.
  auto start = std::chrono::steady_clock::now();
  std::optional<RemoteSend> r = west.peers.OnReceive(0, 50'000'000, Key(kEastAddr, kWestAddr, 2));
  EXPECT_GE(MsSince(start), 290);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->unknown);
  EXPECT_EQ(r->sender, kNoTask);
  EXPECT_EQ(west.counters().peers_stalled, 1u);
  EXPECT_EQ(west.counters().receives_stalled, 1u);
  EXPECT_EQ(west.counters().receives_unmatched, 0u);
  // The next receive from it does not wait: unknown at once.
  start = std::chrono::steady_clock::now();
  r = west.peers.OnReceive(0, 60'000'000, Key(kEastAddr, kWestAddr, 3));
  EXPECT_LT(MsSince(start), 100);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->unknown);
  EXPECT_EQ(west.counters().receives_stalled, 2u);
  // Until it advances again: then its edges are matched as before.
  Batch b;
  b.host = 0;
  b.events = {SwitchEvent(70'000'000, 0, 12, 11, kRunnable)};
  east.engine.Push(b);
  EastSends(Key(kEastAddr, kWestAddr, 4), 65'000'000);
  east.peers.PublishProgress();
  r = west.peers.OnReceive(0, 65'000'000, Key(kEastAddr, kWestAddr, 4));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->unknown);
  EXPECT_EQ(west.counters().peers_stalled, 1u);
  // A host of the relayd whose shard never says anything is stalled the same way, once.
  EXPECT_FALSE(west.peers.Claim("north-host"));
  start = std::chrono::steady_clock::now();
  r = west.peers.OnReceive(0, 66'000'000, Key(0x0a000009, kWestAddr, 5));
  EXPECT_GE(MsSince(start), 290);
  EXPECT_EQ(west.counters().peers_stalled, 2u);
  // Its sender may be that host: unknown, not network.
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->unknown);
}

TEST_F(ShardPeersTest, NothingWaitsWhileTheBusIsDown) {
  RunEastsSender();
  EastSends(Key(kEastAddr, kWestAddr, 1), 1000);
  ASSERT_TRUE(west.peers.OnReceive(0, 1000, Key(kEastAddr, kWestAddr, 1)));
  broker.SetDown(true);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(west.peers.OnReceive(0, 2000, Key(kEastAddr, kWestAddr, 2)));
  EXPECT_LT(MsSince(start), 100);
  EXPECT_EQ(west.counters().receives_unmatched, 1u);
  // Not given up on: once the bus is back, its next receive waits for east's progress again.
  broker.SetDown(false);
  east.peers.PublishProgress();
  std::thread edge([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EastSends(Key(kEastAddr, kWestAddr, 3), 30'000'000);
  });
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(west.peers.OnReceive(0, 30'000'000, Key(kEastAddr, kWestAddr, 3)));
  edge.join();
  EXPECT_GE(MsSince(start), 90);
}

TEST_F(ShardPeersTest, TheNewestOfAKeyPendingTwiceIsTakenAtTheFirstMatch) {
  RunEastsSender();
  const PacketKey key = Key(kEastAddr, kWestAddr, 1);
  EastSends(key, 500);   // a flow replayed: the same key,
  EastSends(key, 1000);  // the second time
  const std::optional<RemoteSend> send = west.peers.OnReceive(0, 1000, key);
  ASSERT_TRUE(send);
  EXPECT_EQ(send->ts, 1000);
  EXPECT_EQ(west.counters().edges_stale, 1u);
}

TEST_F(ShardPeersTest, AnEdgeSentAfterItsReceiveIsAnotherPackets) {
  RunEastsSender();
  EastSends(Key(kEastAddr, kWestAddr, 1), 1000);
  ASSERT_TRUE(west.peers.OnReceive(0, 1000, Key(kEastAddr, kWestAddr, 1)));
  // The same key as a later receive's, but sent 5 ms after it (one-way clock: no delay).
  EastSends(Key(kEastAddr, kWestAddr, 2), 5'001'100);
  east.peers.PublishProgress();  // east past it: the receive does not wait for another edge
  EXPECT_FALSE(west.peers.OnReceive(0, 1100, Key(kEastAddr, kWestAddr, 2)));
  EXPECT_EQ(west.counters().edges_stale, 1u);
}

TEST_F(ShardPeersTest, TheSendersBreakdownComesFromItsShard) {
  RunEastsSender();
  const PacketKey key = Key(kEastAddr, kWestAddr, 1);
  EastSends(key, 1000);
  const std::optional<RemoteSend> send = west.peers.OnReceive(0, 1000, key);
  ASSERT_TRUE(send);
  AnswerFromEast();
  // West's task waited from 200: the sender's path over [200, 1000), as east has it.
  const std::optional<StateVec> part = west.peers.RemoteBreakdown(*send, 200);
  ASSERT_TRUE(part);
  EXPECT_EQ((*part)[Leaf::kRunning], 500);
  EXPECT_EQ((*part)[Leaf::kPreempted], 300);
  EXPECT_EQ(part->total(), 800);
  // Nothing to ask for a wait that starts at the send.
  const std::optional<StateVec> none = west.peers.RemoteBreakdown(*send, 1000);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->total(), 0);
  stop = true;
  east_thread.join();
  EXPECT_EQ(east.counters().queries_answered, 1u);
}

TEST_F(ShardPeersTest, AQueryBeforeTheSendersHistoryIsUnknown) {
  RunEastsSender();
  const PacketKey key = Key(kEastAddr, kWestAddr, 1);
  EastSends(key, 1000);
  const std::optional<RemoteSend> send = west.peers.OnReceive(0, 1000, key);
  ASSERT_TRUE(send);
  AnswerFromEast();
  // Before the sender's first event east knows nothing of it: the wait stays network.
  EXPECT_FALSE(west.peers.RemoteBreakdown(*send, -500));
  stop = true;
  east_thread.join();
  EXPECT_EQ(east.counters().queries_unknown, 1u);
}

TEST_F(ShardPeersTest, EdgesOverTheCapExpire) {
  Shard capped(broker, "north", "north-host", 300, /*max_edges=*/1);
  RunEastsSender();
  const uint32_t north_addr = 0x0a000003;
  ASSERT_TRUE(capped.peers.Remote(Key(north_addr, kEastAddr, 1)));  // north's address
  EastSends(Key(kEastAddr, north_addr, 2), 1000);
  EastSends(Key(kEastAddr, north_addr, 3), 1100);
  capped.peers.Poll();
  EXPECT_EQ(capped.counters().edges_received, 2u);
  EXPECT_EQ(capped.counters().edges_expired, 1u);
  // The oldest went: the newer one is still matched; the older one's receive does not wait
  // once east's progress is past it.
  EXPECT_TRUE(capped.peers.OnReceive(0, 1100, Key(kEastAddr, north_addr, 3)));
  east.peers.PublishProgress();
  EXPECT_FALSE(capped.peers.OnReceive(0, 1000, Key(kEastAddr, north_addr, 2)));
}

TEST_F(ShardPeersTest, BadRecordsAreCountedNotTrusted) {
  ASSERT_TRUE(west.peers.Remote(Key(kWestAddr, kEastAddr, 1)));
  west.bus.Publish("waitpath.edge.10_0_0_2", "garbage", 7);
  MemoryBus other(broker);
  other.Publish("waitpath.sync.west.east", "x", 1);
  EXPECT_EQ(west.counters().edges_bad, 2u);
  EXPECT_EQ(west.counters().edges_received, 0u);
}

}  // namespace
}  // namespace waitpath
