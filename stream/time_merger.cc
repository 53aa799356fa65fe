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
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const Host& h = hosts_[i];
    if (i == best || h.ended || h.idle || !h.batches.empty()) continue;
    if (h.watermark == std::numeric_limits<int64_t>::min() || h.transform.ToReference(h.watermark) < best_ts) {
      needed_ = static_cast<int>(i);
      return false;
    }
  }
  Host& h = hosts_[best];
  const Batch& b = *h.batches.front();
  *event = b.events[h.pos++];
  event->ts = best_ts;
  h.last = best_ts;
  h.head_ts.reset();
  *batch = &b;
  return true;
}

}  // namespace waitpath
