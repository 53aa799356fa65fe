#include "stream/host_streams.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

namespace waitpath {

HostStreams::HostStreams(std::vector<HostSpec> hosts, ReaderOptions options) {
  // Past 4 hosts the queue bound is shared (256 batches in all, at least 16 per host): one
  // consumer cannot use more look-ahead, and per-host queues multiplied memory by the host count.
  options.max_queued_batches = std::clamp<size_t>(256 / std::max<size_t>(1, hosts.size()),
                                                  std::min<size_t>(16, options.max_queued_batches),
                                                  options.max_queued_batches);
  for (size_t i = 0; i < hosts.size(); ++i) {
    readers_.push_back(std::make_unique<HostReader>(static_cast<uint16_t>(i), std::move(hosts[i]),
                                                    options, &ready_));
  }
  front_.resize(readers_.size());
  slow_ms_.assign(readers_.size(), 0);
  if (const char* slow = std::getenv("WAITPATH_TEST_SLOW_HOST")) {
    const std::string spec(slow);
    const size_t colon = spec.rfind(':');
    for (size_t i = 0; colon != std::string::npos && i < readers_.size(); ++i) {
      if (readers_[i]->spec().hostname == spec.substr(0, colon))
        slow_ms_[i] = std::atoi(spec.c_str() + colon + 1);
    }
  }
  ended_.assign(readers_.size(), false);
  watermark_.assign(readers_.size(), std::numeric_limits<int64_t>::min());
}

HostStreams::~HostStreams() {
  Stop();
}

void HostStreams::Start() {
  for (auto& r : readers_) r->Start();
}

void HostStreams::Stop() {
  for (auto& r : readers_) r->RequestStop();
  for (auto& r : readers_) r->Join();
}

std::unique_ptr<Batch> HostStreams::NextFrom(size_t host) {
  while (!ended_[host]) {
    if (TryFill(host)) {
      std::unique_ptr<Batch> out = std::move(front_[host]);
      watermark_[host] = std::max(watermark_[host], out->watermark);
      if (out->last) ended_[host] = true;
      return out;
    }
    ready_.wait(20000);
  }
  return nullptr;
}

void HostStreams::Recycle(std::unique_ptr<Batch> batch) {
  if (batch && batch->host < readers_.size()) readers_[batch->host]->Recycle(batch.release());
}

bool HostStreams::TryFill(size_t host) {
  if (front_[host] || ended_[host]) return front_[host] != nullptr;
  Batch* b = nullptr;
  if (!readers_[host]->queue().try_dequeue(b)) return false;
  if (slow_ms_[host] > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms_[host]));
  front_[host].reset(b);
  return true;
}

std::unique_ptr<Batch> HostStreams::Next(bool ordered) {
  for (;;) {
    size_t best = readers_.size();
    int64_t best_ts = std::numeric_limits<int64_t>::max();
    bool all_known = true;
    bool any_open = false;
    for (size_t h = 0; h < readers_.size(); ++h) {
      if (ended_[h]) continue;
      any_open = true;
      if (!TryFill(h)) {
        all_known = false;
        continue;
      }
      const Batch& b = *front_[h];
      const int64_t ts = b.events.empty() ? b.watermark : b.events.front().ts;
      if (best == readers_.size() || ts < best_ts) {
        best = h;
        best_ts = ts;
      }
    }
    if (!any_open) return nullptr;
    // A host with nothing queued may still deliver older events, unless its watermark says not.
    bool can_deliver = best < readers_.size();
    if (can_deliver && ordered && !all_known) {
      for (size_t h = 0; h < readers_.size(); ++h) {
        if (!ended_[h] && !front_[h] && watermark_[h] < best_ts) can_deliver = false;
      }
    }
    if (can_deliver) {
      std::unique_ptr<Batch> out = std::move(front_[best]);
      watermark_[best] = std::max(watermark_[best], out->watermark);
      if (out->last) ended_[best] = true;
      return out;
    }
    ready_.wait(20000);  // microseconds; also re-checks periodically
  }
}

}  // namespace waitpath
