#include "incremental/active_path_resolver.h"

namespace waitpath {

void ActivePathResolver::SetHorizon(uint16_t host, int64_t horizon) {
  if (host >= horizons_.size()) horizons_.resize(host + 1u, std::numeric_limits<int64_t>::min());
  horizons_[host] = std::max(horizons_[host], horizon);
}

// The value at t of the function a blocked segment [start, ...) follows: F_X(t) - F_X(start)
// = LinkValue(t) - LinkValue(start).
StateVec ActivePathResolver::LinkValue(const WaitLink& link, int64_t start, int64_t t, int depth) {
  switch (link.type) {
    case WaitLink::Type::kTask:
      return Cum(link.task, t, depth + 1);
    case WaitLink::Type::kPacket: {
      if (link.task == kNoTask) return StateVec::Of(Leaf::kNetwork, t);
      // AP(sender, t) until the send, then the packet is in flight: network.
      const int64_t send = std::max(link.ts, start);
      if (t <= send) return Cum(link.task, t, depth + 1);
      StateVec v = Cum(link.task, send, depth + 1);
      v[Leaf::kNetwork] += t - send;
      return v;
    }
    case WaitLink::Type::kLeaf:
      return StateVec::Of(link.leaf, t);
    case WaitLink::Type::kUnknown:
      return StateVec::Of(Leaf::kUnknown, t);
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending:
      return StateVec::Of(Leaf::kBlocked, t);
  }
  return {};
}

// F_X(t) for t inside the retained history.
StateVec ActivePathResolver::CumInside(const TaskHistory& h, int64_t t, int depth) {
  const Segment& s = h.at(h.Find(t));
  if (s.kind != SegmentKind::kBlocked) return s.cum + StateVec::Of(OwnLeaf(s.kind), t - s.start);
  if (s.link.type == WaitLink::Type::kPending) return s.cum + StateVec::Of(Leaf::kBlocked, t - s.start);
  if (!NeedsOrigin(s.link)) return s.cum + LinkValue(s.link, s.start, t, 0) - LinkValue(s.link, s.start, s.start, 0);
  return s.cum + LinkValue(s.link, s.start, t, depth) - h.origin(s);
}

StateVec ActivePathResolver::Cum(Utid x, int64_t t, int depth) {
  if (x == kNoTask) return StateVec::Of(Leaf::kUnknown, t);
  if (depth > max_depth_) {
    ++counters_.depth_limited;
    return StateVec::Of(Leaf::kUnknown, t);
  }
  const Task& task = tasks_[x];
  const TaskHistory& h = histories_[x];
  if (h.empty()) return StateVec::Of(Leaf::kUnknown, t);
  const int64_t start = h.start();
  if (t >= start) return CumInside(h, t, depth);
  // Before x's history: its parent's path before the fork, unknown otherwise.
  StateVec v = h.at(0).cum;
  if (task.parent != kNoTask && task.birth != kNever && t < task.birth && task.birth <= start) {
    v[Leaf::kUnknown] -= start - task.birth;
    return v + Cum(task.parent, t, depth + 1) - task.parent_origin;
  }
  v[Leaf::kUnknown] -= start - t;
  return v;
}

StateVec ActivePathResolver::Delta(Utid x, int64_t a, int64_t b) {
  StateVec out;
  if (a >= b) return out;
  if (x != kNoTask) {
    const int64_t h = horizon(tasks_[x].host);
    if (a < h) {
      const int64_t cut = std::min(b, h);
      out[Leaf::kUnknown] += cut - a;
      ++counters_.evicted_reads;
      a = cut;
      if (a >= b) return out;
    }
  }
  return out + Cum(x, b) - Cum(x, a);
}

StateVec ActivePathResolver::ResolveWait(const WaitLink& link, int64_t a, int64_t b, StateVec* origin) {
  *origin = {};
  if (a >= b) return {};
  // A wait that began before the horizon: its evicted part is unknown.
  const int64_t h = link.task != kNoTask ? horizon(tasks_[link.task].host) : std::numeric_limits<int64_t>::min();
  StateVec before;
  if (a < h && (link.type == WaitLink::Type::kTask || link.type == WaitLink::Type::kPacket)) {
    const int64_t cut = std::min(b, h);
    before[Leaf::kUnknown] = cut - a;
    ++counters_.evicted_reads;
    *origin = LinkValue(link, a, cut, 0) - before;
    return before + LinkValue(link, a, b, 0) - LinkValue(link, a, cut, 0);
  }
  *origin = LinkValue(link, a, a, 0);
  return LinkValue(link, a, b, 0) - *origin;
}

void ActivePathResolver::Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a, int64_t b, int depth) {
  if (a >= b) return;
  const uint16_t d = static_cast<uint16_t>(std::min(depth, 0xffff));
  if (!out->empty() && out->back().task == task && out->back().leaf == leaf && out->back().end == a &&
      out->back().depth == d) {
    out->back().end = b;
    return;
  }
  out->push_back(PathSegment{task, leaf, a, b, d});
}

void ActivePathResolver::Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out, int depth) {
  if (a >= b) return;
  if (x == kNoTask || depth > max_depth_) {
    Emit(out, x, Leaf::kUnknown, a, b, depth);
    return;
  }
  const Task& task = tasks_[x];
  const TaskHistory& h = histories_[x];
  const int64_t hz = horizon(task.host);
  if (a < hz) {
    Emit(out, x, Leaf::kUnknown, a, std::min(b, hz), depth);
    a = std::min(b, hz);
  }
  if (a < h.start()) {
    const int64_t cut = std::min(b, h.start());
    if (task.parent != kNoTask && task.birth != kNever && a < task.birth) {
      const int64_t fork_cut = std::min(cut, task.birth);
      Expand(task.parent, a, fork_cut, out, depth + 1);
      Emit(out, x, Leaf::kUnknown, fork_cut, cut, depth);
    } else {
      Emit(out, x, Leaf::kUnknown, a, cut, depth);
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
      Emit(out, x, OwnLeaf(s.kind), lo, hi, depth);
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
        Emit(out, waiter, Leaf::kNetwork, a, send, depth);
      } else {
        Expand(link.task, a, send, out, depth);
      }
      Emit(out, waiter, Leaf::kNetwork, send, b, depth);
      return;
    }
    case WaitLink::Type::kLeaf:
      Emit(out, waiter, link.leaf, a, b, depth);
      return;
    case WaitLink::Type::kUnknown:
      Emit(out, waiter, Leaf::kUnknown, a, b, depth);
      return;
    case WaitLink::Type::kNone:
    case WaitLink::Type::kPending:
      Emit(out, waiter, Leaf::kBlocked, a, b, depth);
      return;
  }
}

}  // namespace waitpath
