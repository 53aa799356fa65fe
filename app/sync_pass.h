// Reads every host's packets once to synchronize their clocks (the pre-pass of offline
// multi-host analysis, and the whole of `waitpath sync`).
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "incremental/clock_sync.h"
#include "live/host_reader.h"
#include "live/trace_discovery.h"
#include "stream/host_stats.h"

namespace waitpath {

struct SyncPassResult {
  std::unique_ptr<ClockSync> sync;
  std::vector<HostStats> stats;
};

// The batches the sync pass decoded, kept (up to a byte budget) so that the analysis after it
// need not decode the traces a second time.
struct KeptBatches {
  size_t budget_bytes = 0;
  size_t bytes = 0;
  bool over_budget = false;  // everything kept was dropped: the input did not fit
  std::vector<std::deque<std::unique_ptr<Batch>>> hosts;

  // Takes the batch if it still fits; past the budget, drops everything kept.
  bool Keep(std::unique_ptr<Batch>& batch);
};

// `reference`: a host name, or empty for the first host. Returns false (and `error`) when
// the reference host is not among the traces. With `keep`, the decoded batches are kept too.
bool RunSyncPass(const std::vector<HostSpec>& hosts, const std::string& reference,
                 const ReaderOptions& reader_options, bool two_phase, SyncPassResult* out,
                 std::string* error, KeptBatches* keep = nullptr);

std::string ClockJson(const HostClock& clock);

}  // namespace waitpath
