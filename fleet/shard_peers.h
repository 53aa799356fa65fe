// One shard of a fleet (`waitpath live --shard NAME --bus URL --own RE`, docs/scale.md): the
// engine's RemotePeers over the bus. Publishes an edge record for every send to an address
// none of its hosts owns, keeps the edges published for its own addresses (bounded: a cap and
// an age), matches them with receives, synchronizes its clock with each other shard from the
// matched packets of both directions, and answers the other shards' queries for the
// cumulative vectors of its tasks.
#pragma once

#include <prometheus/metric_family.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleet/bus.h"
#include "fleet/edge_record.h"
#include "fleet/peer_clock.h"
#include "incremental/engine.h"

namespace waitpath {

struct ShardOptions {
  std::string name;
  std::string own;  // regex over host names: the sessions this shard follows
  // A wait for another shard's answer (a summary); and how long a receive from an address no
  // shard has claimed waits, once, on shards it cannot judge the progress of yet (no clock of
  // them: the first exchange). Receives from a claimed address wait on progress instead.
  int64_t wait_ms = 2000;
  size_t max_edges = 1u << 20;  // edges kept unmatched at most...
  int64_t max_edge_age_s = 30;  // ...and for at most this long (wall clock)
  // Progress (docs/scale.md, "Progress"): published this often; a shard whose progress does not
  // advance for `stall_ms` (wall clock) while a receive waits for it is stalled: that receive,
  // and those from it until it advances again, are `unknown`, counted.
  int64_t progress_ms = 150;
  int64_t stall_ms = 15000;
  // Without a clock of the sender's shard, its progress says nothing of our receive's time:
  // held until it has advanced this far (its clock) since, the most a live shard lags.
  int64_t max_lag_ns = 10'000'000'000;
};

struct ShardCounters {
  uint64_t edges_published = 0, edges_received = 0, edges_matched = 0, edges_bad = 0;
  uint64_t edges_expired = 0;       // dropped by age or cap, never matched
  uint64_t edges_stale = 0;         // the same key, but sent too long before the receive
  uint64_t receives_unmatched = 0;  // from another shard's address, no edge in time: network
  uint64_t one_way_clock = 0;       // placed with the one-way estimate (Peer::min_delay)
  uint64_t queries_answered = 0, queries_unknown = 0;
  uint64_t samples_published = 0, samples_received = 0;
  uint64_t samples_stale = 0;  // from before the pair started over: dropped (AddPoint)
  uint64_t progress_published = 0, progress_received = 0;
  uint64_t receives_progressed = 0;  // released by the sender's progress: it has no edge
  uint64_t peers_stalled = 0;        // shards (or hosts never heard of) that stalled a receive
  uint64_t receives_stalled = 0;     // receives left `unknown`: their sender's shard stalled
  int64_t longest_hold_ms = 0;       // the longest a receive waited (edge or progress)
  // Copied from the engine and the engine thread's state for the metrics (Poll).
  uint64_t remote_waits = 0, remote_unresolved = 0, clock_resets = 0;
};

class ShardPeers : public RemotePeers {
 public:
  // `hosts`: the names of this engine's host ids (the accounting's list, grown as sessions
  // appear); remote hosts get ids from kRemoteHostBase on, named through `name_host`.
  ShardPeers(ShardOptions options, Bus& bus, Engine& engine, const std::vector<std::string>& hosts,
             std::function<void(uint16_t, const std::string&)> name_host);

  static constexpr uint16_t kRemoteHostBase = 1024;

  bool Owns(const std::string& host) const { return std::regex_match(host, own_); }
  // A host of the relayd (its session), this shard's or not: another shard's host is waited
  // for before its shard has published any progress (a late attacher). Engine thread.
  bool Claim(const std::string& host);
  // On the engine thread, between batches: answers queries, expires edges, restarts
  // subscriptions after the bus came back.
  void Poll();

  bool Remote(const PacketKey& key) override;
  void OnSend(uint16_t host, int64_t ts, const PacketKey& key, Utid sender,
              const StateVec& cum) override;
  std::optional<RemoteSend> OnReceive(uint16_t host, int64_t ts, const PacketKey& key) override;
  // This shard's progress, published now (also every progress_ms from Poll and while a
  // receive waits when it changed, and every second when it did not).
  void PublishProgress(bool unchanged_too = true);
  std::optional<StateVec> RemoteBreakdown(const RemoteSend& send, int64_t a) override;

  ShardCounters counters() const;
  // The shard's own families (waitpath_shard_*), for the metrics endpoint.
  std::vector<prometheus::MetricFamily> Families() const;
  std::string Summary() const;

