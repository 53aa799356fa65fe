// Pairs each received packet with its send: by TCP key where the events carry one (LTTng
// >= 2.9 network_header, seed-era inet_sock_*), else by skbaddr on the same host (perf,
// older LTTng; loopback only). Unmatched sends expire, counted.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

#include "incremental/task_table.h"
#include "live/event.h"

namespace waitpath {

struct PacketSend {
  uint16_t host;
  uint16_t generation;  // the sender's (low bits): a reused Utid is not taken for the sender
  Utid sender;          // task context that queued it; kNoTask if sent from interrupt context
  int64_t ts;
};

struct PacketMatcherCounters {
  uint64_t sends = 0, receives = 0, matched = 0, matched_cross_host = 0, expired = 0;
};

class PacketMatcher {
 public:
  void OnSend(uint16_t host, int64_t ts, uint64_t skbaddr, const PacketKey* key, Utid sender,
              uint32_t generation = 0);
  // The send matching this receive, if any (consumed).
  std::optional<PacketSend> OnReceive(uint16_t host, uint64_t skbaddr, const PacketKey* key);
  // Drops sends older than `before` that were never received.
  void ExpireBefore(int64_t before);

  const PacketMatcherCounters& counters() const { return counters_; }
  size_t pending() const { return pending_; }

 private:
  static uint64_t KeyHash(uint16_t host, uint64_t skbaddr, const PacketKey* key);
  std::unordered_map<uint64_t, std::deque<PacketSend>> sends_;
  std::deque<std::pair<int64_t, uint64_t>> order_;  // (ts, key) for expiry
  PacketMatcherCounters counters_;
  size_t pending_ = 0;
};

}  // namespace waitpath
