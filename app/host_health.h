// Each followed host's stream as the terminal view of `live` shows it (exporters/
// terminal_screen.h): events per second since the last look, events lost, how far behind the
// wall clock it is analysed, its clock's sync, its state.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "exporters/terminal_screen.h"
#include "model/batch.h"
#include "stream/clock_sync.h"

namespace waitpath {

class HostHealthModel {
 public:
  using Clock = std::chrono::steady_clock;

  // One host as the pipeline and the sessions know it now.
  struct Host {
    std::string name;
    uint64_t events = 0;  // read so far
    uint64_t lost = 0;    // events discarded by the tracer or dropped as late
    uint64_t gaps = 0;    // input gaps and damaged stretches (of unknown size)
    int64_t analysed_to = std::numeric_limits<int64_t>::min();  // the engine's newest time
    bool ended = false, lagging = false, relayd_lost = false;
  };

  explicit HostHealthModel(Clock::time_point start = Clock::now()) : last_at_(start) {}

  // A replayed host's events carry their original times, years before now: as the metrics
  // measure it, its lag is by when its last analysed event was emitted.
  void ObserveBatch(const Batch& batch);
  void SetClocks(const std::vector<HostClock>& clocks) { clocks_ = clocks; }

  // The rows, rates since the last call. `sources`: how many hosts are followed (with two or
  // more, a host is "synchronizing" until the clocks come).
  std::vector<HostHealth> Rows(const std::vector<Host>& hosts, size_t sources,
                               Clock::time_point now, int64_t wall_ns);

 private:
  Clock::time_point last_at_;
  std::vector<uint64_t> events_seen_;  // per host, at the last Rows()
  std::vector<int64_t> emitted_ns_;    // per host: ReaderCounters::emitted_ns, as analysed
  std::vector<HostClock> clocks_;      // as last told
  // Per host: since when its relayd is lost (epoch: it is not), and its past outages' time.
  std::vector<Clock::time_point> lost_since_;
  std::vector<Clock::duration> outages_;
};

}  // namespace waitpath
