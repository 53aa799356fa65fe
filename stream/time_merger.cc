#include "stream/time_merger.h"

#include <algorithm>

namespace waitpath {

TimeMerger::TimeMerger(size_t hosts) : hosts_(hosts) {}

void TimeMerger::Push(std::unique_ptr<Batch> batch) {
  Host& h = hosts_[batch->host];
  h.watermark = std::max(h.watermark, batch->watermark);
  if (batch->last) h.ended = true;
  h.batches.push_back(std::move(batch));
}

bool TimeMerger::Head(Host& h) {
  if (h.head_ts) return true;
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
  for (const Host& h : hosts_) {
    if (!h.ended || !h.batches.empty()) return false;
  }
  return true;
}

bool TimeMerger::Next(Event* event, const Batch** batch) {
  // Fast path: the host chosen last time goes on while it stays strictly before the bound
  // that choice computed (every other host's head, or watermark if it has nothing buffered).
  if (run_host_ >= 0) {
    Host& h = hosts_[static_cast<size_t>(run_host_)];
    if (Head(h) && *h.head_ts < run_bound_) return Release(h, event, batch);
    run_host_ = -1;
  }
  size_t best = hosts_.size();
  int64_t best_ts = 0;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    Host& h = hosts_[i];
    if (!Head(h)) continue;
    const int64_t ts = *h.head_ts;
    if (best == hosts_.size() || ts < best_ts) {
      best = i;
      best_ts = ts;
    }
  }
  needed_ = -1;
  if (best == hosts_.size()) {
    for (size_t i = 0; i < hosts_.size(); ++i) {
      if (!hosts_[i].ended && !hosts_[i].idle) needed_ = static_cast<int>(i);
    }
    return false;
  }
  // A host with nothing buffered may still send something older, unless it ended or its
  // watermark is past this event.
  int64_t bound = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const Host& h = hosts_[i];
    if (i == best) continue;
    if (!h.batches.empty()) {
      bound = std::min(bound, *h.head_ts);
      continue;
    }
    if (h.ended || h.idle) continue;
    if (h.watermark == std::numeric_limits<int64_t>::min() || h.transform.ToReference(h.watermark) < best_ts) {
      needed_ = static_cast<int>(i);
      return false;
    }
    bound = std::min(bound, h.transform.ToReference(h.watermark));
  }
  run_host_ = static_cast<int>(best);
  run_bound_ = bound;
  return Release(hosts_[best], event, batch);
}

bool TimeMerger::Release(Host& h, Event* event, const Batch** batch) {
  const Batch& b = *h.batches.front();
  *event = b.events[h.pos++];
  event->ts = *h.head_ts;
  h.last = event->ts;
  h.head_ts.reset();
  *batch = &b;
  return true;
}

}  // namespace waitpath
