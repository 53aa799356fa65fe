// Clock synchronization from exchanged TCP packets: cross-host packet matching with a
// two-phase bootstrap, an incremental convex-hull synchronization per host pair (the
// behaviour of Trace Compass's SyncAlgorithmFullyIncremental), and a spanning tree over
// hosts by accuracy that composes each host's transform to the reference clock.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/event.h"
#include "stream/clock_transform.h"

namespace waitpath {

enum class SyncQuality : uint8_t { kIncomplete, kApproximate, kAccurate, kFail };
std::string_view SyncQualityName(SyncQuality q);

// One host pair (a < b): finds t_b = slope * t_a + offset from messages both ways.
class PairSync {
 public:
  // A message sent on host a at `sent` and received on b at `received` (or the reverse).
  void AddAtoB(int64_t sent_a, int64_t received_b);
  void AddBtoA(int64_t sent_b, int64_t received_a);

  // The largest difference of rates between two hosts' clocks a pair's line may have when
  // the points allow a nearer one (crystals within +/-100 ppm, NTP slewing at most 500 ppm).
  static constexpr double kMaxRateDifference = 1e-3;

  // The line is found when one of these is read after new points, not at each point (a pair of
  // busy hosts adds a point per matched packet; the line is read per released batch). Not for
  // concurrent readers.
  SyncQuality quality() const { return Refresh().quality_; }
  double slope() const { return Refresh().slope_; }
  double offset() const { return Refresh().offset_; }  // t_b = slope * t_a + offset
  // ns; half the band between the bounding lines
  double accuracy() const { return Refresh().accuracy_; }
  uint64_t matches() const { return matches_; }
  int64_t anchor() const { return anchor_; }

 private:
  struct Point {
    double x, y;  // ns relative to anchor_ (x on host a, y on host b, minus anchor_)
  };
  void AddPoint(int64_t t_a, int64_t t_b, bool a_to_b);
  const PairSync& Refresh() const {
    if (stale_) {
      stale_ = false;
      Update();
    }
    return *this;
  }
  void Update() const;
  // The offsets a line of this slope may have: below every a->b point, above every b->a one.
  void Band(double slope, double* lo, double* hi) const;
  static void PushLowerHull(std::vector<Point>& hull, Point p);
  static void PushUpperHull(std::vector<Point>& hull, Point p);

  bool anchored_ = false;
  int64_t anchor_ = 0;
  std::vector<Point> upper_;  // a->b: the line must pass below them; their lower hull
  std::vector<Point> lower_;  // b->a: the line must pass above them; their upper hull
  double min_x_ = 0, max_x_ = 0;
  mutable bool stale_ = false;  // points added since the line was found
  mutable SyncQuality quality_ = SyncQuality::kIncomplete;
  mutable double slope_ = 1.0, offset_ = 0.0, accuracy_ = 0.0;
  uint64_t matches_ = 0;
};

struct HostClock {
  std::string host;
  std::string reference;     // the reference host, or for a host of a component the
                             // reference does not reach, that component's root (on_tree)
  ClockTransform transform;  // host -> reference
  SyncQuality quality = SyncQuality::kIncomplete;
  double accuracy = 0.0;  // ns, accumulated along the spanning tree
  uint64_t matches = 0;   // matched packets on the tree edge to this host (or, off the tree,
                          // on a pair of its that never found a line)
  bool on_tree = false;   // the reference, or reached from `reference`: `transform` comes from
                          // packets
};

struct SyncCounters {
  uint64_t sends = 0, receives = 0, matched = 0, same_host = 0, expired = 0;
  size_t pending = 0, peak_pending = 0;
};

class ClockSync {
 public:
  // `two_phase`: before a pair is synchronized, unmatched packets wait `bootstrap_window`
  // (clocks may be seconds apart); after, only `window` beyond the estimated arrival.
  ClockSync(std::vector<std::string> hosts, size_t reference, bool two_phase = true,
            int64_t bootstrap_window_ns = 60'000'000'000, int64_t window_ns = 2'000'000'000);

  // Live: a host that appeared while running.
  void AddHost(std::string name) {
    hosts_.push_back(std::move(name));
    watermark_.push_back(std::numeric_limits<int64_t>::min());
    dirty_ = true;
  }
  // Changes whenever a match may have changed the transforms.
  uint64_t version() const { return counters_.matched; }

  // Packet events as they are read (host timestamps). Only keyed (TCP) packets match across hosts.
  void OnPacket(uint16_t host, int64_t ts, bool out, const PacketKey& key);
  // Host progress: lets unmatched packets of other hosts expire.
  void OnWatermark(uint16_t host, int64_t ts);

  // Recomputes the spanning tree and every host's transform (after new matches).
  const std::vector<HostClock>& Clocks();
  const PairSync* Pair(uint16_t a, uint16_t b) const;
  const SyncCounters& counters() const { return counters_; }
  // Matched packets that the current transforms show received before they were sent
  // (message inversions), over the last kKeptMatches matches.
  uint64_t CountInversions();
  static constexpr size_t kKeptMatches = 1 << 20;
  size_t reference() const { return reference_; }
  // Live: the reference chosen once the hosts are known (before any transform is used).
  void SetReference(size_t reference) {
    reference_ = reference;
    dirty_ = true;
  }

 private:
  struct Pending {
    uint16_t host;
    bool out;
    int64_t ts;
    uint64_t key;
  };
  PairSync& PairOf(uint16_t a, uint16_t b);
  void Match(const Pending& send, uint16_t recv_host, int64_t recv_ts);
  void Expire();

  std::vector<std::string> hosts_;
  size_t reference_;
  bool two_phase_;
  int64_t bootstrap_window_, window_;
  // By key. Almost always one packet per key, so a vector (one small allocation) rather than
  // a deque (a 512-byte node per key: a fifth of the sync pass's time in a profile).
  std::unordered_map<uint64_t, std::vector<Pending>> pending_;
  std::deque<Pending> order_;  // arrival order, for expiry
  std::vector<int64_t> watermark_;
  std::unordered_map<uint32_t, PairSync> pairs_;
  std::vector<HostClock> clocks_;
  std::vector<bool> linked_;  // has a usable pair: its packets can use the short window
  struct MatchRecord {
    uint16_t send_host, recv_host;
    int64_t sent, received;
  };
  std::vector<MatchRecord> kept_;  // ring of the last kKeptMatches, to check inversions
  size_t kept_next_ = 0;
  bool dirty_ = true;
  SyncCounters counters_;
};

}  // namespace waitpath
