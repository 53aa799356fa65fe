#include "tools/gen/active_path_truth.h"

#include <algorithm>

namespace waitpath::gen {

PathBreakdown ActivePathTruth::Compute(int32_t task, Ns a, Ns b) const {
  PathBreakdown out;
  auto add = [&](int32_t owner, Leaf leaf, Ns lo, Ns hi) {
    if (hi <= lo) return;
    out.total[static_cast<size_t>(leaf)] += hi - lo;
    out.by_task[owner][static_cast<size_t>(leaf)] += hi - lo;
  };
  struct Item {
    int32_t task;
    Ns lo;
    Ns hi;
  };
  // A wait resolved when history before `horizon` may be gone: [lo, horizon) is unknown at
  // the waker. Returns where the waker's path is followed from.
  auto evicted = [&](int32_t waker, Ns horizon, Ns lo, Ns hi) {
    if (retention_ <= 0 || horizon <= lo) return lo;
    const Ns cut = std::min(hi, horizon);
    add(waker, Leaf::kUnknown, lo, cut);
    return cut;
  };
  // Explicit stack: wake chains (mutex convoys, long request chains) can be deep.
  std::vector<Item> stack{{task, a, b}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    if (it.hi <= it.lo) continue;
    const TaskTimeline& tl = timelines_[it.task];
    if (tl.segments().empty() || it.lo < tl.start()) {
      // Before the waker existed: follow its fork link to the parent.
      Ns cut = tl.segments().empty() ? it.hi : std::min(it.hi, tl.start());
      int32_t parent = tasks_[it.task].parent;
      if (parent >= 0) {
        stack.push_back({parent, it.lo, cut});
      } else {
        add(it.task, Leaf::kUnknown, it.lo, cut);
      }
      it.lo = cut;
      if (it.hi <= it.lo) continue;
    }
    if (it.hi > tl.end()) {
      add(it.task, Leaf::kUnknown, std::max(it.lo, tl.end()), it.hi);
      it.hi = std::max(it.lo, tl.end());
    }
    const auto& segs = tl.segments();
    auto first = std::upper_bound(segs.begin(), segs.end(), it.lo,
                                  [](Ns t, const Segment& s) { return t < s.begin; });
    size_t i = static_cast<size_t>(first - segs.begin()) - 1;
    for (; i < segs.size() && segs[i].begin < it.hi; ++i) {
      const Segment& s = segs[i];
      Ns lo = std::max(it.lo, s.begin);
      Ns hi = std::min(it.hi, tl.SegmentEnd(i));
      if (hi <= lo) continue;
      switch (s.state) {
        case TaskState::kRunning:
          add(it.task, Leaf::kRunning, lo, hi);
          break;
        case TaskState::kInterrupted:
          add(it.task, Leaf::kInterrupted, lo, hi);
          break;
        case TaskState::kPreempted:
          add(it.task, Leaf::kPreempted, lo, hi);
          break;
        case TaskState::kBlocked:
          switch (s.cause) {
            case WakeCause::kNone:
              add(it.task, Leaf::kBlocked, lo, hi);
              break;
            case WakeCause::kTask:
              lo = evicted(s.waker, tl.SegmentEnd(i) - retention_, lo, hi);
              stack.push_back({s.waker, lo, hi});
              break;
            case WakeCause::kPacket:
              if (s.waker >= 0)
                lo = evicted(s.waker, std::min(tl.SegmentEnd(i) - retention_, s.sent), lo, hi);
              if (s.waker >= 0 && lo < s.sent) stack.push_back({s.waker, lo, std::min(hi, s.sent)});
              add(it.task, Leaf::kNetwork, s.waker >= 0 ? std::max(lo, s.sent) : lo, hi);
              break;
            case WakeCause::kTimer:
              add(it.task, Leaf::kTimer, lo, hi);
              break;
            case WakeCause::kDisk:
              add(it.task, Leaf::kDisk, lo, hi);
              break;
            case WakeCause::kIrq:
              add(it.task, Leaf::kIrq, lo, hi);
              break;
            case WakeCause::kIpi:
              add(it.task, Leaf::kIpi, lo, hi);
              break;
          }
          break;
      }
    }
  }
  return out;
}

}  // namespace waitpath::gen
