#include "app/engine_feed.h"

namespace waitpath {

bool AnalyseTraces(const std::vector<HostSpec>& hosts, PipelineOptions options, EngineFeed& feed,
                   std::vector<HostStats>* stats, std::string* error) {
  if (hosts.size() == 1) {
    options.policy = SyncPolicy::kIdentity;
  } else if (options.policy != SyncPolicy::kPrePass) {
    options.policy = SyncPolicy::kOnePass;
  }
  Pipeline pipeline(std::move(options), &feed);
  for (const HostSpec& host : hosts) pipeline.AddSource(host);
  const bool ok = pipeline.Run(error);
  *stats = pipeline.stats();
  return ok;
}

}  // namespace waitpath
