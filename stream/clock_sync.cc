#include "stream/clock_sync.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace waitpath {

std::string_view SyncQualityName(SyncQuality q) {
  switch (q) {
    case SyncQuality::kIncomplete:
      return "incomplete";
    case SyncQuality::kApproximate:
      return "approximate";
    case SyncQuality::kAccurate:
      return "accurate";
    case SyncQuality::kFail:
      return "fail";
  }
  return "incomplete";
}

namespace {
double Cross(double ax, double ay, double bx, double by, double cx, double cy) {
  return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}
}  // namespace

// Lower hull, left to right: every turn counter-clockwise.
void PairSync::PushLowerHull(std::vector<Point>& hull, Point p) {
  if (!hull.empty() && p.x < hull.back().x) {
    // Out of order (rare: packets are read in time order per host): rebuild with it.
    std::vector<Point> pts = hull;
    pts.push_back(p);
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return a.x < b.x || (a.x == b.x && a.y < b.y);
    });
    hull.clear();
    for (const Point& q : pts) PushLowerHull(hull, q);
    return;
  }
  if (!hull.empty() && p.x == hull.back().x) {
    if (p.y >= hull.back().y) return;  // the lower point of a vertical pair bounds the line
    hull.pop_back();
  }
  while (hull.size() >= 2 && Cross(hull[hull.size() - 2].x, hull[hull.size() - 2].y, hull.back().x,
                                   hull.back().y, p.x, p.y) <= 0) {
    hull.pop_back();
  }
  hull.push_back(p);
}

// Upper hull, left to right: every turn clockwise.
void PairSync::PushUpperHull(std::vector<Point>& hull, Point p) {
  if (!hull.empty() && p.x < hull.back().x) {
    std::vector<Point> pts = hull;
    pts.push_back(p);
    std::sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) {
      return a.x < b.x || (a.x == b.x && a.y > b.y);
    });
    hull.clear();
    for (const Point& q : pts) PushUpperHull(hull, q);
    return;
  }
  if (!hull.empty() && p.x == hull.back().x) {
    if (p.y <= hull.back().y) return;
    hull.pop_back();
  }
  while (hull.size() >= 2 && Cross(hull[hull.size() - 2].x, hull[hull.size() - 2].y, hull.back().x,
                                   hull.back().y, p.x, p.y) >= 0) {
    hull.pop_back();
  }
  hull.push_back(p);
}

void PairSync::AddAtoB(int64_t sent_a, int64_t received_b) {
  AddPoint(sent_a, received_b, /*a_to_b=*/true);
}

void PairSync::AddBtoA(int64_t sent_b, int64_t received_a) {
  AddPoint(received_a, sent_b, /*a_to_b=*/false);
}

// A message as a point (time on a, time on b): a->b ones bound the line from above, b->a
// ones from below.
void PairSync::AddPoint(int64_t t_a, int64_t t_b, bool a_to_b) {
  if (!anchored_) {
    anchored_ = true;
    anchor_ = t_a;
  }
  const Point p{static_cast<double>(t_a - anchor_), static_cast<double>(t_b - anchor_)};
  min_x_ = matches_ ? std::min(min_x_, p.x) : p.x;
  max_x_ = matches_ ? std::max(max_x_, p.x) : p.x;
  ++matches_;
  if (a_to_b) {
    PushLowerHull(upper_, p);
  } else {
    PushUpperHull(lower_, p);
  }
  stale_ = true;
}

