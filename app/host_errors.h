// What went wrong reading each host, and a selection that matched nothing, reported the same
// way by every command that reads traces.
#pragma once

#include <string>
#include <vector>

#include "exporters/watched_accounting.h"
#include "readers/trace_discovery.h"
#include "stream/host_stats.h"

namespace waitpath {

enum class HostCheck {
  kRead,            // read to the end
  kReadAndAnalyse,  // read to the end, with scheduler switches to analyse
};

// The hosts of the command line's `paths` (readers/trace_discovery.h). What cannot be read (a
// missing path, a trace the check refuses) is one line each on stderr and the rest is read:
// returns the exit status so far, 0, 1 (something not read; `hosts` empty: nothing to read)
// or 2 (two recordings of one hostname without --merge-recordings; `hosts` empty).
int FindHosts(const std::vector<std::string>& paths, const DiscoverOptions& options,
              std::vector<HostSpec>* hosts);

// Prints one line on stderr per host that failed `check`, "waitpath: host NAME: WHY". Returns
// the exit status that calls for: 1 when a host failed, else 0.
int ReportHostErrors(const std::vector<HostStats>& stats, HostCheck check = HostCheck::kRead);

// When `watch` (the --watch selectors as given) selected no task of those the engine saw: one
// line on stderr naming the selection and some of the processes seen, so that an empty report
// is never silent. Nothing when nothing was read.
void ReportNothingWatched(const WatchedAccounting& accounting,
                          const std::vector<std::string>& watch);

}  // namespace waitpath
