#include "fleet/shard_peers.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "base/output.h"
#include "exporters/quality_counters.h"
#include "model/string_table.h"

namespace waitpath {
namespace {

std::string AddrToken(uint32_t a) {
  return fmt::format("{}_{}_{}_{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

// Edges are kept per matched remote task for the wake-ups that follow their receive: a few.
constexpr size_t kSendsPerTask = 64;
// How long a receive waits through a lost connection for it to come back (another node).
constexpr std::chrono::milliseconds kReconnectGrace{1000};
// How often a shard's progress is published when it did not change.
constexpr int64_t kProgressHeartbeatMs = 1000;

}  // namespace

ShardPeers::ShardPeers(ShardOptions options, Bus& bus, Engine& engine,
                       const std::vector<std::string>& hosts,
                       std::function<void(uint16_t, const std::string&)> name_host)
    : options_(std::move(options)),
      own_(options_.own),
      bus_(bus),
      engine_(engine),
      hosts_(hosts),
      name_host_(std::move(name_host)) {
  // A subscription that cannot start now (the bus away) is started by Bus::Poll later.
  std::string error;
  const std::string self = SubjectToken(options_.name);
  // Samples of this shard's sends, as the shards that received them saw them.
  bus_.Subscribe(
      "waitpath.sync." + self + ".*",
      [this](std::string_view subject, std::string_view data) { OnSample(subject, data); }, &error);
  // Every shard's progress (under the edge subjects, which the stream holds: an address's token
  // is one token, never `progress`).
  bus_.Subscribe(
      "waitpath.edge.progress.*",
      [this](std::string_view, std::string_view data) { OnProgress(data); }, &error);
  bus_.Serve(
      "waitpath.cum." + self,
      [this](std::string_view reply_to, std::string_view data) {
        const auto q = DecodeQuery(data);
        std::lock_guard<std::mutex> lock(mu_);
        if (!q) {
          ++counters_.edges_bad;
          return;
        }
        queries_.push_back(Query{std::string(reply_to), *q});
        arrived_.notify_all();
      },
      &error);
}

// An address of one of this shard's hosts (the source of its sends, the destination of its
// receives): edges published to it are for this shard.
void ShardPeers::Learn(uint32_t addr) {
  if (!own_addrs_.insert(addr).second) return;
  std::string error;
  bus_.Subscribe(
      "waitpath.edge." + AddrToken(addr),
      [this](std::string_view, std::string_view data) { OnEdge(data); }, &error);
}

bool ShardPeers::Remote(const PacketKey& key) {
  Learn(key.saddr);
  return !own_addrs_.count(key.daddr);
}

bool ShardPeers::Claim(const std::string& host) {
  if (Owns(host)) return true;
  std::lock_guard<std::mutex> lock(mu_);
  expected_.insert(host);
  return false;
}

void ShardPeers::OnSend(uint16_t host, int64_t ts, const PacketKey& key, Utid sender,
                        const StateVec& cum) {
  host_addrs_[host].insert(key.saddr);
  last_sent_[key.daddr] = ts;
  EdgeRecord r;
  r.key = key;
  r.send_ns = ts;
  r.shard = options_.name;
  r.host = host < hosts_.size() ? hosts_[host] : std::string();
  if (sender != kNoTask) {
    const Task& t = engine_.tasks()[sender];
    r.tid = t.tid;
    r.pid = t.pid;
    r.comm = std::string(StringTable::Global().Get(t.comm));
  }
  r.cum.assign(cum.ns.begin(), cum.ns.end());
  const std::string bytes = EncodeEdge(r);
  if (bus_.Publish("waitpath.edge." + AddrToken(key.daddr), bytes.data(), bytes.size())) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.edges_published;
  }
}

// On a bus thread.
void ShardPeers::OnEdge(std::string_view data) {
  auto edge = DecodeEdge(data);
  std::lock_guard<std::mutex> lock(mu_);
  if (!edge) {
    ++counters_.edges_bad;
    return;
  }
  // Our own edges come back when they went to an address we learned late: the local matcher
  // has those sends.
  if (edge->shard == options_.name) return;
  ++counters_.edges_received;
  const auto now = std::chrono::steady_clock::now();
  const uint64_t k = TcpKeyHash(edge->key);
  sender_addrs_.insert(edge->key.saddr);
  untraced_.erase(edge->key.saddr);
  // An edge from a stalled shard: it advances (its progress records may be what is late).
  if (stalled_.erase(edge->shard))
    Say("waitpath: shard {}: shard {} advances again\n", options_.name, edge->shard);
  auto& owner = owner_[edge->key.saddr];
  if (owner.first != edge->shard) owner = {edge->shard, edge->host};
  // The latest edge's send; a clock that went back (a new session) starts it again.
  auto [r, fresh] = received_.try_emplace({edge->shard, edge->key.daddr}, edge->send_ns);
  if (!fresh && (edge->send_ns > r->second || edge->send_ns < r->second - 1'000'000'000))
    r->second = edge->send_ns;
  edges_[k].push_back(Pending{std::move(*edge), now});
  edge_order_.emplace_back(now, k);
  ++edge_count_;
  arrived_.notify_all();
}

void ShardPeers::OnSample(std::string_view subject, std::string_view data) {
  const auto s = DecodeSample(data);
  std::lock_guard<std::mutex> lock(mu_);
  if (!s) {
    ++counters_.edges_bad;
    return;
  }
  ++counters_.samples_received;
  samples_.emplace_back(std::string(subject.substr(subject.rfind('.') + 1)), *s);
}

// On a bus thread.
void ShardPeers::OnProgress(std::string_view data) {
  auto record = DecodeProgress(data);
  std::lock_guard<std::mutex> lock(mu_);
  if (!record) {
    ++counters_.edges_bad;
    return;
  }
  if (record->shard == options_.name) return;
  ++counters_.progress_received;
  const auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = progress_.try_emplace(record->shard);
  Progress& p = it->second;
  bool advanced = fresh;
  for (const auto& h : record->hosts) {
    const auto old = std::find_if(p.record.hosts.begin(), p.record.hosts.end(),
                                  [&](const ProgressRecord::Host& o) { return o.name == h.name; });
    if (old == p.record.hosts.end() || h.done_ns != old->done_ns) advanced = true;
    for (uint32_t a : h.addrs) {
      owner_[a] = {record->shard, h.name};
      untraced_.erase(a);
    }
    stalled_.erase(h.name);  // a host never heard of before is heard of
  }
  if (fresh) p.first = now;
  if (advanced) {
    p.advanced = now;
    if (stalled_.erase(record->shard)) {
      Say("waitpath: shard {}: shard {} advances again\n", options_.name, record->shard);
    }
  }
  p.record = std::move(*record);
  arrived_.notify_all();
}

void ShardPeers::MaybePublishProgress() {
  if (std::chrono::steady_clock::now() >= next_progress_) PublishProgress(false);
}

void ShardPeers::PublishProgress(bool unchanged_too) {
  const auto now_wall = std::chrono::steady_clock::now();
  next_progress_ = now_wall + std::chrono::milliseconds(options_.progress_ms);
  ProgressRecord r;
  r.shard = options_.name;
  for (size_t h = 0; h < std::min<size_t>(hosts_.size(), kRemoteHostBase); ++h) {
    const auto id = static_cast<uint16_t>(h);
    const int64_t now = engine_.host_now(id);
    if (now == std::numeric_limits<int64_t>::min()) continue;  // nothing of it processed yet
    ProgressRecord::Host host{hosts_[h], now, {}};
    if (auto a = host_addrs_.find(id); a != host_addrs_.end())
      host.addrs.assign(a->second.begin(), a->second.end());
    // A host name comes again with each new session of that host: its latest id says.
    auto same = std::find_if(r.hosts.begin(), r.hosts.end(),
                             [&](const ProgressRecord::Host& o) { return o.name == host.name; });
    if (same != r.hosts.end()) {
      host.addrs.insert(host.addrs.end(), same->addrs.begin(), same->addrs.end());
      *same = std::move(host);
    } else {
      r.hosts.push_back(std::move(host));
    }
  }
  for (const auto& [daddr, send] : last_sent_) r.last_edges.push_back({daddr, send});
  std::string bytes = EncodeProgress(r);
  // What did not change goes once a second only (a shard that is heard of, and quiet).
  if (!unchanged_too && bytes == last_progress_ &&
      now_wall - last_progress_at_ < std::chrono::milliseconds(kProgressHeartbeatMs))
    return;
  last_progress_at_ = now_wall;
  last_progress_ = bytes;
  if (bus_.Publish("waitpath.edge.progress." + SubjectToken(options_.name), bytes.data(),
                   bytes.size())) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.progress_published;
  }
}

void ShardPeers::Poll() {
  {
    const EngineCounters e = engine_.counters();
    std::lock_guard<std::mutex> lock(mu_);
    published_ = counters_;
    published_.remote_waits = e.remote_waits;
    published_.remote_unresolved = e.remote_unresolved;
    published_.clock_resets = ClockResets();
  }
  bus_.Poll();
  AnswerQueries();
  MaybePublishProgress();
  Expire();
  std::vector<std::pair<std::string, SyncSample>> samples;
  {
    std::lock_guard<std::mutex> lock(mu_);
    samples.swap(samples_);
  }
  // Our send, their receive: the us -> peer direction of the pair's hull.
  for (const auto& [peer, s] : samples) AddPoint(peers_[peer], s.recv_ns, s.send_ns, false);
}

void ShardPeers::Expire() {
  const auto cutoff =
      std::chrono::steady_clock::now() - std::chrono::seconds(options_.max_edge_age_s);
  std::lock_guard<std::mutex> lock(mu_);
  while (!edge_order_.empty() &&
         (edge_order_.front().first < cutoff || edge_count_ > options_.max_edges)) {
    const auto [at, k] = edge_order_.front();
    edge_order_.pop_front();
    auto it = edges_.find(k);
    if (it == edges_.end() || it->second.empty() || it->second.front().at != at) continue;
    it->second.pop_front();
    if (it->second.empty()) edges_.erase(it);
    --edge_count_;
    ++counters_.edges_expired;
  }
}

void ShardPeers::AnswerQueries() {
  std::deque<Query> queries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queries.swap(queries_);
  }
  for (const Query& query : queries) {
    CumAnswer a;
    // A host name comes again with each new session of that host (a new host id): the latest
    // one whose task has that time in its history answers. The task is the one that had the
    // tid at the send: this shard may have gone past it and seen the tid reused since (a
    // looped replay's next round, answering a shard seconds behind: measured, 324 queries of
    // 400 answered `unknown` that way on a loaded machine).
    for (size_t h = std::min<size_t>(hosts_.size(), kRemoteHostBase); h-- > 0 && !a.known;) {
      if (hosts_[h] != query.q.host) continue;
      const auto id = static_cast<uint16_t>(h);
      const Utid u = engine_.tasks().FindAt(id, query.q.tid, query.q.send_ns);
      // Only values that cannot change: at or after the horizon, inside the task's history,
      // not past what this engine has processed.
      if (u != kNoTask && query.q.at_ns >= engine_.resolver().horizon() &&
          query.q.at_ns >= engine_.TaskStart(u) && query.q.at_ns <= engine_.host_now(id)) {
        const StateVec cum = engine_.Cumulative(u, query.q.at_ns);
        a.known = true;
        a.cum.assign(cum.ns.begin(), cum.ns.end());
      }
    }
    const std::string bytes = EncodeAnswer(a);
    bus_.Respond(query.reply_to, bytes.data(), bytes.size());
    std::lock_guard<std::mutex> lock(mu_);
    ++(a.known ? counters_.queries_answered : counters_.queries_unknown);
  }
}

bool ShardPeers::Plausible(const EdgeRecord& edge, int64_t ts) const {
  // Nothing to judge by before a first match with that shard.
  const auto p = peers_.find(edge.shard);
  return p == peers_.end() || p->second.Plausible(edge.send_ns, ts);
}

void ShardPeers::AddPoint(PeerClock& peer, int64_t peer_ns, int64_t local_ns, bool to_us) {
  if (peer.AddPoint(peer_ns, local_ns, to_us)) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++counters_.samples_stale;
}

uint64_t ShardPeers::ClockResets() const {
  uint64_t resets = 0;
  for (const auto& [name, peer] : peers_) resets += peer.resets();
  return resets;
}

uint16_t ShardPeers::HostId(const std::string& name) {
  auto it = remote_hosts_.find(name);
  if (it != remote_hosts_.end()) return it->second;
  const auto id = static_cast<uint16_t>(kRemoteHostBase + remote_hosts_.size());
  remote_hosts_.emplace(name, id);
  name_host_(id, name);
  return id;
}

std::optional<RemoteSend> ShardPeers::OnReceive(uint16_t host, int64_t ts, const PacketKey& key) {
  (void)host;
  Learn(key.daddr);
  if (own_addrs_.count(key.saddr)) return std::nullopt;  // ours: its send was not traced
  host_addrs_[host].insert(key.daddr);
  bool unknown = false;
  std::optional<EdgeRecord> edge = AwaitEdge(key, ts, &unknown);
  if (unknown) return RemoteSend{kNoTask, ts, true};
  if (!edge) return std::nullopt;
  return Matched(std::move(*edge), ts);
}

std::optional<EdgeRecord> ShardPeers::AwaitEdge(const PacketKey& key, int64_t ts, bool* unknown) {
  const uint64_t k = TcpKeyHash(key);
  Hold hold{std::chrono::steady_clock::now(), {}};
  std::unique_lock<std::mutex> lock(mu_);
  for (const auto& [name, p] : progress_) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const auto& h : p.record.hosts) least = std::min(least, h.done_ns);
    hold.done[name] = least;
  }
  struct Longest {  // the longest wait, kept as the receive stops waiting
    ShardCounters& c;
    std::chrono::steady_clock::time_point start;
    ~Longest() {
      c.longest_hold_ms = std::max<int64_t>(c.longest_hold_ms,
                                            std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::steady_clock::now() - start)
                                                .count());
    }
  } longest{counters_, hold.start};  // destroyed under the lock
  for (;;) {
    if (std::optional<EdgeRecord> edge = TakeEdge(k, ts)) {
      ++counters_.edges_matched;
      return edge;
    }
    // Nothing waits while the bus is down, but a connection moving to another cluster node
    // (back within milliseconds) is waited through: giving up at once, the receive waiting for
    // an edge the election delayed and every receive behind it went without theirs (19 and 8
    // at two shards in one run of the cluster test, 15 % of a task's life in another).
    if (bus_.DownLongerThan(kReconnectGrace)) {
      // Counted only for a sender some shard publishes for: an untraced peer is no loss.
      if (sender_addrs_.count(key.saddr)) ++counters_.receives_unmatched;
      return std::nullopt;
    }
    // Otherwise it waits on progress, not on the clock: until the sender's shard has gone past
    // it (then its edge does not exist), or has stalled (then the wait is `unknown`).
    switch (Judge(key, ts, hold)) {
      case Verdict::kNoEdge:
        if (owner_.count(key.saddr)) {
          ++counters_.receives_unmatched;
          ++counters_.receives_progressed;
        }
        return std::nullopt;
      case Verdict::kStalled:
        ++counters_.receives_stalled;
        *unknown = true;
        return std::nullopt;
      case Verdict::kWait:
        break;
    }
    lock.unlock();
    AnswerQueries();         // a shard waiting for us may be what we wait for
    MaybePublishProgress();  // and our progress, which it waits on
    lock.lock();
    arrived_.wait_for(lock, std::chrono::milliseconds(5));
  }
}

