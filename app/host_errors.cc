#include "app/host_errors.h"

#include <fmt/format.h>

namespace waitpath {

int ReportHostErrors(const std::vector<HostStats>& stats, HostCheck check) {
  int code = 0;
  for (const HostStats& s : stats) {
    if (!s.error.empty()) {
      fmt::print(stderr, "waitpath: host {}: {}\n", s.host, s.error);
      code = 1;
    } else if (check == HostCheck::kReadAndAnalyse && !s.analysable()) {
      fmt::print(stderr,
                 "waitpath: host {}: no sched_switch events: nothing to analyse (not a kernel "
                 "trace?)\n",
                 s.host);
      code = 1;
    }
  }
  return code;
}

}  // namespace waitpath
