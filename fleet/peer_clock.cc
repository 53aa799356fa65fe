#include "fleet/peer_clock.h"

#include <algorithm>

#include "stream/clock_transform.h"

namespace waitpath {

bool PeerClock::AddPoint(int64_t peer_ns, int64_t local_ns, bool to_us) {
  static constexpr int64_t kBackNs = 1'000'000'000;
  // The peer's samples of our sends come late, over the bus: one from before the pair started
  // over (older than its first point) is a leftover of the old line, not a new start. Our own
  // receives come in our engine's order: those decide when our clock went back.
  if (!to_us && line_.first != std::numeric_limits<int64_t>::max() &&
      local_ns < line_.first - kBackNs) {
    return false;
  }
  // In our clock (the receive, or our send): monotonic while nothing restarts.
  const int64_t latest = to_us ? line_.last_to_us : line_.last_from_us;
  if ((latest != std::numeric_limits<int64_t>::min() && local_ns < latest - kBackNs) ||
      Outlived(local_ns)) {
    StartOver();
  }
  int64_t& last = to_us ? line_.last_to_us : line_.last_from_us;
  last = std::max(last, local_ns);
  line_.first = std::min(line_.first, local_ns);
  line_.last = std::max(line_.last, local_ns);
  if (to_us) {
    line_.pair.AddAtoB(peer_ns, local_ns);
  } else {
    line_.pair.AddBtoA(local_ns, peer_ns);
  }
  if (line_.pair.quality() != SyncQuality::kFail) return true;
  StartOver();
  return AddPoint(peer_ns, local_ns, to_us);
}

void PeerClock::AddDelay(int64_t peer_ns, int64_t local_ns) {
  line_.min_delay = std::min(line_.min_delay, local_ns - peer_ns);
}

bool PeerClock::Outlived(int64_t local_ns) const {
  static constexpr int64_t kGapNs = 10'000'000'000;
  if (line_.last == std::numeric_limits<int64_t>::min()) return false;
  return local_ns - line_.last > std::max(kGapNs, line_.last - line_.first);
}

void PeerClock::StartOver() {
  line_ = Line{};
  ++resets_;
}

bool PeerClock::Synchronized() const {
  return line_.pair.quality() == SyncQuality::kAccurate ||
         line_.pair.quality() == SyncQuality::kApproximate;
}

bool PeerClock::Plausible(int64_t peer_ns, int64_t local_ns) const {
  static constexpr int64_t kWindowNs = 10'000'000'000;
  if (!Judging()) return true;
  const int64_t send = ToLocal(peer_ns);
  const int64_t slack = static_cast<int64_t>(line_.pair.accuracy()) + 1'000'000;
  return send <= local_ns + slack && send >= local_ns - kWindowNs;
}

int64_t PeerClock::ToLocal(int64_t peer_ns) const {
  if (!Synchronized()) return peer_ns + line_.min_delay;
  return ClockTransform::FromLine(line_.pair.slope(), line_.pair.offset(), line_.pair.anchor())
      .ToReference(peer_ns);
}

int64_t PeerClock::ToRemote(int64_t local_ns) const {
  if (!Synchronized()) return local_ns - line_.min_delay;
  return ClockTransform::FromLine(line_.pair.slope(), line_.pair.offset(), line_.pair.anchor())
      .Inverse()
      .ToReference(local_ns);
}

}  // namespace waitpath
