#include "readers/host_input.h"

#include <algorithm>
#include <limits>

#include "model/event_views.h"
#include "model/loss_marker.h"
#include "readers/event_decoder.h"

namespace waitpath {

int64_t HostInput::OnReplayed(int64_t stream_ts, const Event& e, Batch& b) {
  counters.emitted_ns = stream_ts;
  b.clock_offset_ns = stream_ts - e.ts;
  cpus.NoteReplayedCpu(e.cpu);
  if (e.kind == EventKind::kLost && AsLost(e).count() > 0)
    counters.discarded += static_cast<uint64_t>(AsLost(e).count());
  return e.ts;
}

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

void HostInput::SetHoles(std::vector<StreamLoss> h) {
  holes = std::move(h);
  std::sort(holes.begin(), holes.end(),
            [](const StreamLoss& a, const StreamLoss& b) { return a.at_ns > b.at_ns; });
}

void HostInput::EmitHoles(int64_t ts) {
  while (!holes.empty() && holes.back().at_ns <= ts) {
    const StreamLoss h = holes.back();
    holes.pop_back();
    // A hole before anything of its stream goes with the first thing merged.
    int64_t at = h.at_ns;
    if (at == std::numeric_limits<int64_t>::min()) {
      at = ts != std::numeric_limits<int64_t>::max() ? ts : time.last();
      if (at == std::numeric_limits<int64_t>::min()) at = 0;
    }
    batches.Current().events.push_back(LossMarker(host, h.cpu, time.Clamp(at), h.since_ns, -1));
    ++counters.damaged;
  }
}

}  // namespace waitpath
