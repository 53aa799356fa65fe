#include "incremental/active_path_resolver.h"

namespace waitpath {

// F_X(t) for t inside x's retained history.
StateVec ActivePathResolver::CumAt(Utid x, const TaskHistory& h, int64_t t, int depth) {
  const size_t i = h.Find(t);
  const Segment& s = h.at(i);
  if (s.kind != SegmentKind::kBlocked) return s.cum + StateVec::Of(OwnLeaf(s.kind), t - s.start);
  if (s.link.type == WaitLink::Type::kPending) return s.cum + StateVec::Of(Leaf::kBlocked, t - s.start);
  return s.cum + LinkDelta(x, s.link, s.start, t, depth + 1);
}

StateVec ActivePathResolver::Delta(Utid x, int64_t a, int64_t b, int depth) {
  StateVec out;
  if (a >= b) return out;
  if (x == kNoTask) return StateVec::Of(Leaf::kUnknown, b - a);
  if (depth > max_depth_) {
    ++counters_.depth_limited;
    return StateVec::Of(Leaf::kUnknown, b - a);
  }
  const Task& task = tasks_[x];
  const TaskHistory& h = histories_[x];
  // Before x existed its path is its parent's (fork link); before it was first seen, or in
  // evicted history, nothing is known.
  if (a < h.start()) {
    const int64_t cut = std::min(b, h.start());
    if (task.parent != kNoTask && task.birth != kNever && a < task.birth) {
      const int64_t fork_cut = std::min(cut, task.birth);
      out += Delta(task.parent, a, fork_cut, depth + 1);
      if (fork_cut < cut) out[Leaf::kUnknown] += cut - fork_cut;
    } else {
      if (h.evicted_until() > a) ++counters_.evicted_reads;
      out[Leaf::kUnknown] += cut - a;
    }
    a = cut;
    if (a >= b) return out;
  }
  out += CumAt(x, h, b, depth);
  out -= CumAt(x, h, a, depth);
  return out;
}

StateVec ActivePathResolver::LinkDelta(Utid waiter, const WaitLink& link, int64_t a, int64_t b, int depth) {
  (void)waiter;
  if (a >= b) return {};
  switch (link.type) {
    case WaitLink::Type::kTask:
      return Delta(link.task, a, b, depth);
    case WaitLink::Type::kPacket: {
      // AP(sender, t) until the send, then the packet is in flight: network.
      const int64_t send = std::clamp(link.ts, a, b);
      StateVec out = link.task == kNoTask ? StateVec::Of(Leaf::kNetwork, send - a) : Delta(link.task, a, send, depth);
      out[Leaf::kNetwork] += b - send;
      return out;
    }
    case WaitLink::Type::kLeaf:
      return StateVec::Of(link.leaf, b - a);
    case WaitLink::Type::kUnknown:
      return StateVec::Of(Leaf::kUnknown, b - a);
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending:
      return StateVec::Of(Leaf::kBlocked, b - a);
  }
  return {};
}

void ActivePathResolver::Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a, int64_t b) {
  if (a >= b) return;
  if (!out->empty() && out->back().task == task && out->back().leaf == leaf && out->back().end == a) {
    out->back().end = b;
    return;
  }
  out->push_back(PathSegment{task, leaf, a, b});
}

void ActivePathResolver::Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out, int depth) {
  if (a >= b) return;
  if (x == kNoTask || depth > max_depth_) {
    Emit(out, x, Leaf::kUnknown, a, b);
    return;
  }
  const Task& task = tasks_[x];
  const TaskHistory& h = histories_[x];
  if (a < h.start()) {
    const int64_t cut = std::min(b, h.start());
    if (task.parent != kNoTask && task.birth != kNever && a < task.birth) {
      const int64_t fork_cut = std::min(cut, task.birth);
      Expand(task.parent, a, fork_cut, out, depth + 1);
      Emit(out, x, Leaf::kUnknown, fork_cut, cut);
    } else {
      Emit(out, x, Leaf::kUnknown, a, cut);
    }
    a = cut;
  }
  for (size_t i = a < b ? h.Find(a) : h.size(); i < h.size(); ++i) {
    const Segment& s = h.at(i);
    const int64_t lo = std::max(a, s.start);
    const int64_t hi = std::min(b, h.EndOf(i, b));
    if (lo >= b) break;
    if (s.kind == SegmentKind::kBlocked) {
      ExpandLink(x, s.link, lo, hi, out, depth + 1);
    } else {
      Emit(out, x, OwnLeaf(s.kind), lo, hi);
    }
  }
}

void ActivePathResolver::ExpandLink(Utid waiter, const WaitLink& link, int64_t a, int64_t b,
                                    std::vector<PathSegment>* out, int depth) {
  if (a >= b) return;
  switch (link.type) {
    case WaitLink::Type::kTask:
      Expand(link.task, a, b, out, depth);
      return;
    case WaitLink::Type::kPacket: {
      const int64_t send = std::clamp(link.ts, a, b);
      if (link.task == kNoTask) {
        Emit(out, waiter, Leaf::kNetwork, a, send);
      } else {
        Expand(link.task, a, send, out, depth);
      }
      Emit(out, waiter, Leaf::kNetwork, send, b);
      return;
    }
    case WaitLink::Type::kLeaf:
      Emit(out, waiter, link.leaf, a, b);
      return;
    case WaitLink::Type::kUnknown:
      Emit(out, waiter, Leaf::kUnknown, a, b);
      return;
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending:
      Emit(out, waiter, Leaf::kBlocked, a, b);
      return;
  }
}

}  // namespace waitpath
