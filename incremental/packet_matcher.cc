#include "incremental/packet_matcher.h"

namespace waitpath {
namespace {
uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
}  // namespace

uint64_t PacketMatcher::KeyHash(uint16_t host, uint64_t skbaddr, const PacketKey* key) {
  if (key && key->has_tcp) return TcpKeyHash(*key);
  // skbaddr identifies a packet only within one host, and only until the skb is freed.
  return Mix(Mix(0x5cbULL, host), skbaddr);
}

void PacketMatcher::OnSend(uint16_t host, int64_t ts, uint64_t skbaddr, const PacketKey* key,
                           Utid sender, uint32_t generation) {
  ++counters_.sends;
  const uint64_t k = KeyHash(host, skbaddr, key);
  sends_[k].push_back(PacketSend{host, static_cast<uint16_t>(generation), sender, ts});
  order_.emplace_back(ts, k);
  ++pending_;
}

std::optional<PacketSend> PacketMatcher::OnReceive(uint16_t host, int64_t ts, uint64_t skbaddr,
                                                   const PacketKey* key) {
  ++counters_.receives;
  const uint64_t k = KeyHash(host, skbaddr, key);
  const bool tcp = key && key->has_tcp;
  const uint64_t rk = Mix(k, host);
  while (!recent_order_.empty() && recent_order_.front().first < ts - kDuplicateWindowNs) {
    auto old = recent_.find(recent_order_.front().second);
    if (old != recent_.end() && old->second.ts == recent_order_.front().first) recent_.erase(old);
    recent_order_.pop_front();
  }
  auto it = sends_.find(k);
  if (it == sends_.end() || it->second.empty()) {
    if (!tcp) return std::nullopt;
    auto seen = recent_.find(rk);
    if (seen == recent_.end()) return std::nullopt;
    ++counters_.duplicates;
    return seen->second.send;
  }
  PacketSend send = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) sends_.erase(it);
  --pending_;
  ++counters_.matched;
  if (send.host != host) ++counters_.matched_cross_host;
  auto& by_pair = counters_.matched_by_pair;
  if (by_pair.size() <= host) by_pair.resize(host + 1u);
  if (by_pair[host].size() <= send.host) by_pair[host].resize(send.host + 1u, 0);
  ++by_pair[host][send.host];
  if (tcp) {
    recent_[rk] = Received{send, ts};
    recent_order_.emplace_back(ts, rk);
  }
  return send;
}

void PacketMatcher::ExpireBefore(int64_t before) {
  while (!order_.empty() && order_.front().first < before) {
    auto it = sends_.find(order_.front().second);
    if (it != sends_.end() && !it->second.empty() &&
        it->second.front().ts == order_.front().first) {
      const uint16_t sender = it->second.front().host;
      it->second.pop_front();
      if (it->second.empty()) sends_.erase(it);
      --pending_;
      ++counters_.expired;
      if (counters_.expired_by_host.size() <= sender)
        counters_.expired_by_host.resize(sender + 1u, 0);
      ++counters_.expired_by_host[sender];
    }
    order_.pop_front();
  }
}

}  // namespace waitpath
