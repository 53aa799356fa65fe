#include "app/host_errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "base/output.h"
#include "base/untrusted_name.h"
#include "model/string_table.h"

namespace waitpath {

int FindHosts(const std::vector<std::string>& paths, const DiscoverOptions& options,
              std::vector<HostSpec>* hosts) {
  std::string error;
  const Discovery found = DiscoverHosts(paths, hosts, &error, options);
  if (!found) {
    hosts->clear();
    Say("waitpath: {}\n", error);
    return found.refused ? 2 : 1;
  }
  for (const std::string& line : found.unread) Say("waitpath: {}\n", line);
  return found.unread.empty() ? 0 : 1;
}

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

void ReportNothingWatched(const WatchedAccounting& accounting,
                          const std::vector<std::string>& watch) {
  static constexpr size_t kNamed = 8;
  if (accounting.any_watched() || watch.empty()) return;
  const TaskTable& tasks = accounting.engine().tasks();
  // The processes seen, by name, in the order they first appeared.
  std::set<std::string_view> seen;
  std::vector<std::string> named;
  for (Utid u = 0; u < tasks.size(); ++u) {
    const std::string_view comm = StringTable::Global().Get(tasks[u].comm);
    if (comm.empty() || !seen.insert(comm).second) continue;
    if (named.size() < kNamed) named.push_back(PrintableName(comm, 64));
  }
  if (seen.empty()) return;
  std::vector<std::string> quoted;
  for (const std::string& w : watch) quoted.push_back("'" + PrintableName(w, 200) + "'");
  Say("waitpath: --watch {} matched none of the {} process names seen ({}{}); a comm= pattern "
      "must match the whole name (comm=NAME.* for names that begin with NAME)\n",
      fmt::join(quoted, " "), seen.size(), fmt::join(named, ", "),
      seen.size() > named.size() ? ", …" : "");
}

}  // namespace waitpath
