#include "app/engine_feed.h"

namespace waitpath {

bool AnalyseTraces(const std::vector<HostSpec>& hosts, PipelineOptions options, EngineFeed& feed,
                   std::vector<HostStats>* stats, std::string* error) {
  options.policy = hosts.size() == 1 ? SyncPolicy::kIdentity : SyncPolicy::kPrePass;
  Pipeline pipeline(std::move(options), &feed);
  for (const HostSpec& host : hosts) pipeline.AddSource(host);
  const bool ok = pipeline.Run(error);
  *stats = pipeline.stats();
  return ok;
}

}  // namespace waitpath