// Feasible lines y = s x + c pass below every a->b point and above every b->a point. The
// steepest and the flattest feasible lines each touch one point of each hull; the result is
// their bisector, and the accuracy half their vertical distance over the observed range.
void PairSync::Update() const {
  if (upper_.empty() || lower_.empty()) {
    quality_ = SyncQuality::kIncomplete;
    return;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double s_max = kInf, s_min = -kInf;
  Point max_p{}, min_p{};
  for (const Point& l : lower_) {
    for (const Point& u : upper_) {
      if (u.x > l.x) {
        const double s = (u.y - l.y) / (u.x - l.x);
        if (s < s_max) {
          s_max = s;
          max_p = l;
        }
      } else if (l.x > u.x) {
        const double s = (l.y - u.y) / (l.x - u.x);
        if (s > s_min) {
          s_min = s;
          min_p = u;
        }
      }
    }
  }
  if (std::isfinite(s_max) && std::isfinite(s_min)) {
    if (s_min > s_max) {
      quality_ = SyncQuality::kFail;  // no line separates them: keep the last good one
      return;
    }
    // Lines: y = s_max (x - max_p.x) + max_p.y and y = s_min (x - min_p.x) + min_p.y.
    const double c_max = max_p.y - s_max * max_p.x, c_min = min_p.y - s_min * min_p.x;
    double xi = 0.5 * (min_x_ + max_x_);
    if (s_max != s_min) xi = (c_min - c_max) / (s_max - s_min);
    const double yi = 0.5 * ((s_max * xi + c_max) + (s_min * xi + c_min));
    slope_ = std::tan(0.5 * (std::atan(s_max) + std::atan(s_min)));
    const double c = yi - slope_ * xi;
    offset_ = c + static_cast<double>(anchor_) * (1.0 - slope_);
    const double gap_lo = std::abs((s_max * min_x_ + c_max) - (s_min * min_x_ + c_min));
    const double gap_hi = std::abs((s_max * max_x_ + c_max) - (s_min * max_x_ + c_min));
    accuracy_ = 0.5 * std::max(gap_lo, gap_hi);
    quality_ = SyncQuality::kAccurate;
    // Two hosts' clocks run at rates within a fraction of a thousandth of each other; the
    // slopes the points allow, over a short span, may differ from 1 by far more (a few
    // exchanges 0.1 ms apart allowed 0.56 to 3.75): a bisector as steep as that is the hull's
    // uncertainty, not the clocks', and used past the points (a live pair places each new
    // message with its line) it is off by its slope's error times the distance (15 ms at
    // 50 ms). The slope is then the one nearest to 1 that the points allow (1 itself, as for an
    // approximate pair, unless they bound it away), with the offset in the middle of their band
    // at that slope.
    const double s_lo = std::max(s_min, 1.0 - kMaxRateDifference);
    const double s_hi = std::min(s_max, 1.0 + kMaxRateDifference);
    if (s_lo > s_hi || (slope_ >= s_lo && slope_ <= s_hi)) return;  // nothing to hold, or held
    slope_ = std::clamp(1.0, s_lo, s_hi);
    double lo = 0, hi = 0;
    Band(slope_, &lo, &hi);
    offset_ = 0.5 * (lo + hi) + static_cast<double>(anchor_) * (1.0 - slope_);
    // Within the points' span: half the band at this slope, and what the slopes still allowed
    // (at most 2 kMaxRateDifference) over half the span.
    accuracy_ = 0.5 * (hi - lo) + (s_hi - s_lo) * 0.5 * (max_x_ - min_x_);
    return;
  }
  // Messages both ways, but not enough spread to bound both slopes: assume no drift and
  // take the middle of the band of offsets the messages allow.
  double lo = 0, hi = 0;
  Band(1.0, &lo, &hi);
  if (lo > hi) {
    quality_ = SyncQuality::kFail;
    return;
  }
  slope_ = 1.0;
  offset_ = 0.5 * (lo + hi);  // anchor terms cancel with slope 1
  accuracy_ = 0.5 * (hi - lo);
  quality_ = SyncQuality::kApproximate;
}

void PairSync::Band(double slope, double* lo, double* hi) const {
  *lo = -std::numeric_limits<double>::infinity();
  *hi = std::numeric_limits<double>::infinity();
  for (const Point& l : lower_) *lo = std::max(*lo, l.y - slope * l.x);
  for (const Point& u : upper_) *hi = std::min(*hi, u.y - slope * u.x);
}

ClockSync::ClockSync(std::vector<std::string> hosts, size_t reference, bool two_phase,
                     int64_t bootstrap_window_ns, int64_t window_ns)
    : hosts_(std::move(hosts)),
      reference_(reference),
      two_phase_(two_phase),
      bootstrap_window_(bootstrap_window_ns),
      window_(window_ns),
      watermark_(hosts_.size(), std::numeric_limits<int64_t>::min()) {}

PairSync& ClockSync::PairOf(uint16_t a, uint16_t b) {
  return pairs_[(static_cast<uint32_t>(std::min(a, b)) << 16) | std::max(a, b)];
}

const PairSync* ClockSync::Pair(uint16_t a, uint16_t b) const {
  auto it = pairs_.find((static_cast<uint32_t>(std::min(a, b)) << 16) | std::max(a, b));
  return it == pairs_.end() ? nullptr : &it->second;
}

void ClockSync::Match(const Pending& send, uint16_t recv_host, int64_t recv_ts) {
  ++counters_.matched;
  const MatchRecord record{send.host, recv_host, send.ts, recv_ts};
  if (kept_.size() < kKeptMatches) {
    kept_.push_back(record);
  } else {
    kept_[kept_next_++ % kKeptMatches] = record;
  }
  PairSync& pair = PairOf(send.host, recv_host);
  if (send.host < recv_host) {
    pair.AddAtoB(send.ts, recv_ts);
  } else {
    pair.AddBtoA(send.ts, recv_ts);
  }
  dirty_ = true;
}

void ClockSync::OnPacket(uint16_t host, int64_t ts, bool out, const PacketKey& key) {
  if (!key.has_tcp) return;
  (out ? counters_.sends : counters_.receives)++;
  const uint64_t k = TcpKeyHash(key);
  auto it = pending_.find(k);
  if (it != pending_.end()) {
    auto& q = it->second;
    auto m = std::find_if(q.begin(), q.end(), [&](const Pending& p) { return p.out != out; });
    if (m != q.end()) {
      const Pending other = *m;
      q.erase(m);
      if (q.empty()) pending_.erase(it);
      --counters_.pending;
      if (other.host == host) {
        ++counters_.same_host;  // loopback: not a clock link
      } else if (out) {
        Match(Pending{host, true, ts, k}, other.host, other.ts);
      } else {
        Match(other, host, ts);
      }
      return;
    }
  }
  const Pending p{host, out, ts, k};
  pending_[k].push_back(p);
  order_.push_back(p);
  ++counters_.pending;
  counters_.peak_pending = std::max(counters_.peak_pending, counters_.pending);
}

void ClockSync::OnWatermark(uint16_t host, int64_t ts) {
  if (host < watermark_.size() && ts > watermark_[host]) {
    watermark_[host] = ts;
    Expire();
  }
}

// An unmatched packet waits until every other host has gone past it by the window: the
// bootstrap window while its host is not synchronized (clocks may be seconds apart), then
// the short one, compared in reference time (the two-phase bootstrap of the paper).
void ClockSync::Expire() {
  const std::vector<HostClock>& clocks = Clocks();
  while (!order_.empty()) {
    const Pending& p = order_.front();
    const bool synced = linked_[p.host];
    const int64_t window = (two_phase_ && synced) ? window_ : bootstrap_window_;
    const int64_t at = clocks[p.host].transform.ToReference(p.ts);
    bool behind_everyone = true;
    // Alone (live, before a second host's session appears): kept for the bootstrap window of
    // its own time, not dropped at once for want of anyone to be behind; the host that comes
    // may be the one it talked to.
    if (watermark_.size() < 2) {
      behind_everyone = watermark_[p.host] != std::numeric_limits<int64_t>::min() &&
                        watermark_[p.host] >= p.ts + bootstrap_window_;
    }
    for (uint16_t h = 0; h < watermark_.size(); ++h) {
      if (h == p.host) continue;
      if (watermark_[h] == std::numeric_limits<int64_t>::min() ||
          clocks[h].transform.ToReference(watermark_[h]) < at + window) {
        behind_everyone = false;
        break;
      }
    }
    if (!behind_everyone) break;
    auto it = pending_.find(p.key);
    if (it != pending_.end()) {
      auto& q = it->second;
      auto m = std::find_if(q.begin(), q.end(), [&](const Pending& x) {
        return x.host == p.host && x.ts == p.ts && x.out == p.out;
      });
      if (m != q.end()) {
        q.erase(m);
        --counters_.pending;
        ++counters_.expired;
      }
      if (q.empty()) pending_.erase(it);
    }
    order_.pop_front();
  }
}

uint64_t ClockSync::CountInversions() {
  const std::vector<HostClock>& clocks = Clocks();
  uint64_t n = 0;
  for (const MatchRecord& m : kept_) {
    if (clocks[m.recv_host].transform.ToReference(m.received) <
        clocks[m.send_host].transform.ToReference(m.sent))
      ++n;
  }
  return n;
}

const std::vector<HostClock>& ClockSync::Clocks() {
  if (!dirty_ && !clocks_.empty()) return clocks_;
  dirty_ = false;
  const size_t n = hosts_.size();
  if (n == 0) {
    clocks_.clear();
    return clocks_;
  }
  clocks_.assign(n, HostClock{});
  for (size_t i = 0; i < n; ++i) {
    clocks_[i].host = hosts_[i];
    clocks_[i].reference = hosts_[reference_];
  }
  clocks_[reference_].quality = SyncQuality::kAccurate;
  clocks_[reference_].on_tree = true;
  // Usable edges, tightest first (approximate ones after every accurate one).
  struct Edge {
    double weight;
    uint16_t a, b;
    const PairSync* pair;
  };
  std::vector<Edge> edges;
  for (const auto& [key, pair] : pairs_) {
    if (pair.quality() == SyncQuality::kIncomplete) continue;
    if (pair.quality() == SyncQuality::kFail && pair.accuracy() == 0.0 && pair.slope() == 1.0 &&
        pair.offset() == 0.0) {
      continue;  // failed before ever succeeding
    }
    const double penalty = pair.quality() == SyncQuality::kAccurate ? 0.0 : 1e18;
    edges.push_back(Edge{pair.accuracy() + penalty, static_cast<uint16_t>(key >> 16),
                         static_cast<uint16_t>(key & 0xffff), &pair});
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge& x, const Edge& y) { return x.weight < y.weight; });
  // Kruskal: a spanning forest by accuracy.
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<std::vector<const Edge*>> adjacent(n);
  linked_.assign(n, false);
  for (const Edge& e : edges) {
    linked_[e.a] = linked_[e.b] = true;
    const size_t ra = find(e.a), rb = find(e.b);
    if (ra == rb) continue;
    parent[ra] = rb;
    adjacent[e.a].push_back(&e);
    adjacent[e.b].push_back(&e);
  }
  // Walk the tree from `root`, composing each host's transform to the root's clock (`root` is
  // taken as exact: the reference, or the root of a component the reference does not reach).
  std::vector<bool> seen(n, false);
  auto walk = [&](size_t root) {
    std::vector<size_t> stack{root};
    seen[root] = true;
    while (!stack.empty()) {
      const size_t p = stack.back();
      stack.pop_back();
      for (const Edge* e : adjacent[p]) {
        const size_t c = e->a == p ? e->b : e->a;
        if (seen[c]) continue;
        seen[c] = true;
        // The pair gives t_b = slope * t_a + offset.
        const ClockTransform a_to_b =
            ClockTransform::FromLine(e->pair->slope(), e->pair->offset(), e->pair->anchor());
        const ClockTransform child_to_parent = (c == e->b) ? a_to_b.Inverse() : a_to_b;
        clocks_[c].transform = child_to_parent.Then(clocks_[p].transform);
        clocks_[c].accuracy = clocks_[p].accuracy + e->pair->accuracy();
        clocks_[c].reference = hosts_[root];
        const SyncQuality q = e->pair->quality();
        const SyncQuality pq = p == root ? SyncQuality::kAccurate : clocks_[p].quality;
        clocks_[c].quality = (q == SyncQuality::kFail || pq == SyncQuality::kFail)
                                 ? SyncQuality::kFail
                             : (q == SyncQuality::kAccurate && pq == SyncQuality::kAccurate)
                                 ? SyncQuality::kAccurate
                                 : SyncQuality::kApproximate;
        clocks_[c].matches = e->pair->matches();
        clocks_[c].on_tree = true;
        stack.push_back(c);
      }
    }
  };
  walk(reference_);
  // Hosts the reference's tree does not reach but that exchanged packets among themselves
  // (live: two hosts whose sessions started after the reference's had ended; a pair that
  // never talks to the others) are synchronized with each other: each such component keeps
  // the clock of its first host by name (itself off the tree, its times its own clock's), the
  // others' transforms lead to it, so that the packets between them are followed in one clock.
  std::vector<size_t> root_of(n, n);  // by union-find representative
  for (size_t h = 0; h < n; ++h) {
    if (seen[h] || adjacent[h].empty()) continue;
    size_t& r = root_of[find(h)];
    if (r == n || hosts_[h] < hosts_[r]) r = h;
  }
  for (size_t r : root_of) {
    if (r != n) walk(r);
  }
  // A host off the tree whose packets matched but contradict every line (a pair that failed
  // before it ever found one) is `fail`, with those matches, not `incomplete` with none: the
  // packets were there, and the user is told that they disagree.
  for (const auto& [key, pair] : pairs_) {
    if (pair.quality() != SyncQuality::kFail) continue;
    for (const uint16_t h :
         {static_cast<uint16_t>(key >> 16), static_cast<uint16_t>(key & 0xffff)}) {
      if (h >= n || clocks_[h].on_tree) continue;
      clocks_[h].quality = SyncQuality::kFail;
      clocks_[h].matches = std::max(clocks_[h].matches, pair.matches());
    }
  }
  return clocks_;
}

}  // namespace waitpath
