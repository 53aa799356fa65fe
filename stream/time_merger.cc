#include "stream/time_merger.h"

#include <algorithm>
#include <functional>

#include "model/loss_marker.h"

namespace waitpath {

TimeMerger::TimeMerger(size_t hosts) {
  for (size_t i = 0; i < hosts; ++i) AddHost();
}

void TimeMerger::AddHost() {
  hosts_.push_back(std::make_unique<Host>());
  hosts_.back()->index = hosts_.size() - 1;
  run_host_ = -1;
  rebuild_ = true;
}

void TimeMerger::Push(std::unique_ptr<Batch> batch) {
  Host& h = *hosts_[batch->host];
  h.watermark = std::max(h.watermark, batch->watermark);
  if (!batch->events.empty()) h.newest = std::max(h.newest, batch->events.back().ts);
  if (batch->last) h.ended = true;
  h.batches.push_back(std::move(batch));
  UpdateLateFloor();
}

bool TimeMerger::FindHead(Host& h) {
  while (!h.batches.empty() && h.pos >= h.batches.front()->events.size()) {
    consumed_.push_back(std::move(h.batches.front()));
    h.batches.pop_front();
    h.pos = 0;
  }
  if (h.batches.empty()) return false;
  h.head_ts = std::max(h.last, h.transform.ToReference(h.batches.front()->events[h.pos].ts));
  return true;
}

bool TimeMerger::done() const {
  for (const auto& h : hosts_) {
    if (!h->ended || !h->batches.empty()) return false;
  }
  return true;
}

// Changes only when a batch arrives or a transform changes, not per event (Next is per event).
void TimeMerger::UpdateLateFloor() {
  late_floor_ = std::numeric_limits<int64_t>::min();
  if (max_lag_ <= 0) return;
  int64_t newest = std::numeric_limits<int64_t>::min();
  for (const auto& h : hosts_) {
    if (h->newest != std::numeric_limits<int64_t>::min())
      newest = std::max(newest, h->transform.ToReference(h->newest));
  }
  if (newest != std::numeric_limits<int64_t>::min()) late_floor_ = newest - max_lag_;
}

void TimeMerger::DropLate(Host& h, int64_t floor) {
  while (Head(h) && *h.head_ts < floor) {
    const Event& e = h.batches.front()->events[h.pos];
    auto [it, inserted] = h.late_cpus.try_emplace(e.cpu, *h.head_ts, 0);
    ++it->second.second;
    ++h.dropped_late;
    h.lagging = true;
    ++h.pos;
    h.head_ts.reset();
    rebuild_ = true;
  }
}

// The `lost` marker of one CPU of a host whose late events were dropped, at the time of its
// next event, from the first dropped event's time on (docs/reading.md).
bool TimeMerger::ReleaseLossMarker(Host& h, Event* event, const Batch** batch) {
  const auto it = h.late_cpus.begin();
  if (!h.marker) h.marker = std::make_unique<Batch>();
  const Batch& from = *h.batches.front();
  h.marker->host = from.host;
  h.marker->counters = from.counters;
  *event = LossMarker(from.host, it->first, *h.head_ts, it->second.first,
                      LossCount(/*known=*/true, it->second.second));
  h.late_cpus.erase(it);
  *batch = h.marker.get();
  return true;
}

bool TimeMerger::Next(Event* event, const Batch** batch) {
  // Fast path: the host chosen last time goes on while it stays strictly before the bound
  // that choice computed (every other host's head, or watermark if it has nothing buffered)
  // and not behind the lag limit's floor.
  const int64_t floor = late_floor_;
  if (run_host_ >= 0) {
    Host& h = *hosts_[static_cast<size_t>(run_host_)];
    if (Head(h) && *h.head_ts < run_bound_ && *h.head_ts >= floor) return Release(h, event, batch);
    run_host_ = -1;
  }
  if (floor != std::numeric_limits<int64_t>::min()) {
    for (auto& h : hosts_) DropLate(*h, floor);
  }
  // The earliest head, the earliest of the others (the run's bound) and, in order, the hosts
  // with nothing buffered, whose watermarks are checked once the earliest head is known.
  UpdateHeads();
  size_t best = hosts_.size();
  int64_t best_ts = 0;
  int64_t bound = std::numeric_limits<int64_t>::max();
  if (!heads_.empty()) {
    best = heads_[0].second;
    best_ts = heads_[0].first;
    if (heads_.size() > 1) bound = heads_[1].first;
    if (heads_.size() > 2) bound = std::min(bound, heads_[2].first);
  }
  needed_ = -1;
  if (best != hosts_.size() && best_ts > limit_) return false;
  if (best == hosts_.size()) {
    for (size_t i = 0; i < hosts_.size(); ++i) {
      if (!hosts_[i]->ended && !hosts_[i]->idle) needed_ = static_cast<int>(i);
    }
    return false;
  }
  // A host with nothing buffered may still send something older, unless it ended or its
  // watermark is past this event.
  for (const size_t i : unknown_) {
    Host& h = *hosts_[i];
    if (h.ended || h.idle) continue;
    // A host lagging past the limit with nothing buffered is not waited for.
    if (floor != std::numeric_limits<int64_t>::min() &&
        (h.watermark == std::numeric_limits<int64_t>::min() ||
         h.transform.ToReference(h.watermark) < floor)) {
      h.lagging = true;
      continue;
    }
    if (h.watermark == std::numeric_limits<int64_t>::min() ||
        h.transform.ToReference(h.watermark) < best_ts) {
      needed_ = static_cast<int>(i);
      return false;
    }
    bound = std::min(bound, h.transform.ToReference(h.watermark));
  }
  run_host_ = static_cast<int>(best);
  // The fast path's bound also keeps the run within the release limit (bound is exclusive).
  run_bound_ = limit_ < bound ? limit_ + 1 : bound;
  return Release(*hosts_[best], event, batch);
}

bool TimeMerger::Release(Host& h, Event* event, const Batch** batch) {
  if (!h.late_cpus.empty()) return ReleaseLossMarker(h, event, batch);
  h.lagging = false;
  const Batch& b = *h.batches.front();
  *event = b.events[h.pos++];
  event->ts = *h.head_ts;
  h.last = event->ts;
  h.head_ts.reset();
  top_consumed_ = true;  // h is the top of heads_ (Next released the earliest)
  *batch = &b;
  return true;
}

}  // namespace waitpath

