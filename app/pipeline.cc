#include "app/pipeline.h"

#include "app/sync_pass.h"
#include "stream/host_streams.h"
#include "stream/time_merger.h"

namespace waitpath {

bool RunPipeline(const std::vector<HostSpec>& hosts, const ReaderOptions& reader_options,
                 const std::string& reference, Engine& engine, std::vector<HostStats>* stats,
                 const PipelineCallbacks& callbacks, std::string* error) {
  stats->assign(hosts.size(), HostStats{});
  for (size_t i = 0; i < hosts.size(); ++i) (*stats)[i].host = hosts[i].hostname;
  HostStreams streams(hosts, reader_options);

  if (hosts.size() == 1) {
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
  // the most accurate transform), then analyse in reference time.
  SyncPassResult sync;
  if (!RunSyncPass(hosts, reference, reader_options.verbose, /*two_phase=*/true, &sync, error)) return false;
  const std::vector<HostClock>& clocks = sync.sync->Clocks();
  if (callbacks.on_clocks) callbacks.on_clocks(clocks);
  TimeMerger merger(hosts.size());
  for (size_t h = 0; h < hosts.size(); ++h) merger.SetTransform(static_cast<uint16_t>(h), clocks[h].transform);
  engine.SetSynchronized(true);

  streams.Start();
  for (;;) {
    Event e;
    const Batch* from = nullptr;
    while (merger.Next(&e, &from)) engine.Process(e, *from);
    for (auto& done : merger.TakeConsumed()) {
      if (callbacks.on_batch) callbacks.on_batch(*done);
      streams.Recycle(std::move(done));
    }
    if (merger.done() || merger.needed() < 0) break;
    auto batch = streams.NextFrom(static_cast<size_t>(merger.needed()));
    if (!batch) break;
    (*stats)[batch->host].Add(*batch);
    merger.Push(std::move(batch));
  }
  return true;
}

}  // namespace waitpath
