// What went wrong reading each host, reported the same way by every command that reads traces.
#pragma once

#include <vector>

#include "stream/host_stats.h"

namespace waitpath {

enum class HostCheck {
  kRead,            // read to the end
  kReadAndAnalyse,  // read to the end, with scheduler switches to analyse
};

// Prints one line on stderr per host that failed `check`, "waitpath: host NAME: WHY". Returns
// the exit status that calls for: 1 when a host failed, else 0.
int ReportHostErrors(const std::vector<HostStats>& stats, HostCheck check = HostCheck::kRead);

}  // namespace waitpath
