#include "app/report_flags.h"

#include "app/analyze_command.h"

namespace waitpath {

bool ParseReportFlags(const std::vector<std::string>& watch_flags, const std::string& min_wait,
                      const std::string& retention, WatchSet* watch, AnalysisOptions* report,
                      EngineOptions* engine, std::string* error) {
  for (const std::string& w : watch_flags) {
    WatchSelector s;
    if (!ParseWatch(w, &s, error)) return false;
    watch->Add(std::move(s));
  }
  if (!min_wait.empty() && !ParseDuration(min_wait, &report->min_wait_ns)) {
    *error = "--min-wait '" + min_wait + "': expected a duration such as 5ms, 200us or 1s";
    return false;
  }
  if (!ParseDuration(retention, &engine->retention_ns)) {
    *error = "--retention '" + retention + "': expected a duration such as 30s";
    return false;
  }
  return true;
}

}  // namespace waitpath
