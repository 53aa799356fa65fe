#include "app/host_errors.h"

#include <fmt/format.h>

#include "base/output.h"

namespace waitpath {

int ReportHostErrors(const std::vector<HostStats>& stats, HostCheck check) {
  int code = 0;
  for (const HostStats& s : stats) {
    if (!s.error.empty()) {
      Say("waitpath: host {}: {}\n", s.host, s.error);
      code = 1;
    } else if (check == HostCheck::kReadAndAnalyse && !s.analysable()) {
      Say("waitpath: host {}: no sched_switch events: nothing to analyse (not a kernel "
          "trace?)\n",
          s.host);
      code = 1;
    }
  }
  return code;
}

}  // namespace waitpath
