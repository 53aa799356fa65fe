// Writes `waitpath stats` results: a table for people, or one JSON object per host.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "base/time_format.h"
#include "exporters/quality_counters.h"
#include "readers/trace_discovery.h"
#include "stream/host_stats.h"

namespace waitpath {

// The value of a data-quality counter (exporters/quality_counters.h) as `stats` reports it;
// every counter with a stats key has one.
std::optional<uint64_t> StatsValue(const HostStats& stats, QualityCounter counter);

void WriteStatsText(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats, const TimeFormat& time_format = {});
void WriteStatsJson(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats);

}  // namespace waitpath