namespace waitpath {

void TimeMerger::UpdateHeads() {
  if (rebuild_) {
    rebuild_ = false;
    top_consumed_ = false;
    heads_.clear();
    unknown_.clear();
    for (size_t i = 0; i < hosts_.size(); ++i) unknown_.push_back(i);
  }
  if (top_consumed_) {
    top_consumed_ = false;
    Host& h = *hosts_[heads_[0].second];
    if (Head(h)) {
      heads_[0].first = *h.head_ts;
      SiftDownTop();
    } else {
      std::pop_heap(heads_.begin(), heads_.end(), std::greater<>());
      heads_.pop_back();
      unknown_.insert(std::lower_bound(unknown_.begin(), unknown_.end(), h.index), h.index);
    }
  }
  size_t kept = 0;
  for (const size_t i : unknown_) {
    Host& h = *hosts_[i];
    if (Head(h)) {
      heads_.emplace_back(*h.head_ts, i);
      std::push_heap(heads_.begin(), heads_.end(), std::greater<>());
    } else {
      unknown_[kept++] = i;
    }
  }
  unknown_.resize(kept);
}

// Restores the min-heap after the top's key changed. (time, index) pairs are distinct, so the
// top is the same whatever the heap's shape.
void TimeMerger::SiftDownTop() {
  const size_t n = heads_.size();
  const std::pair<int64_t, size_t> moved = heads_[0];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heads_[child + 1] < heads_[child]) ++child;
    if (!(heads_[child] < moved)) break;
    heads_[i] = heads_[child];
    i = child;
  }
  heads_[i] = moved;
}

}  // namespace waitpath
