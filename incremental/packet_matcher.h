// Pairs each received packet with its send: by TCP key where the events carry one (LTTng
// >= 2.9 network_header, seed-era inet_sock_*), else by skbaddr on the same host (perf,
// older LTTng; loopback only). Unmatched sends expire, counted. A packet received twice on one
// host (an overlay: once on the underlay device, whose GRO exposed the inner header, and again
// on the overlay device after decapsulation) is matched at both sightings: the second, where
// the receiver is usually woken, is the one that counts for the path.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "incremental/task_table.h"
#include "model/event.h"

namespace waitpath {

struct PacketSend {
  uint16_t host;
  uint16_t generation;  // the sender's (low bits): a reused Utid is not taken for the sender
  Utid sender;          // task context that queued it; kNoTask if sent from interrupt context
  int64_t ts;
};

struct PacketMatcherCounters {
  uint64_t sends = 0, receives = 0, matched = 0, matched_cross_host = 0, expired = 0;
  uint64_t duplicates = 0;  // receives of a TCP packet this host had just received
  // The same by host: matched[receiver][sender], expired[sender] (grown as hosts appear).
  std::vector<std::vector<uint64_t>> matched_by_pair;
  std::vector<uint64_t> expired_by_host;
};

class PacketMatcher {
 public:
  void OnSend(uint16_t host, int64_t ts, uint64_t skbaddr, const PacketKey* key, Utid sender,
              uint32_t generation = 0);
  // The send matching this receive, if any (consumed; a TCP packet received again on the same
  // host within kDuplicateWindowNs gets the same send).
  std::optional<PacketSend> OnReceive(uint16_t host, int64_t ts, uint64_t skbaddr,
                                      const PacketKey* key);
  // Far below a retransmission timeout (200 ms at least), far above the gap between the two
  // softirqs of one overlay packet (microseconds).
  static constexpr int64_t kDuplicateWindowNs = 5'000'000;
  // Drops sends older than `before` that were never received.
  void ExpireBefore(int64_t before);

  const PacketMatcherCounters& counters() const { return counters_; }
  size_t pending() const { return pending_; }

 private:
  static uint64_t KeyHash(uint16_t host, uint64_t skbaddr, const PacketKey* key);
  std::unordered_map<uint64_t, std::deque<PacketSend>> sends_;
  std::deque<std::pair<int64_t, uint64_t>> order_;  // (ts, key) for expiry
  struct Received {
    PacketSend send;
    int64_t ts;
  };
  // The last TCP receives, by (receiving host, key), for duplicate sightings; pruned by age.
  std::unordered_map<uint64_t, Received> recent_;
  std::deque<std::pair<int64_t, uint64_t>> recent_order_;
  PacketMatcherCounters counters_;
  size_t pending_ = 0;
};

}  // namespace waitpath
