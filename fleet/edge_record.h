// What shards tell each other over the bus (docs/scale.md), in a compact versioned binary
// encoding: fixed-width fields for the packet key and times, LEB128 varints for the state
// vector (most of its entries are small or zero), length-prefixed names. Decoding checks every
// length and the version, and never reads past the buffer: a bad record is dropped and
// counted, never trusted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/event.h"

namespace waitpath {

// 2: a query names its task's send; 3: progress records (a shard waits on its peers' progress).
inline constexpr uint8_t kEdgeRecordVersion = 3;

// A packet sent by a host of one shard to an address no host of that shard owns.
struct EdgeRecord {
  PacketKey key;              // as the packet matcher uses it (addresses, ports, seq, ack, len)
  int64_t send_ns = 0;        // in the sending shard's clock (its reference host's)
  std::string shard;          // the sending shard
  std::string host;           // the sending host
  std::string comm;           // the sending task's name
  int32_t tid = 0, pid = -1;  // 0: sent from interrupt context (no task to follow)
  std::vector<int64_t> cum;   // the sender's cumulative vector at the send, per leaf state
};

// A matched cross-shard packet, as its receiving shard saw it: one point of the pair's hull.
struct SyncSample {
  int64_t send_ns = 0;  // sending shard's clock
  int64_t recv_ns = 0;  // receiving shard's clock
};

// "Task `tid` of `host`, the one that sent at `send_ns`: its cumulative vector at `at_ns`?"
// (both in the owner's clock). The send names the task: the owner may have gone past it and
// seen the tid reused since.
struct CumQuery {
  std::string host;
  int32_t tid = 0;
  int64_t at_ns = 0;
  int64_t send_ns = 0;
};
// The answer: absent when the owner no longer (or never) had that history.
struct CumAnswer {
  bool known = false;
  std::vector<int64_t> cum;
};

// How far a shard has processed its hosts (docs/scale.md, "Progress"), published every
// ShardOptions::progress_ms: a shard holding a receive from one of these hosts releases it when
// its edge arrives or when the host's progress has passed the receive without it.
struct ProgressRecord {
  struct Host {
    std::string name;
    int64_t done_ns = 0;          // every event of the host before this is processed (shard clock)
    std::vector<uint32_t> addrs;  // the addresses it owns (learned from its traffic so far)
  };
  struct LastEdge {
    uint32_t daddr = 0;   // an address edges were published to...
    int64_t send_ns = 0;  // ...and the send time of the last one published before this record
  };
  std::string shard;
  std::vector<Host> hosts;
  std::vector<LastEdge> last_edges;
};

std::string EncodeEdge(const EdgeRecord& r);
std::optional<EdgeRecord> DecodeEdge(std::string_view bytes);
std::string EncodeSample(const SyncSample& s);
std::optional<SyncSample> DecodeSample(std::string_view bytes);
std::string EncodeQuery(const CumQuery& q);
std::optional<CumQuery> DecodeQuery(std::string_view bytes);
std::string EncodeAnswer(const CumAnswer& a);
std::optional<CumAnswer> DecodeAnswer(std::string_view bytes);
std::string EncodeProgress(const ProgressRecord& p);
std::optional<ProgressRecord> DecodeProgress(std::string_view bytes);

}  // namespace waitpath
