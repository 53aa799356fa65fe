// Edges through a real NATS JetStream (docs/scale.md, "Figures"): publishes N edge records of
// the size a shard publishes, at a fixed rate or as fast as the bus takes them, to a subject a
// second connection subscribes to (as a receiving shard does), and reports edges/s, the
// added latency (publish to delivery, p50/p99), bytes per edge and this process's CPU per edge
// (both ends: encoding, publishing, acks, decoding). nats-server's own CPU is measured by
// bench/bus.sh.
// Usage: waitpath_bus_bench nats://HOST:PORT EDGES [RATE_PER_S (0: as fast as it goes)]
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "fleet/edge_record.h"
#include "fleet/nats_bus.h"

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

bool WaitConnected(const waitpath::NatsBus& bus) {
  for (int i = 0; i < 300 && !bus.connected(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return bus.connected();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace waitpath;
  if (argc < 3) {
    fmt::print(stderr,
               "usage: waitpath_bus_bench nats://HOST:PORT[,...] EDGES [RATE_PER_S [REPLICAS]]\n");
    return 2;
  }
  const size_t n = std::stoul(argv[2]);
  const double rate = argc > 3 ? std::stod(argv[3]) : 0;
  BusOptions o;
  o.urls = argv[1];
  o.stream = "WAITPATH_BENCH";
  o.replicas = argc > 4 ? std::stoi(argv[4]) : 1;
  std::string error;
  std::unique_ptr<NatsBus> pub, sub;
  // A cluster takes seconds to elect its leaders: until the stream can be made.
  for (int i = 0; i < 30; ++i) {
    error.clear();
    pub = NatsBus::Connect(o, &error);
    if (pub && WaitConnected(*pub) &&
        pub->Subscribe(
            "waitpath.edge.probe", [](auto, auto) {}, &error))
      break;
    pub.reset();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  sub = pub ? NatsBus::Connect(o, &error) : nullptr;
  if (!sub || !WaitConnected(*sub)) {
    fmt::print(stderr, "waitpath_bus_bench: {}\n", error.empty() ? "not connected" : error);
    return 1;
  }
  std::mutex mu;
  std::vector<int64_t> latency;
  latency.reserve(n);
  std::atomic<size_t> got{0};
  std::atomic<uint64_t> bad{0};
  if (!sub->Subscribe(
          "waitpath.edge.10_0_0_20",
          [&](std::string_view, std::string_view d) {
            const int64_t now = NowNs();
            const auto e = DecodeEdge(d);
            if (!e) {
              ++bad;
              return;
            }
            std::lock_guard<std::mutex> lock(mu);
            latency.push_back(now - e->send_ns);
            ++got;
          },
          &error)) {
    fmt::print(stderr, "waitpath_bus_bench: {}\n", error);
    return 1;
  }
  EdgeRecord r;
  r.key.saddr = 0x0a00000a, r.key.daddr = 0x0a000014, r.key.sport = 40000, r.key.dport = 80;
  r.key.flags = 0x18, r.key.ip_len = 352, r.key.has_addresses = r.key.has_tcp = true;
  r.shard = "east", r.host = "web-042", r.comm = "nginx", r.tid = 4242, r.pid = 4240;
  r.cum = {12'345'678, 0, 250'000, 73'500'804, 36'313'256, 11'256'382, 0, 0, 0, 0, 0};
  size_t bytes = 0, failed = 0;
  const double cpu0 = CpuSeconds();
  const int64_t t0 = NowNs();
  for (size_t i = 0; i < n; ++i) {
    if (rate > 0) {
      const auto due = t0 + static_cast<int64_t>(static_cast<double>(i) * 1e9 / rate);
      // Slept, not spun: the CPU per edge is the bus's, not the pacing's.
      if (const int64_t ahead = due - NowNs(); ahead > 0)
        std::this_thread::sleep_for(std::chrono::nanoseconds(ahead));
    }
    r.key.seq = static_cast<uint32_t>(i);
    r.send_ns = NowNs();
    const std::string b = EncodeEdge(r);
    bytes += b.size();
    if (!pub->Publish("waitpath.edge.10_0_0_20", b.data(), b.size())) ++failed;
  }
  pub->Flush(30000);
  for (int i = 0; i < 3000 && got < n - failed; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const double secs = static_cast<double>(NowNs() - t0) * 1e-9;
  const double cpu = CpuSeconds() - cpu0;
  std::lock_guard<std::mutex> lock(mu);
  std::sort(latency.begin(), latency.end());
  auto pct = [&](double p) {
    return latency.empty() ? 0.0
                           : static_cast<double>(latency[std::min(
                                 latency.size() - 1, static_cast<size_t>(p * latency.size()))]) *
                                 1e-3;
  };
  fmt::print(
      "edges {} delivered {} failed {} bad {} in {:.3f} s: {:.0f} edges/s; latency p50 {:.0f} us "
      "p99 {:.0f} us; {:.1f} bytes/edge (payload); client cpu {:.2f} us/edge\n",
      n, latency.size(), failed, bad.load(), secs, static_cast<double>(latency.size()) / secs,
      pct(0.50), pct(0.99), static_cast<double>(bytes) / static_cast<double>(n),
      cpu * 1e6 / static_cast<double>(n));
  return latency.size() + failed == n ? 0 : 1;
}
