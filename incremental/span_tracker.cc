#include "incremental/span_tracker.h"

#include <algorithm>

namespace waitpath {
namespace {
bool Same(const SpanIdentity& a, const SpanIdentity& b) {
  return a.span_id == b.span_id && a.host == b.host;
}
}  // namespace

size_t SpanTracker::BytesPerOpenSpan() {
  return sizeof(OpenSpan) + sizeof(Held) + sizeof(std::pair<const Key, uint32_t>) +
         2 * sizeof(void*);  // node link and bucket
}

SpanTracker::ThreadState& SpanTracker::Thread(Utid u) {
  if (u >= threads_.size()) threads_.resize(u + 1u);
  return threads_[u];
}

void SpanTracker::Hold(Utid u, const SpanIdentity& span, int64_t ts) {
  ThreadState& t = Thread(u);
  if (t.holding == 0 && t.idle_since != kOpen) {
    if (listener_ && ts > t.idle_since) {
      listener_->OnIdle(u, t.idle_since, ts, resolver_.Delta(u, t.idle_since, ts));
    }
    t.idle_since = kOpen;
  }
  ++t.holding;
  t.open.push_back(Held{span, ts, kOpen});
}

void SpanTracker::Release(Utid u, const SpanIdentity& span, int64_t ts) {
  ThreadState& t = Thread(u);
  for (auto it = t.open.rbegin(); it != t.open.rend(); ++it) {
    if (Same(it->span, span)) {
      Held h = *it;
      h.end = std::max(ts, h.start);
      t.open.erase(std::next(it).base());
      // Intervals that ended before the horizon can no longer be on a path being resolved.
      const int64_t horizon = resolver_.horizon();
      while (!t.closed.empty() && t.closed.front().end < horizon) t.closed.pop_front();
      // In time order but for a dropped span (released at its last event): kept sorted.
      auto at = std::upper_bound(t.closed.begin(), t.closed.end(), h.end,
                                 [](int64_t end, const Held& x) { return end < x.end; });
      t.closed.insert(at, h);
      break;
    }
  }
  if (t.holding > 0 && --t.holding == 0) t.idle_since = ts;
}

void SpanTracker::PushBegin(uint16_t host, Utid u, int64_t ts, uint64_t span_id, uint32_t name,
                            const SpanIds& ids) {
  ++counters_.begun;
  const Key key{span_id, host};
  if (auto it = by_id_.find(key); it != by_id_.end()) {
    ++counters_.reused_ids;
    Drop(it->second);
  }
  if (by_id_.size() >= options_.max_open) {
    ++counters_.dropped_full;
    return;
  }
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  OpenSpan& s = slots_[slot];
  s.id = SpanIdentity{span_id, ids, name, host};
  s.task = s.holder = u;
  s.start = s.mark = ts;
  s.handoffs = 0;
  s.pieces.clear();
  by_id_.emplace(key, slot);
  Hold(u, s.id, ts);
}

void SpanTracker::PushHandoff(uint16_t host, Utid u, int64_t ts, uint64_t span_id) {
  const auto it = by_id_.find(Key{span_id, host});
  if (it == by_id_.end()) {
    ++counters_.unmatched_handoffs;
    return;
  }
  OpenSpan& s = slots_[it->second];
  // The time since the last span event was spent waiting for this thread to take it.
  if (ts > s.mark) s.pieces.push_back(Piece{u, s.mark, ts});
  s.mark = std::max(s.mark, ts);
  ++s.handoffs;
  Release(s.holder, s.id, ts);
  s.holder = u;
  Hold(u, s.id, ts);
}

void SpanTracker::PushEnd(uint16_t host, Utid u, int64_t ts, uint64_t span_id) {
  const auto it = by_id_.find(Key{span_id, host});
  if (it == by_id_.end()) {
    ++counters_.unmatched_ends;
    return;
  }
  const uint32_t slot = it->second;
  OpenSpan& s = slots_[slot];
  if (ts > s.mark) s.pieces.push_back(Piece{u, s.mark, ts});
  const int64_t end = std::max(s.mark, ts);
  Release(s.holder, s.id, end);
  path_.clear();
  for (const Piece& p : s.pieces) resolver_.Expand(p.task, p.start, p.end, &path_);
  ResolvedSpan r;
  r.span = s.id;
  r.task = s.task;
  r.end_task = u;
  r.start = s.start;
  r.end = end;
  r.handoffs = s.handoffs;
  for (const PathSegment& p : path_) r.breakdown[p.leaf] += p.end - p.start;
  Blame(s);
  r.path = path_;
  r.blocked_by = blockers_;
  ++counters_.ended;
  if (listener_) listener_->OnSpan(r);
  by_id_.erase(it);
  s.pieces.clear();
  free_.push_back(slot);
}

// Path time in a thread that then held another span is that span's: the innermost one held
// (the latest begun) when several are.
void SpanTracker::Blame(const OpenSpan& s) {
  blockers_.clear();
  for (const PathSegment& p : path_) {
    if (p.task == kNoTask || p.task >= threads_.size()) continue;
    const ThreadState& t = threads_[p.task];
    candidates_.clear();
    for (const Held& h : t.open) {
      if (h.start < p.end) candidates_.push_back(&h);
    }
    auto h = std::partition_point(t.closed.begin(), t.closed.end(),
                                  [&](const Held& x) { return x.end <= p.start; });
    for (; h != t.closed.end(); ++h) {
      if (h->start < p.end) candidates_.push_back(&*h);
    }
    if (candidates_.empty()) continue;
    cuts_.assign({p.start, p.end});
    for (const Held* c : candidates_) {
      if (c->start > p.start && c->start < p.end) cuts_.push_back(c->start);
      if (c->end > p.start && c->end < p.end) cuts_.push_back(c->end);
    }
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    for (size_t i = 0; i + 1 < cuts_.size(); ++i) {
      const Held* inner = nullptr;
      for (const Held* c : candidates_) {
        if (c->start <= cuts_[i] && c->end >= cuts_[i + 1] &&
            (!inner || c->start >= inner->start)) {
          inner = c;
        }
      }
      // Time inside this span itself (innermost there) is nobody else's.
      if (!inner || Same(inner->span, s.id)) continue;
      auto b = std::find_if(blockers_.begin(), blockers_.end(),
                            [&](const SpanBlocker& x) { return Same(x.span, inner->span); });
      if (b == blockers_.end()) b = blockers_.insert(blockers_.end(), SpanBlocker{inner->span, 0});
      b->ns += cuts_[i + 1] - cuts_[i];
    }
  }
  std::sort(blockers_.begin(), blockers_.end(),
            [](const SpanBlocker& a, const SpanBlocker& b) { return a.ns > b.ns; });
}

void SpanTracker::Drop(uint32_t slot) {
  OpenSpan& s = slots_[slot];
  Release(s.holder, s.id, s.mark);
  by_id_.erase(Key{s.id.span_id, s.id.host});
  s.pieces.clear();
  free_.push_back(slot);
}

void SpanTracker::OnTaskEnded(Utid u) {
  if (u >= threads_.size() || threads_[u].holding == 0) return;
  std::vector<uint32_t> held;
  for (const auto& [key, slot] : by_id_) {
    if (slots_[slot].holder == u) held.push_back(slot);
  }
  for (uint32_t slot : held) {
    ++counters_.thread_ended;
    Drop(slot);
  }
}

void SpanTracker::OnTaskReleased(Utid u) {
  if (u < threads_.size()) threads_[u] = ThreadState{};
}

}  // namespace waitpath
