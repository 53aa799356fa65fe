// Writes `waitpath stats` results: a table for people, or one JSON object per host.
#pragma once

#include <ostream>
#include <vector>

#include "live/trace_discovery.h"
#include "stream/host_stats.h"

namespace waitpath {

void WriteStatsText(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats);
void WriteStatsJson(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats);

}  // namespace waitpath
