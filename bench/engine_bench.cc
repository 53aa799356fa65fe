// Per-event cost of the engine alone: reads one host's trace once into memory (the decoded
// batches, as the pipeline delivers them to `waitpath analyze`), then times Engine::Push over
// all of them, REPS times, each with a fresh Engine. Prints one JSON object.
//
// Usage: waitpath_engine_bench [--reps N] [--retention-ms MS] TRACE...
// (A host's span events are resolved without a listener: the cost of the SpanTracker alone.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "incremental/engine.h"
#include "readers/trace_discovery.h"
#include "stream/pipeline.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Kept out of line so that callgrind's --toggle-collect can name it.
__attribute__((noinline)) void PushAll(
    waitpath::Engine& engine, const std::vector<std::unique_ptr<waitpath::Batch>>& batches) {
  for (const auto& b : batches) engine.Push(*b);
}

int Usage() {
  std::fprintf(stderr, "usage: waitpath_engine_bench [--reps N] [--retention-ms MS] TRACE...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  int64_t retention_ms = -1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--retention-ms") && i + 1 < argc) {
      retention_ms = std::atoll(argv[++i]);
    } else if (argv[i][0] == '-') {
      return Usage();
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty() || reps < 1) return Usage();

  std::vector<waitpath::HostSpec> hosts;
  std::string error;
  if (!waitpath::DiscoverHosts(paths, &hosts, &error)) {
    std::fprintf(stderr, "engine_bench: %s\n", error.c_str());
    return 1;
  }
  if (hosts.size() != 1) {
    // Engine::Push takes one host's batches in order; several hosts need the clock-sync pass
    // and the merger (that is `waitpath analyze`, measured end to end by bench/run.sh).
    std::fprintf(stderr, "engine_bench: expected one host, found %zu\n", hosts.size());
    return 2;
  }

  // Read everything first (the reader thread decodes; batches are kept, never recycled).
  const auto r0 = Clock::now();
  std::vector<std::unique_ptr<waitpath::Batch>> batches;
  uint64_t events = 0;
  {
    waitpath::Pipeline pipeline(waitpath::PipelineOptions{}, nullptr);
    pipeline.AddSource(hosts[0]);
    waitpath::KeptBatches kept;
    kept.budget_bytes = SIZE_MAX;
    pipeline.ReadAll(&error, &kept);
    while (auto batch = kept.Pop(0)) {
      events += batch->events.size();
      if (!batch->error.empty()) std::fprintf(stderr, "engine_bench: %s\n", batch->error.c_str());
      batches.push_back(std::move(batch));
    }
  }
  const double read_s = Seconds(r0, Clock::now());

  waitpath::EngineOptions options;
  if (retention_ms >= 0) options.retention_ns = retention_ms * 1'000'000;
  std::vector<double> secs;
  waitpath::EngineCounters counters;
  uint64_t spans = 0;
  size_t history_bytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    waitpath::Engine engine(options);
    const auto t0 = Clock::now();
    PushAll(engine, batches);
    secs.push_back(Seconds(t0, Clock::now()));
    counters = engine.counters();
    spans = engine.spans().counters().ended;
    history_bytes = engine.history_bytes();
  }
  std::vector<double> sorted = secs;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  const double per_event_ns = events ? median * 1e9 / static_cast<double>(events) : 0;
  std::printf(
      "{\"trace\":\"%s\",\"events\":%llu,\"batches\":%zu,\"read_s\":%.4f,\"reps\":%d,\"push_s\":[",
      paths[0].c_str(), static_cast<unsigned long long>(events), batches.size(), read_s, reps);
  for (size_t i = 0; i < secs.size(); ++i) std::printf("%s%.5f", i ? "," : "", secs[i]);
  // The first repetition's history comes from fresh memory (page faults); later ones reuse
  // what the previous engine gave back to the chunk pool, as a long-running process does.
  std::printf(
      "],\"push_median_s\":%.5f,\"ns_per_event\":%.2f,\"min_ns_per_event\":%.2f,"
      "\"first_ns_per_event\":%.2f,"
      "\"waits\":%llu,\"waits_per_s\":%.0f,\"events_per_s\":%.0f,\"retention_ns\":%lld,"
      "\"history_segments\":%llu,\"evicted_segments\":%llu,\"history_bytes\":%zu,"
      "\"spans\":%llu,\"bytes_per_open_span\":%zu}\n",
      median, per_event_ns, events ? sorted[0] * 1e9 / static_cast<double>(events) : 0,
      events ? secs[0] * 1e9 / static_cast<double>(events) : 0,
      static_cast<unsigned long long>(counters.waits),
      median > 0 ? static_cast<double>(counters.waits) / median : 0,
      median > 0 ? static_cast<double>(events) / median : 0,
      static_cast<long long>(options.retention_ns),
      static_cast<unsigned long long>(counters.history_segments),
      static_cast<unsigned long long>(counters.evicted_segments), history_bytes,
      static_cast<unsigned long long>(spans), waitpath::SpanTracker::BytesPerOpenSpan());
  return 0;
}
