// `waitpath stats`: read traces end to end and report per-host reading figures.
#pragma once

#include <string>
#include <vector>

#include "base/time_format.h"

namespace waitpath {

struct StatsOptions {
  std::vector<std::string> traces;
  bool json = false;
  bool verbose = false;
  std::string decoder = "auto";        // --decoder: of recorded traces
  std::string host_from = "hostname";  // or "dir": hosts named by their directory
  bool merge_recordings = false;       // two recordings of one hostname read as one host
  TimeFormat time_format;
};

// Returns the process exit code: 0, or 1 when a trace could not be read completely.
int RunStats(const StatsOptions& options);

}  // namespace waitpath
