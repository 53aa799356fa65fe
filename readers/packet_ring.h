// The recent packets of one live host, bounded in bytes, with each trace's metadata text: what
// a capture of a slow wait is cut from when the relayd's stored files are not reachable
// (`live --capture-dir` without `--capture-traces`, docs/capture.md). The reader thread adds
// the packets it has decoded; the engine thread writes the ring out as CTF traces when a
// capture is cut.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "model/packet_bytes.h"

namespace waitpath {

class PacketRing {
 public:
  explicit PacketRing(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Reader thread. The whole metadata text of trace `trace` (its path on the relayd) so far.
  void SetMetadata(const std::string& trace, const std::string& text);
  // A packet of stream `channel` of `trace`, read; the oldest packets go while the ring is over
  // its size. Gives back a buffer to reuse (empty when none).
  PacketBytes Add(const std::string& trace, const std::string& channel, PacketBytes&& packet);

  // Any thread. Writes every trace of the ring as a CTF trace under `dir` (`dir/trace-N`:
  // `metadata` and one file per stream, its packets in order); returns their directories, or
  // nothing with `error` when a file cannot be written.
  std::vector<std::string> WriteTo(const std::string& dir, std::string* error) const;

  struct Counts {
    uint64_t packets = 0;  // in the ring
    uint64_t bytes = 0;
    uint64_t dropped = 0;  // packets that went out of it (oldest first)
  };
  Counts counts() const;

 private:
  struct Trace {
    std::string path;
    std::string metadata;
  };
  struct Packet {
    uint32_t trace = 0;
    std::string channel;
    PacketBytes bytes;
  };

  const size_t max_bytes_;
  mutable std::mutex mutex_;
  std::vector<Trace> traces_;
  std::deque<Packet> packets_;  // oldest first
  Counts counts_;
};

}  // namespace waitpath