bool ShardPeers::Stalled(const std::string& name, std::chrono::steady_clock::time_point since,
                         const char* what) {
  if (stalled_.count(name)) return true;
  if (std::chrono::steady_clock::now() - since < std::chrono::milliseconds(options_.stall_ms))
    return false;
  stalled_.insert(name);
  ++counters_.peers_stalled;
  Say("waitpath: shard {}: {} {} made no progress for {} ms while a receive waited for it: "
      "receives from it are `unknown` until it does\n",
      options_.name, what, name, options_.stall_ms);
  return true;
}

bool ShardPeers::Passed(const std::string& shard, const Progress& p, const std::string& host,
                        int64_t ts, uint32_t daddr, const Hold& hold) const {
  int64_t done = std::numeric_limits<int64_t>::max();
  for (const auto& h : p.record.hosts) {
    if (host.empty() || h.name == host) done = std::min(done, h.done_ns);
  }
  if (done == std::numeric_limits<int64_t>::max()) return false;  // that host not processed yet
  // Every edge it published to our address before this record has arrived (edges and progress
  // come over different subscriptions: not in order).
  for (const auto& e : p.record.last_edges) {
    if (e.daddr != daddr) continue;
    const auto r = received_.find({shard, daddr});
    if (r == received_.end() || r->second < e.send_ns) return false;
  }
  const auto peer = peers_.find(shard);
  if (peer != peers_.end() && peer->second.Judging() && !peer->second.Outlived(ts)) {
    // Its progress in our clock past the receive: the send, before the receive, is processed.
    // The one-way estimate places the peer late by the fastest packet's wire time at most,
    // never early; the line within its accuracy.
    const PeerClock& c = peer->second;
    const int64_t margin = 1'000'000 + (c.Synchronized() ? c.pair().accuracy() : 0);
    return c.ToLocal(done) > ts + margin;
  }
  // No clock of that shard yet: its progress says nothing of our time, but a shard reads at
  // most max_lag behind its hosts' present, which is past our receive: once it has advanced
  // that far since the receive began waiting, it has processed the send.
  const auto before = hold.done.find(shard);
  return before != hold.done.end() && before->second != std::numeric_limits<int64_t>::max() &&
         done - before->second >= options_.max_lag_ns;
}

