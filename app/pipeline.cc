#include "app/pipeline.h"

#include <optional>

#include "app/sync_pass.h"
#include "stream/host_streams.h"
#include "stream/time_merger.h"

namespace waitpath {

bool RunPipeline(const std::vector<HostSpec>& hosts, const PipelineOptions& options, Engine& engine,
                 std::vector<HostStats>* stats, const PipelineCallbacks& callbacks,
                 std::string* error) {
  stats->assign(hosts.size(), HostStats{});
  for (size_t i = 0; i < hosts.size(); ++i) (*stats)[i].host = hosts[i].hostname;

  if (hosts.size() == 1) {
    HostStreams streams(hosts, options.reader);
    if (callbacks.on_clocks) callbacks.on_clocks({});
    streams.Start();
    while (auto batch = streams.Next()) {
      (*stats)[batch->host].Add(*batch);
      engine.Push(*batch);
      if (callbacks.on_batch) callbacks.on_batch(*batch);
      streams.Recycle(std::move(batch));
    }
    return true;
  }

  // Offline, the whole input is there: synchronize on all of it first (deterministic, and
  // the most accurate transform), then analyse in reference time: from the batches the sync
  // pass kept when they fit the budget, else by decoding the traces again.
  SyncPassResult sync;
  KeptBatches kept;
  kept.budget_bytes = options.keep_decoded_bytes;
  if (!RunSyncPass(hosts, options.reference, options.reader, /*two_phase=*/true, &sync, error,
                   &kept))
    return false;
  const std::vector<HostClock> clocks = sync.sync->Clocks();
  sync.sync.reset();  // its packet tables and kept matches are not needed any more
  if (callbacks.on_clocks) callbacks.on_clocks(clocks);
  TimeMerger merger(hosts.size());
  for (size_t h = 0; h < hosts.size(); ++h)
    merger.SetTransform(static_cast<uint16_t>(h), clocks[h].transform);
  engine.SetSynchronized(true);

  // Kept batches were counted by the sync pass already; decoded again, they are counted here.
  std::optional<HostStreams> streams;
  if (kept.over_budget) {
    streams.emplace(hosts, options.reader);
    streams->Start();
  } else {
    *stats = std::move(sync.stats);
  }
  auto next_from = [&](size_t host) -> std::unique_ptr<Batch> {
    if (streams) return streams->NextFrom(host);
    if (host >= kept.hosts.size() || kept.hosts[host].empty()) return nullptr;
    std::unique_ptr<Batch> batch = std::move(kept.hosts[host].front());
    kept.hosts[host].pop_front();
    return batch;
  };
  for (;;) {
    Event e;
    const Batch* from = nullptr;
    while (merger.Next(&e, &from)) engine.Process(e, *from);
    for (auto& done : merger.TakeConsumed()) {
      if (callbacks.on_batch) callbacks.on_batch(*done);
      if (streams) streams->Recycle(std::move(done));  // kept batches are freed as they go
    }
    if (merger.done() || merger.needed() < 0) break;
    auto batch = next_from(static_cast<size_t>(merger.needed()));
    if (!batch) break;
    if (streams) (*stats)[batch->host].Add(*batch);
    merger.Push(std::move(batch));
  }
  return true;
}

}  // namespace waitpath
