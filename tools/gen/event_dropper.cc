#include "tools/gen/event_dropper.h"

#include "tools/gen/rng.h"

namespace waitpath::gen {

std::vector<DroppedRange> EventDropper::Apply(const std::string& host_name,
                                              std::vector<std::vector<TraceRecord>>& per_cpu,
                                              std::vector<std::vector<DiscardGap>>& gaps) const {
  gaps.assign(per_cpu.size(), {});
  std::vector<DroppedRange> dropped;
  if (loss_.host != host_name || loss_.share <= 0 || loss_.cpu < 0 ||
      static_cast<size_t>(loss_.cpu) >= per_cpu.size()) {
    return dropped;
  }
  Rng rng(seed_ ^ 0x10550000ULL);
  const auto chunk = static_cast<size_t>(std::max(1, loss_.chunk));
  std::vector<TraceRecord>& recs = per_cpu[static_cast<size_t>(loss_.cpu)];
  std::vector<TraceRecord> kept;
  kept.reserve(recs.size());
  const size_t chunks = (recs.size() + chunk - 1) / chunk;
  for (size_t c = 0; c < chunks; ++c) {
    size_t lo = c * chunk;
    size_t hi = std::min(recs.size(), lo + chunk);
    bool drop = c > 0 && c + 1 < chunks && rng.Unit() < loss_.share;
    if (!drop) {
      kept.insert(kept.end(), recs.begin() + static_cast<ptrdiff_t>(lo),
                  recs.begin() + static_cast<ptrdiff_t>(hi));
      continue;
    }
    auto& cpu_gaps = gaps[static_cast<size_t>(loss_.cpu)];
    if (!cpu_gaps.empty() && cpu_gaps.back().before == kept.size()) {
      // Adjacent lost runs form one gap.
      cpu_gaps.back().count += hi - lo;
      dropped.back().count += hi - lo;
      dropped.back().last = recs[hi - 1].t;
    } else {
      cpu_gaps.push_back({kept.size(), hi - lo});
      dropped.push_back({loss_.cpu, hi - lo, recs[lo].t, recs[hi - 1].t});
    }
  }
  recs = std::move(kept);
  return dropped;
}

}  // namespace waitpath::gen
