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
  std::function<void(const Batch&)> on_batch;                    // per batch, once processed
};

inline constexpr size_t kDefaultKeepDecodedMb = 512;

struct PipelineOptions {
  ReaderOptions reader;
  std::string reference;  // several hosts: the reference clock's host name, or empty (the first)
  // Several hosts: the events the clock-sync pass decodes are kept, up to this many bytes, and
  // analysed from memory; a larger input is decoded a second time instead.
  size_t keep_decoded_bytes = kDefaultKeepDecodedMb << 20;
};

// False with `error` on a bad reference.
bool RunPipeline(const std::vector<HostSpec>& hosts, const PipelineOptions& options, Engine& engine,
                 std::vector<HostStats>* stats, const PipelineCallbacks& callbacks,
                 std::string* error);

}  // namespace waitpath
