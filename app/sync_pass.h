// Reads every host's packets once to synchronize their clocks (the pre-pass of offline
// multi-host analysis, and the whole of `waitpath sync`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "incremental/clock_sync.h"
#include "live/trace_discovery.h"
#include "stream/host_stats.h"

namespace waitpath {

struct SyncPassResult {
  std::unique_ptr<ClockSync> sync;
  std::vector<HostStats> stats;
};

// `reference`: a host name, or empty for the first host. Returns false (and `error`) when
// the reference host is not among the traces.
bool RunSyncPass(const std::vector<HostSpec>& hosts, const std::string& reference, bool verbose, bool two_phase,
                 SyncPassResult* out, std::string* error);

std::string ClockJson(const HostClock& clock);

}  // namespace waitpath