ShardPeers::Verdict ShardPeers::Judge(const PacketKey& key, int64_t ts, Hold& hold) {
  const auto now = std::chrono::steady_clock::now();
  const auto owner = owner_.find(key.saddr);
  if (owner != owner_.end()) {
    // A claimed address: its shard's progress decides.
    const auto& [shard, host] = owner->second;
    if (stalled_.count(shard)) return Verdict::kStalled;
    const auto p = progress_.find(shard);
    if (p == progress_.end()) {
      // Known from its edges only (its progress not heard yet): waited for within the bound.
      return Stalled(shard, hold.start, "shard") ? Verdict::kStalled : Verdict::kWait;
    }
    if (Passed(shard, p->second, host, ts, key.daddr, hold)) return Verdict::kNoEdge;
    return Stalled(shard, std::max(hold.start, p->second.advanced), "shard") ? Verdict::kStalled
                                                                             : Verdict::kWait;
  }
  if (untraced_.count(key.saddr)) return Verdict::kNoEdge;
  // An address no shard has claimed: an untraced peer, or a host whose shard has not
  // processed its first send yet. Waited for until every shard has passed the receive...
  bool wait = false;
  // ...including the shards of hosts the relayd has whose shards never said anything (a late
  // attacher), within the stall bound.
  bool silent = false;  // a host whose shard never said anything, stalled: it may be the sender
  for (const std::string& host : expected_) {
    if (stalled_.count(host)) {
      silent = true;
      continue;
    }
    const bool heard = std::any_of(progress_.begin(), progress_.end(), [&](const auto& p) {
      return std::any_of(p.second.record.hosts.begin(), p.second.record.hosts.end(),
                         [&](const ProgressRecord::Host& h) { return h.name == host; });
    });
    if (!heard)
      (Stalled(host, hold.start, "host (its shard never said anything)") ? silent : wait) = true;
  }
  for (const auto& [shard, p] : progress_) {
    if (stalled_.count(shard)) continue;
    if (!hold.done.count(shard)) {  // heard of since the receive began waiting
      int64_t least = std::numeric_limits<int64_t>::max();
      for (const auto& h : p.record.hosts) least = std::min(least, h.done_ns);
      hold.done[shard] = least;
    }
    if (Passed(shard, p, "", ts, key.daddr, hold)) continue;
    // A shard we have no clock of yet: at most wait_ms (wall clock) after it was first heard
    // of, the compatibility bound (--edge-wait-ms), for an address it has not claimed.
    const auto peer = peers_.find(shard);
    const bool judging = peer != peers_.end() && peer->second.Judging();
    if (!judging &&
        now - std::max(hold.start, p.first) >= std::chrono::milliseconds(options_.wait_ms))
      continue;
    if (!Stalled(shard, std::max(hold.start, p.advanced), "shard")) wait = true;
  }
  if (wait) return Verdict::kWait;
  // Its sender may be that silent host's: not known, not left to `network` silently.
  if (silent) return Verdict::kStalled;
  untraced_.insert(key.saddr);
  return Verdict::kNoEdge;
}

