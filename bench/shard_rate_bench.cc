// How many cross-shard waits one shard resolves per second (docs/scale.md, "Figures"): two
// shards' peer logic (fleet/shard_peers.h), east and west, over a real nats-server (or the
// in-memory bus of the unit tests, `memory`). East's task sends N packets to west's host, each
// published as an edge; west's engine thread then resolves each receive as the engine does: it
// matches the receive with its edge (OnReceive) and asks east for the sender's breakdown over
// the wait (RemoteBreakdown: one request/reply round trip, answered by east's engine thread,
// which pumps its bus in a loop as a live shard does between batches). Reports both rates:
// receives matched per second (no round trip), and cross-shard waits resolved per second (a
// match and a query each), with the query's round trip (p50/p99). The engine thread blocks on
// each query: the second rate is what one shard resolves today.
// POLL_US: how often east's engine thread pumps its bus (a live shard does between batches).
// Usage: waitpath_shard_rate_bench nats://HOST:PORT|memory WAITS [POLL_US (default 1000)]
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fleet/memory_bus.h"
#include "fleet/nats_bus.h"
#include "fleet/shard_peers.h"
#include "model/event_builders.h"
#include "model/string_table.h"

namespace {

using namespace waitpath;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kEastAddr = 0x0a000001;
constexpr uint32_t kWestAddr = 0x0a000002;
constexpr int32_t kSender = 10;
constexpr int64_t kStepNs = 100'000;  // a send every 100 us (trace time)

PacketKey Key(uint32_t seq) {
  PacketKey k;
  k.saddr = kEastAddr;
  k.daddr = kWestAddr;
  k.sport = 40000;
  k.dport = 80;
  k.seq = seq;
  k.has_addresses = k.has_tcp = true;
  return k;
}

struct Shard {
  Shard(std::unique_ptr<Bus> b, const std::string& name, const std::string& host)
      : bus(std::move(b)),
        hosts{host},
        peers(ShardOptions{name, host, 2000, 1u << 22, 60, 150, 15000}, *bus, engine, hosts,
              [](uint16_t, const std::string&) {}) {}
  std::unique_ptr<Bus> bus;
  Engine engine;
  std::vector<std::string> hosts;
  ShardPeers peers;
};

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr,
               "usage: waitpath_shard_rate_bench nats://HOST:PORT|memory WAITS [POLL_US]\n");
    return 2;
  }
  const std::string where = argv[1];
  const uint32_t n = static_cast<uint32_t>(std::stoul(argv[2]));
  const int64_t poll_us = argc > 3 ? std::stoll(argv[3]) : 1000;
  MemoryBroker broker;
  auto make_bus = [&]() -> std::unique_ptr<Bus> {
    if (where == "memory") return std::make_unique<MemoryBus>(broker);
    BusOptions o;
    o.urls = where;
    o.stream = "WAITPATH_SHARD_BENCH";
    std::string error;
    std::unique_ptr<NatsBus> bus = NatsBus::Connect(o, &error);
    for (int i = 0; bus && !bus->connected() && i < 300; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!bus || !bus->connected()) {
      fmt::print(stderr, "waitpath_shard_rate_bench: {}\n",
                 error.empty() ? "not connected" : error);
      std::exit(1);
    }
    return bus;
  };
  Shard east(make_bus(), "east", "east-host");
  Shard west(make_bus(), "west", "west-host");

  // East's sender runs from 0 to past the last send, preempted for 30 us before each send: the
  // breakdown of each wait has two states.
  const int32_t comm = static_cast<int32_t>(StringTable::Global().Intern("sender"));
  Batch batch;
  batch.host = 0;
  batch.events.push_back(SwitchEvent(0, 0, 0, kSender, 0, -1, comm));
  for (uint32_t i = 1; i <= n; ++i) {
    const int64_t t = static_cast<int64_t>(i) * kStepNs;
    batch.events.push_back(SwitchEvent(t - 30'000, 0, kSender, 11, 0, comm));
    batch.events.push_back(SwitchEvent(t - 20'000, 0, 11, kSender, 0, -1, comm));
  }
  batch.events.push_back(SwitchEvent(static_cast<int64_t>(n + 1) * kStepNs, 0, kSender, 11, 0));
  east.engine.Push(batch);
  const Utid sender = east.engine.tasks().Find(0, kSender);
  if (sender == kNoTask) {
    fmt::print(stderr, "waitpath_shard_rate_bench: no sender task\n");
    return 1;
  }
  // West learns its host's address (subscribes to the edges sent to it) before east sends.
  PacketKey from_west = Key(0);
  std::swap(from_west.saddr, from_west.daddr);
  west.peers.Remote(from_west);
  for (uint32_t i = 1; i <= n; ++i) {
    const int64_t t = static_cast<int64_t>(i) * kStepNs;
    if (!east.peers.Remote(Key(i))) return 1;
    east.peers.OnSend(0, t, Key(i), sender, east.engine.Cumulative(sender, t));
  }
  east.peers.PublishProgress();
  // Every edge delivered to west before it starts (the rates are of the resolving alone).
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (west.peers.counters().edges_received < n && Clock::now() < deadline) {
    west.peers.Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::atomic<bool> stop{false};
  std::thread east_thread([&] {  // east's engine thread between batches: answers queries
    while (!stop) {
      east.peers.Poll();
      std::this_thread::sleep_for(std::chrono::microseconds(poll_us));
    }
  });

  // West: first only the matches (the edges are there: no waiting on progress), then the
  // same number again with a query each.
  const uint32_t half = n / 2;
  std::vector<RemoteSend> sends;
  sends.reserve(n);
  const auto t0 = Clock::now();
  for (uint32_t i = 1; i <= half; ++i) {
    const auto s = west.peers.OnReceive(0, static_cast<int64_t>(i) * kStepNs + 50'000, Key(i));
    if (s) sends.push_back(*s);
  }
  const auto t1 = Clock::now();
  std::vector<double> rtt_us;
  rtt_us.reserve(n - half);
  uint32_t resolved = 0, matched_second = 0;
  for (uint32_t i = half + 1; i <= n; ++i) {
    const int64_t recv = static_cast<int64_t>(i) * kStepNs + 50'000;
    const auto s = west.peers.OnReceive(0, recv, Key(i));
    if (!s) continue;
    ++matched_second;
    const auto q = Clock::now();
    const auto part = west.peers.RemoteBreakdown(*s, s->ts - 60'000);
    rtt_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - q).count());
    if (part) ++resolved;
  }
  const auto t2 = Clock::now();
  stop = true;
  east_thread.join();
  std::sort(rtt_us.begin(), rtt_us.end());
  auto pct = [&](double p) {
    return rtt_us.empty() ? 0.0 : rtt_us[std::min(rtt_us.size() - 1, size_t(p * rtt_us.size()))];
  };
  fmt::print(
      "bus {}, east polls every {} us: receives matched {} of {} in {:.3f} s: {:.0f}/s; "
      "cross-shard waits resolved {} "
      "of {} (queries answered) in {:.3f} s: {:.0f}/s; query round trip p50 {:.0f} us, p99 {:.0f} "
      "us\n",
      where, poll_us, sends.size(), half, Seconds(t0, t1), sends.size() / Seconds(t0, t1), resolved,
      n - half, Seconds(t1, t2), resolved / Seconds(t1, t2), pct(0.5), pct(0.99));
  fmt::print("{}\n{}\n", west.peers.Summary(), east.peers.Summary());
  return resolved == n - half && matched_second == n - half && sends.size() == half ? 0 : 1;
}
