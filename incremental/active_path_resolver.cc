#include "incremental/active_path_resolver.h"

namespace waitpath {

// The value at t of the function a blocked segment [start, ...) follows: F_X(t) - F_X(start)
// = LinkValue(t) - LinkValue(start).
StateVec ActivePathResolver::LinkValue(const WaitLink& link, int64_t start, int64_t t,
                                       int depth) const {
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
StateVec ActivePathResolver::CumInside(const TaskHistory& h, int64_t t, int depth) const {
  const size_t i = h.Find(t);
  const Segment& s = h.at(i);
  if (t == s.start) return h.cum(i);
  if (s.kind != SegmentKind::kBlocked) {
    StateVec v = h.cum(i);
    v[OwnLeaf(s.kind)] += t - s.start;
    return v;
  }
  if (s.link_type == WaitLink::Type::kPending) {
    StateVec v = h.cum(i);
    v[Leaf::kBlocked] += t - s.start;
    return v;
  }
  const WaitLink link = h.link(s);
  if (!NeedsOrigin(link))
    return h.cum(i) + LinkValue(link, s.start, t, 0) - LinkValue(link, s.start, s.start, 0);
  if (link.type == WaitLink::Type::kPacket) {
    // The origin of a packet wait is kept relative to the send (ResolveWait): after it, the
    // value no longer depends on the sender's history, which may be gone by now.
    const int64_t send = std::max(link.ts, s.start);
    if (t > send) return h.cum(i) + h.origin(s) + StateVec::Of(Leaf::kNetwork, t - send);
    // A sender on another shard: only its summary over [start, send) is known (the origin).
    if (tasks_[link.task].remote) return h.cum(i) + RemotePrefix(h.origin(s), t - s.start);
    return h.cum(i) + h.origin(s) + Cum(link.task, t, depth + 1) - Cum(link.task, send, depth + 1);
  }
  return h.cum(i) + LinkValue(link, s.start, t, depth) - h.origin(s);
}

StateVec ActivePathResolver::Cum(Utid x, int64_t t, int depth) const {
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
  StateVec v = h.cum(0);
  if (task.parent != kNoTask && task.birth != kNever && t < task.birth && task.birth <= start) {
    v[Leaf::kUnknown] -= start - task.birth;
    return v + Cum(task.parent, t, depth + 1) - task.parent_origin;
  }
  v[Leaf::kUnknown] -= start - t;
  return v;
}

StateVec ActivePathResolver::Delta(Utid x, int64_t a, int64_t b) const {
  StateVec out;
  if (a >= b) return out;
  if (x != kNoTask && a < horizon_) {
    // Before the horizon a difference of F would re-read histories that may be gone since
    // its waits were resolved: sum the expansion instead, which reads x's own retained
    // segments as they are and other tasks' only from the horizon on.
    ++counters_.evicted_reads;
    std::vector<PathSegment> pieces;
    Expand(x, a, b, &pieces);
    for (const PathSegment& p : pieces) out[p.leaf] += p.end - p.start;
    return out;
  }
  return out + Cum(x, b) - Cum(x, a);
}

StateVec ActivePathResolver::ResolveWait(const WaitLink& link, int64_t a, int64_t b,
                                         StateVec* origin) const {
  *origin = {};
  if (a >= b) return {};
  // [a, c): the part of the wait that reads another task's history before the horizon
  // (for a packet, only up to its send: the flight after it is network whatever was
  // evicted). It is unknown, and values before the horizon are only ever differenced
  // within this one call, never stored.
  int64_t c = a;
  if (NeedsOrigin(link) && a < horizon_) {
    c = std::min(b, horizon_);
    if (link.type == WaitLink::Type::kPacket) c = std::min(c, std::max(link.ts, a));
  }
  StateVec before;
  if (c > a) {
    before[Leaf::kUnknown] = c - a;
    ++counters_.evicted_reads;
  }
  const StateVec at_c = LinkValue(link, a, c, 0);
  *origin = at_c - before;  // so that F_X(t) = cum + LinkValue(t) - origin for t >= c
  const StateVec delta = before + LinkValue(link, a, b, 0) - at_c;
  if (link.type == WaitLink::Type::kPacket && NeedsOrigin(link)) {
    // Kept relative to the send, so that reads after it need not read the sender again.
    *origin = Cum(link.task, std::max(link.ts, a), 1) - *origin;
  }
  return delta;
}

// The first `d` ns of a remote sender's summary, its states laid end to end in leaf order:
// exact at both ends of the remote part, an order chosen inside it (the summary has none).
StateVec ActivePathResolver::RemotePrefix(const StateVec& part, int64_t d) {
  StateVec v;
  for (int i = 0; i < kLeafCount && d > 0; ++i) {
    const int64_t take = std::min(d, std::max<int64_t>(0, part.ns[i]));
    v.ns[i] = take;
    d -= take;
  }
  return v;
}

void ActivePathResolver::Emit(std::vector<PathSegment>* out, Utid task, Leaf leaf, int64_t a,
                              int64_t b, int depth) {
  if (a >= b) return;
  const uint16_t d = static_cast<uint16_t>(std::min(depth, 0xffff));
  if (!out->empty() && out->back().task == task && out->back().leaf == leaf &&
      out->back().end == a && out->back().depth == d) {
    out->back().end = b;
    return;
  }
  out->push_back(PathSegment{task, leaf, a, b, d});
}

void ActivePathResolver::Expand(Utid x, int64_t a, int64_t b, std::vector<PathSegment>* out,
                                int depth) const {
  if (a >= b) return;
  if (x == kNoTask || depth > max_depth_) {
    Emit(out, x, Leaf::kUnknown, a, b, depth);
    return;
  }
  const Task& task = tasks_[x];
  const TaskHistory& h = histories_[x];
  if (depth > 0 && a < horizon_) {
    // Reached through a link: before the horizon this history may be gone (ResolveWait).
    Emit(out, x, Leaf::kUnknown, a, std::min(b, horizon_), depth);
    a = std::min(b, horizon_);
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
      const WaitLink link = h.link(s);
      if (link.type == WaitLink::Type::kPacket && link.task != kNoTask && tasks_[link.task].remote)
        ExpandRemote(x, link, s.start, h.origin(s), lo, hi, out, depth + 1);
      else
        ExpandLink(x, link, lo, hi, out, depth + 1);
    } else {
      Emit(out, x, OwnLeaf(s.kind), lo, hi, depth);
    }
  }
}

// A wait ended by a sender on another shard: its summary, state by state at the remote task
// (RemotePrefix's order), then the packet in flight.
void ActivePathResolver::ExpandRemote(Utid waiter, const WaitLink& link, int64_t start,
                                      const StateVec& part, int64_t a, int64_t b,
                                      std::vector<PathSegment>* out, int depth) const {
  const int64_t send = std::max(link.ts, start);
  int64_t at = start;
  for (int i = 0; i < kLeafCount; ++i) {
    const int64_t end = std::min(send, at + std::max<int64_t>(0, part.ns[i]));
    Emit(out, link.task, static_cast<Leaf>(i), std::max(a, at), std::min(b, end), depth);
    at = end;
  }
  Emit(out, waiter, Leaf::kNetwork, std::max(a, send), b, depth);
}

void ActivePathResolver::ExpandLink(Utid waiter, const WaitLink& link, int64_t a, int64_t b,
                                    std::vector<PathSegment>* out, int depth) const {
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