std::optional<EdgeRecord> ShardPeers::TakeEdge(uint64_t k, int64_t ts) {
  auto it = edges_.find(k);
  if (it == edges_.end()) return std::nullopt;
  std::deque<Pending>& pending = it->second;
  // The same key pending several times, and a pair that cannot judge their times yet (its
  // first exchange, or started over): the older ones are leftovers (edges that came after
  // their receive gave up while the bus was away, or delivered again from the stream to a
  // restarted shard), and the first match sets the pair's one-way clock: the newest is
  // taken, the others dropped as stale.
  if (pending.size() > 1) {
    const auto p = peers_.find(pending.back().edge.shard);
    if (p == peers_.end() || p->second.Outlived(ts) || !p->second.Judging()) {
      while (pending.size() > 1) {
        pending.pop_front();
        --edge_count_;
        ++counters_.edges_stale;
      }
    }
  }
  std::optional<EdgeRecord> edge;
  while (!pending.empty()) {
    const auto arrived = pending.front().at;
    edge = std::move(pending.front().edge);
    pending.pop_front();
    --edge_count_;
    // A pair that cannot vouch for this time any more judges nothing: it starts over
    // (rather than refuse the genuine edge as stale with a line extrapolated too far).
    auto p = peers_.find(edge->shard);
    if (p != peers_.end() && p->second.Outlived(ts)) p->second.StartOver();
    // Without a clock of that shard yet, an edge's time says nothing: one that has waited
    // here longer than two receive bounds is a leftover (it came after its receive gave up),
    // and taken as the first match it would set a one-way clock that refuses the genuine
    // edges after it.
    const bool judging = p != peers_.end() && p->second.Judging();
    if (!judging && std::chrono::steady_clock::now() - arrived >
                        std::chrono::milliseconds(2 * options_.wait_ms)) {
      edge.reset();
      ++counters_.edges_stale;
      continue;
    }
    if (Plausible(*edge, ts)) break;
    edge.reset();
    ++counters_.edges_stale;
  }
  if (pending.empty()) edges_.erase(it);
  return edge;
}

