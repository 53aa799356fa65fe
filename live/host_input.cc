#include "live/host_input.h"

#include <limits>

#include "live/event_decoder.h"
#include "live/loss_marker.h"

namespace waitpath {

ReaderCounters HostInput::Snapshot() const {
  ReaderCounters c = counters;
  c.regressions = time.regressions();
  c.first_ns = time.first_event();
  c.last_ns = time.last_event();
  c.dialect = dialect;
  // A replayed host's streams are the replayer's: its CPUs are the original ones.
  if (dialect & kDialectReplayed) c.cpus = cpus.replayed_count();
  return c;
}

void HostInput::MarkGap() {
  const int64_t last = time.last();
  AppendLossMarkers(batches.Current().events, host, cpus.AllCpus(),
                    last == std::numeric_limits<int64_t>::min() ? 0 : last);
  ++counters.gaps;
  Flush();
}

}  // namespace waitpath
