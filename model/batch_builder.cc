#include "model/batch_builder.h"

namespace waitpath {

BatchPool::~BatchPool() {
  Batch* b = nullptr;
  while (free_.try_dequeue(b)) delete b;
}

Batch* BatchPool::Take() {
  Batch* b = nullptr;
  return free_.try_dequeue(b) ? b : new Batch;
}

void BatchPool::Give(Batch* batch) {
  batch->events.clear();
  batch->packets.clear();
  batch->spans.clear();
  batch->last = false;
  batch->error.clear();
  if (free_.size_approx() < max_free_) {
    free_.enqueue(batch);
  } else {
    delete batch;
  }
}

void BatchBuilder::Flush(const ReaderCounters& counters, int64_t watermark, bool last,
                         std::string error) {
  Batch& b = Current();
  b.counters = counters;
  b.watermark = watermark;
  b.last = last;
  b.error = std::move(error);
  batch_ = nullptr;
  deliver_(&b);
}

}  // namespace waitpath