std::optional<RemoteSend> ShardPeers::Matched(EdgeRecord edge, int64_t ts) {
  // One point of the pair's hull here (peer -> us), and published for the sender's shard.
  PeerClock& peer = peers_[edge.shard];
  AddPoint(peer, edge.send_ns, ts, true);
  peer.AddDelay(edge.send_ns, ts);
  const std::string sample = EncodeSample(SyncSample{edge.send_ns, ts});
  if (bus_.Publish("waitpath.sync." + SubjectToken(edge.shard) + "." + SubjectToken(options_.name),
                   sample.data(), sample.size())) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.samples_published;
  }
  if (edge.tid <= 0) return std::nullopt;  // sent from interrupt context: network
  if (!peer.Synchronized()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.one_way_clock;
  }
  const int64_t send = std::min(ts, peer.ToLocal(edge.send_ns));
  const Utid u = engine_.RemoteTask(HostId(edge.host), edge.tid, edge.pid,
                                    StringTable::Global().Intern(edge.comm), send);
  std::deque<SentBy>& sends = sent_by_[u];
  sends.push_back(SentBy{send, edge.shard, edge.send_ns, std::move(edge.cum)});
  if (sends.size() > kSendsPerTask) sends.pop_front();
  return RemoteSend{u, send};
}