 private:
  struct Pending {  // a received edge waiting for its receive
    EdgeRecord edge;
    std::chrono::steady_clock::time_point at;
  };
  struct Query {
    std::string reply_to;
    CumQuery q;
  };
  struct SentBy {  // a matched remote send, for the breakdown at its wake-up
    int64_t ts;
    std::string shard;
    int64_t send_ns;  // the peer's clock
    std::vector<int64_t> cum;
  };

  struct Progress {  // another shard's latest progress record (under mu_)
    ProgressRecord record;
    std::chrono::steady_clock::time_point first, advanced;  // first heard, last advance
  };
  // A receive held for its edge: when, and each shard's least progress then.
  struct Hold {
    std::chrono::steady_clock::time_point start;
    std::map<std::string, int64_t> done;
  };
  enum class Verdict { kWait, kNoEdge, kStalled };

  void Learn(uint32_t addr);
  void OnEdge(std::string_view data);
  void OnProgress(std::string_view data);
  void MaybePublishProgress();
  // Under mu_: whether the receive at `ts` (key `key`) may stop waiting for its edge.
  Verdict Judge(const PacketKey& key, int64_t ts, Hold& hold);
  // Under mu_: `shard` has processed past our `ts` (host `host`, or all of its hosts), and
  // every edge it published to `daddr` before saying so has arrived.
  bool Passed(const std::string& shard, const Progress& p, const std::string& host, int64_t ts,
              uint32_t daddr, const Hold& hold) const;
  // Under mu_: `name` made no progress for stall_ms while a receive waited on it.
  bool Stalled(const std::string& name, std::chrono::steady_clock::time_point since,
               const char* what);
  void OnSample(std::string_view subject, std::string_view data);
  void AnswerQueries();
  void Expire();
  // The receive's edge (TCP key hash `k`), waiting for it within the bound; none: network.
  std::optional<EdgeRecord> AwaitEdge(const PacketKey& key, int64_t ts, bool* unknown);
  // Under mu_: a pending edge of `k` that may be the receive's at `ts`; leftovers dropped.
  std::optional<EdgeRecord> TakeEdge(uint64_t k, int64_t ts);
  // The receive at `ts` matched `edge`: a point of the pair's clock, the sender as a remote task.
  std::optional<RemoteSend> Matched(EdgeRecord edge, int64_t ts);
  void AddPoint(PeerClock& peer, int64_t peer_ns, int64_t local_ns, bool to_us);
  bool Plausible(const EdgeRecord& edge, int64_t ts) const;
  uint16_t HostId(const std::string& name);
  uint64_t ClockResets() const;

  ShardOptions options_;
  std::regex own_;
  Bus& bus_;
  Engine& engine_;
  const std::vector<std::string>& hosts_;
  std::function<void(uint16_t, const std::string&)> name_host_;
  std::set<uint32_t> own_addrs_;
  std::set<uint32_t> served_;  // hosts whose queries are served, by local id

  mutable std::mutex mu_;  // what the bus's threads fill: edges, samples, queries
  std::condition_variable arrived_;
  std::unordered_map<uint64_t, std::deque<Pending>> edges_;  // by TCP key hash
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> edge_order_;
  size_t edge_count_ = 0;
  std::set<uint32_t> sender_addrs_;  // addresses other shards publish edges from
  // Which shard (and host, "" when only known from its edges) owns an address: from progress
  // records and edges.
  std::map<uint32_t, std::pair<std::string, std::string>> owner_;
  std::map<std::string, Progress> progress_;  // by shard
  // Per (sending shard, our address): the send time of the latest edge received (the clock may
  // go back: a new session), against the progress records' last edges.
  std::map<std::pair<std::string, uint32_t>, int64_t> received_;
  // Shards (and hosts never heard of) declared stalled: receives from them are `unknown` until
  // their progress advances (a shard) or it appears (a host).
  std::set<std::string> stalled_;
  // Addresses no shard claimed when every shard had passed a receive from them: untraced,
  // not waited for again until a shard claims them.
  std::set<uint32_t> untraced_;
  std::set<std::string> expected_;  // other shards' hosts, from the relayd's sessions (Claim)
  std::deque<Query> queries_;
  std::vector<std::pair<std::string, SyncSample>> samples_;  // (receiving shard, sample)
  ShardCounters counters_;
  ShardCounters published_;  // for the metrics: as of the last Poll

  std::map<std::string, PeerClock> peers_;             // engine thread
  std::map<uint16_t, std::set<uint32_t>> host_addrs_;  // engine thread: local host -> addrs
  std::map<uint32_t, int64_t> last_sent_;              // engine thread: daddr -> last send
  std::chrono::steady_clock::time_point next_progress_{}, last_progress_at_{};
  std::string last_progress_;                             // the last record published
  std::map<std::string, uint16_t> remote_hosts_;          // name -> id
  std::unordered_map<Utid, std::deque<SentBy>> sent_by_;  // remote task -> recent sends
};

}  // namespace waitpath
