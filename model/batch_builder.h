// Fills a host's batches and hands them downstream; BatchPool reuses the consumed ones.
#pragma once

#include <concurrentqueue/concurrentqueue.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "model/batch.h"

namespace waitpath {

// Consumed batches kept for reuse: they are large enough that malloc would map and unmap (and
// page-fault) them every time otherwise. Take() on the reader thread, Give() on the consumer's.
class BatchPool {
 public:
  explicit BatchPool(size_t max_free) : max_free_(max_free) {}
  ~BatchPool();
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  // A cleared batch, reused or new.
  Batch* Take();
  // Clears `batch` and keeps it, or deletes it beyond `max_free` (the reader never needs more
  // than its queue can hold).
  void Give(Batch* batch);

 private:
  const size_t max_free_;
  moodycamel::ConcurrentQueue<Batch*> free_;
};

// The batch being filled for one host: events go into Current(); Flush() hands it over with
// the host's figures as of its end, and the next event starts another.
class BatchBuilder {
 public:
  using Deliver = std::function<void(Batch*)>;
  BatchBuilder(uint16_t host, size_t capacity, BatchPool& pool, Deliver deliver)
      : host_(host), capacity_(capacity), pool_(pool), deliver_(std::move(deliver)) {}
  ~BatchBuilder() { delete batch_; }
  BatchBuilder(const BatchBuilder&) = delete;
  BatchBuilder& operator=(const BatchBuilder&) = delete;

  Batch& Current() {
    if (!batch_) {
      batch_ = pool_.Take();
      batch_->host = host_;
      batch_->events.reserve(capacity_);
    }
    return *batch_;
  }
  // Events in the batch being filled (0 when none is).
  size_t size() const { return batch_ ? batch_->events.size() : 0; }
  bool full() const { return size() >= capacity_; }
  size_t capacity() const { return capacity_; }

  // Hands the current batch over (an empty one if none was started). `last`: the host's input
  // ended with it; `error` says why it stopped early.
  void Flush(const ReaderCounters& counters, int64_t watermark, bool last = false,
             std::string error = {});

 private:
  const uint16_t host_;
  const size_t capacity_;
  BatchPool& pool_;
  Deliver deliver_;
  Batch* batch_ = nullptr;
};

}  // namespace waitpath