std::optional<StateVec> ShardPeers::RemoteBreakdown(const RemoteSend& send, int64_t a) {
  if (a >= send.ts) return StateVec{};
  auto it = sent_by_.find(send.sender);
  if (it == sent_by_.end()) return std::nullopt;
  const auto s = std::find_if(it->second.rbegin(), it->second.rend(),
                              [&](const SentBy& x) { return x.ts == send.ts; });
  if (s == it->second.rend()) return std::nullopt;
  const PeerClock& peer = peers_[s->shard];
  const Task& t = engine_.tasks()[send.sender];
  const std::string host = [&] {
    for (const auto& [name, id] : remote_hosts_)
      if (id == t.host) return name;
    return std::string();
  }();
  const std::string q = EncodeQuery(CumQuery{host, t.tid, peer.ToRemote(a), s->send_ns});
  std::string bytes;
  if (!bus_.Request("waitpath.cum." + SubjectToken(s->shard), q.data(), q.size(), options_.wait_ms,
                    &bytes, [this] { AnswerQueries(); })) {
    return std::nullopt;
  }
  const auto answer = DecodeAnswer(bytes);
  if (!answer || !answer->known) return std::nullopt;
  // F_W(send) - F_W(a), state by state; its total is the remote clock's length of [a, send),
  // which differs from ours by the drift and the sync's error: that difference goes to the
  // largest state, so that the wait's breakdown sums to its length exactly.
  StateVec part;
  for (size_t i = 0; i < part.ns.size() && i < s->cum.size() && i < answer->cum.size(); ++i)
    part.ns[i] = std::max<int64_t>(0, s->cum[i] - answer->cum[i]);
  const auto largest = std::max_element(part.ns.begin(), part.ns.end());
  *largest += (send.ts - a) - part.total();
  if (*largest < 0) return std::nullopt;  // a summary that does not fit: not to be trusted
  return part;
}

