// Runs one reader thread per host and hands their batches to a single consumer, in an order
// that keeps hosts close in time (the batch with the oldest first event goes first once every
// unfinished host has something queued or a watermark past it).
#pragma once

#include <memory>
#include <vector>

#include "live/host_reader.h"

namespace waitpath {

class HostStreams {
 public:
  HostStreams(std::vector<HostSpec> hosts, ReaderOptions options);
  ~HostStreams();

  void Start();
  void Stop();

  // Blocks until the next batch; nullptr once every host has ended. With `ordered` false,
  // batches come as soon as any host has one (for counting, where order does not matter).
  std::unique_ptr<Batch> Next(bool ordered = true);
  // Blocks until `host` has a batch; nullptr once that host has ended. Other hosts' batches
  // stay in their (bounded) queues meanwhile.
  std::unique_ptr<Batch> NextFrom(size_t host);

  // Returns a consumed batch to its reader for reuse (optional: dropping it is fine too).
  void Recycle(std::unique_ptr<Batch> batch);

  size_t host_count() const { return readers_.size(); }
  const HostSpec& host(size_t i) const { return readers_[i]->spec(); }

 private:
  bool TryFill(size_t host);

  moodycamel::LightweightSemaphore ready_;
  std::vector<std::unique_ptr<HostReader>> readers_;
  std::vector<std::unique_ptr<Batch>> front_;  // dequeued, not yet delivered
  std::vector<bool> ended_;
  std::vector<int64_t> watermark_;
  // Test knob (WAITPATH_TEST_SLOW_HOST=name:ms): that host's batches arrive this much later
  // each, as if its relayd or disk were slow, to check that the output does not change.
  std::vector<int> slow_ms_;
};

}  // namespace waitpath
