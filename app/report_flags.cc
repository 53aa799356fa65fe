#include "app/report_flags.h"

#include "base/duration.h"

namespace waitpath {

void AddClockFlags(CLI::App* command, TimeFormat* format) {
  command->add_flag("--clock-date", format->date,
                    "Times with their date (local time unless --clock-gmt)");
  command->add_flag("--clock-gmt", format->gmt, "Times in UTC instead of local time");
  command->add_flag("--clock-seconds", format->seconds,
                    "Times as seconds since the epoch (or boot)");
}

bool ParseReportFlags(const std::vector<std::string>& watch_flags, const std::string& min_wait,
                      const std::string& retention, WatchSet* watch, AnalysisOptions* report,
                      EngineOptions* engine, std::string* error) {
  for (const std::string& w : watch_flags) {
    WatchSelector s;
    if (!ParseWatch(w, &s, error)) return false;
    watch->Add(std::move(s));
  }
  if (!min_wait.empty() &&
      !ParseDurationFlag("--min-wait", min_wait, &report->min_wait_ns, error)) {
    return false;
  }
  return ParseDurationFlag("--retention", retention, &engine->retention_ns, error);
}

}  // namespace waitpath
