#include "exporters/wait_headline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace waitpath {

bool IsUntracedPeerWait(const ResolvedWait& wait) {
  // Woken by network receive processing whose packet has no traced sender (kLeaf network:
  // the matcher found no send) or a packet link without its sender.
  return (wait.link.type == WaitLink::Type::kLeaf && wait.link.leaf == Leaf::kNetwork) ||
         (wait.link.type == WaitLink::Type::kPacket && wait.link.task == kNoTask);
}

WaitHeadline HeadlineOf(const ResolvedWait& wait, std::span<const PathSegment> path) {
  WaitHeadline h;
  h.duration_ns = wait.end - wait.start;
  h.untraced_peer = IsUntracedPeerWait(wait);
  // Largest state first; on a tie the earlier state in Leaf order (running before
  // preempted...), so that the same wait always reads the same.
  int best = -1, second = -1;
  for (int i = 0; i < kLeafCount; ++i) {
    const int64_t ns = wait.breakdown.ns[i];
    if (ns <= 0) continue;
    if (best < 0 || ns > wait.breakdown.ns[best]) {
      second = best;
      best = i;
    } else if (second < 0 || ns > wait.breakdown.ns[second]) {
      second = i;
    }
  }
  if (best < 0) return h;  // a wait of zero length
  h.leaf = static_cast<Leaf>(best);
  h.leaf_ns = wait.breakdown.ns[best];
  if (second >= 0 && wait.breakdown.ns[second] >= kHeadlineSecondShare * h.duration_ns) {
    h.second = static_cast<Leaf>(second);
    h.second_ns = wait.breakdown.ns[second];
  }
  // Where the path was while in that state: the task holding most of it. Paths are short
  // (tens of pieces), so a small linear tally beats a map.
  std::vector<std::pair<Utid, int64_t>> by_task;
  for (const PathSegment& p : path) {
    if (p.leaf != h.leaf) continue;
    const Utid u = p.task == kNoTask ? wait.task : p.task;
    auto it = std::find_if(by_task.begin(), by_task.end(),
                           [u](const auto& entry) { return entry.first == u; });
    if (it == by_task.end()) {
      by_task.emplace_back(u, p.end - p.start);
    } else {
      it->second += p.end - p.start;
    }
  }
  int64_t most = -1;
  for (const auto& [u, ns] : by_task) {
    if (ns > most) {
      most = ns;
      h.where = u;
    }
  }
  if (h.where == kNoTask) h.where = wait.task;
  return h;
}

namespace {

// Whole percents, except that a share that is not 0 or 100 never reads as either.
std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "0%";
  const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  long rounded = std::lround(p);
  if (rounded == 0 && part > 0) return "<1%";
  if (rounded == 100 && part < whole) rounded = 99;
  return fmt::format("{}%", rounded);
}

}  // namespace

std::string FormatHeadline(const WaitHeadline& h, std::string_view who) {
  if (h.duration_ns <= 0) return "-";
  std::string s;
  if (h.untraced_peer) {
    s = fmt::format("network {} from an untraced peer", Percent(h.leaf_ns, h.duration_ns));
  } else {
    s = fmt::format("{} {} on {}", LeafName(h.leaf), Percent(h.leaf_ns, h.duration_ns), who);
  }
  if (h.second_ns > 0) {
    s += fmt::format(" ({} {})", LeafName(h.second), Percent(h.second_ns, h.duration_ns));
  }
  return s;
}

std::string FormatWaitDuration(int64_t ns) {
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", ns / 1e6);
  return fmt::format("{} us", ns / 1000);
}

}  // namespace waitpath
