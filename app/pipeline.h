// Feeds every host's events to the engine: for several hosts, after a clock-sync pre-pass,
// in one merged reference-clock order; for one host, as read.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "incremental/clock_sync.h"
#include "incremental/engine.h"
#include "live/host_reader.h"
#include "stream/host_stats.h"

namespace waitpath {

struct PipelineCallbacks {
  std::function<void(const std::vector<HostClock>&)> on_clocks;  // once, before any event
  std::function<void(const Batch&)> on_batch;                     // per batch, once processed
};

// `reference`: host name or empty (the first). False with `error` on a bad reference.
bool RunPipeline(const std::vector<HostSpec>& hosts, const ReaderOptions& reader_options,
                 const std::string& reference, Engine& engine, std::vector<HostStats>* stats,
                 const PipelineCallbacks& callbacks, std::string* error);

}  // namespace waitpath