std::vector<prometheus::MetricFamily> ShardPeers::Families() const {
  // From the scrape's thread: what the engine thread copied at its last Poll, never the
  // engine itself (docs/architecture.md, "Threads and ownership").
  ShardCounters c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    c = published_;
  }
  const BusCounters& b = bus_.counters();
  // Names, HELP and types from the data-quality table (exporters/quality_counters.h); the
  // `shard` label is added to every series by the metrics endpoint (LabeledCollectable).
  auto counter = [](QualityCounter id, std::vector<std::pair<std::string, uint64_t>> by_kind) {
    const QualityCounterInfo& info = Info(id);
    prometheus::MetricFamily f{
        std::string(info.metric), std::string(info.help), prometheus::MetricType::Counter, {}};
    for (auto& [kind, value] : by_kind) {
      prometheus::ClientMetric m;
      if (!kind.empty()) m.label.push_back({"kind", kind});
      m.counter.value = static_cast<double>(value);
      f.metric.push_back(std::move(m));
    }
    return f;
  };
  return {
      counter(QualityCounter::kShardEdges, {{"published", c.edges_published},
                                            {"received", c.edges_received},
                                            {"matched", c.edges_matched},
                                            {"expired", c.edges_expired},
                                            {"stale", c.edges_stale},
                                            {"bad", c.edges_bad}}),
      counter(QualityCounter::kShardReceivesWithoutEdge, {{"", c.receives_unmatched}}),
      counter(QualityCounter::kShardRemoteWaits,
              {{"resolved", c.remote_waits}, {"unresolved", c.remote_unresolved}}),
      counter(QualityCounter::kShardQueries,
              {{"answered", c.queries_answered}, {"unknown", c.queries_unknown}}),
      counter(QualityCounter::kShardBusEvents, {{"publish_failed", b.publish_failed.load()},
                                                {"disconnect", b.disconnects.load()},
                                                {"reconnect", b.reconnects.load()},
                                                {"request_failed", b.request_failures.load()}}),
      counter(QualityCounter::kShardClockResets, {{"", c.clock_resets}}),
      counter(QualityCounter::kShardPeersStalled,
              {{"peers", c.peers_stalled}, {"receives", c.receives_stalled}}),
  };
}

ShardCounters ShardPeers::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

std::string ShardPeers::Summary() const {
  const ShardCounters c = counters();
  std::string clocks;
  for (const auto& [name, p] : peers_) {
    clocks += fmt::format(", clock of shard {}: {} +/-{:.0f} us ({} matches)", name,
                          SyncQualityName(p.pair().quality()), p.pair().accuracy() / 1e3,
                          p.pair().matches());
  }
  const EngineCounters e = engine_.counters();
  return fmt::format(
      "shard {}: edges published {}, received {}, matched {}, expired {}, stale {}, bad {}; "
      "receives "
      "without an edge {} ({} past their sender's progress); stalled peers {}, receives "
      "unknown {}; longest wait for an edge {} ms; one-way clock {}; remote waits resolved {}, "
      "unresolved {}; queries "
      "answered {}, unknown {}; samples published {}, received {}, stale {}; progress published "
      "{}, received {}; bus published {}, "
      "failed {}, "
      "disconnects {}, reconnects {}, requests failed {}; clock resets {}{}",
      options_.name, c.edges_published, c.edges_received, c.edges_matched, c.edges_expired,
      c.edges_stale, c.edges_bad, c.receives_unmatched, c.receives_progressed, c.peers_stalled,
      c.receives_stalled, c.longest_hold_ms, c.one_way_clock, e.remote_waits, e.remote_unresolved,
      c.queries_answered, c.queries_unknown, c.samples_published, c.samples_received,
      c.samples_stale, c.progress_published, c.progress_received, bus_.counters().published.load(),
      bus_.counters().publish_failed.load(), bus_.counters().disconnects.load(),
      bus_.counters().reconnects.load(), bus_.counters().request_failures.load(), ClockResets(),
      clocks);
}

}  // namespace waitpath
