// Another shard's clock as one shard sees it (docs/scale.md, "Who computes what"): the hull of
// the matched packets of both directions (stream/clock_sync.h's PairSync; a = the peer's clock,
// b = ours), a one-way estimate until there are points both ways, and when the line has to
// start over. Engine thread only.
#pragma once

#include <cstdint>
#include <limits>

#include "stream/clock_sync.h"

namespace waitpath {

class PeerClock {
 public:
  // A matched packet: the peer's send and our receive (`to_us`), or our send and the peer's
  // receive as the peer published it. The hull needs its points in time order and a line that
  // fits them: a peer whose clock went back (a host restarted, a trace replayed again), a point
  // far past the others (Outlived) or points that no line fits make the line start over from
  // this point, counted. False: a sample of our send from before the line started over, a
  // leftover of the old line (the peer's samples come late, over the bus), dropped.
  bool AddPoint(int64_t peer_ns, int64_t local_ns, bool to_us);
  // The peer's send at `peer_ns` received here at `local_ns`: until the hull has points both
  // ways, the peer's clock is ours shifted by the fastest packet's wire time.
  void AddDelay(int64_t peer_ns, int64_t local_ns);

  // The line is known over the span of its points; beyond it, its error grows with the
  // uncertainty of its slope: a line fitted over 0.4 s to +/-96 us may be off by 24 ms 100 s
  // later (measured: genuine edges were then refused as stale, and their waits left to network).
  // A time further past the last point than the span itself, and more than 10 s, is a new start:
  // a pair that has been silent that long (or whose clocks jumped ahead: a replay, a host
  // suspended) bootstraps again, one way first, as at the first exchange.
  bool Outlived(int64_t local_ns) const;
  void StartOver();

  bool Synchronized() const;
  // Whether an edge's time can be judged at all: synchronized, or a one-way estimate.
  bool Judging() const {
    return Synchronized() || line_.min_delay != std::numeric_limits<int64_t>::max();
  }
  // The same TCP key comes again (a replayed or restarted flow, sequence numbers wrapping): an
  // edge whose send (`peer_ns`), in our clock, is not shortly before the receive at `local_ns`
  // is another packet's. True when nothing can be judged yet.
  bool Plausible(int64_t peer_ns, int64_t local_ns) const;
  int64_t ToLocal(int64_t peer_ns) const;
  int64_t ToRemote(int64_t local_ns) const;

  const PairSync& pair() const { return line_.pair; }
  uint64_t resets() const { return resets_; }

 private:
  struct Line {
    PairSync pair;
    // Until the pair has points both ways (the first exchange: the other direction's samples
    // come from the peer, later): the smallest receive - send seen, i.e. the peer's clock
    // shifted by the fastest packet's wire time, an error of at most that time.
    int64_t min_delay = std::numeric_limits<int64_t>::max();
    // The latest point each way, in our clock (AddPoint).
    int64_t last_to_us = std::numeric_limits<int64_t>::min();
    int64_t last_from_us = std::numeric_limits<int64_t>::min();
    // The span of the points in our clock, both ways: how far the line may be extrapolated
    // (Outlived).
    int64_t first = std::numeric_limits<int64_t>::max();
    int64_t last = std::numeric_limits<int64_t>::min();
  };

  Line line_;
  uint64_t resets_ = 0;  // times the line started over
};

}  // namespace waitpath
