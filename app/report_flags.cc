#include "app/report_flags.h"

#include <fmt/format.h>

#include <string_view>

#include "app/flag_checks.h"
#include "base/duration.h"
#include "incremental/leaf_state.h"

namespace waitpath {

void AddClockFlags(CLI::App* command, TimeFormat* format) {
  command->add_flag("--clock-date", format->date,
                    "Times with their date (local time unless --clock-gmt)");
  command->add_flag("--clock-gmt", format->gmt, "Times in UTC instead of local time");
  command->add_flag("--clock-seconds", format->seconds,
                    "Times as seconds since the epoch (or boot)");
}

bool ParseStateList(const std::string& list, uint32_t* mask, std::string* error) {
  *mask = 0;
  std::string_view rest = list;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    bool found = false;
    for (int i = 0; i < kLeafCount; ++i) {
      if (LeafName(static_cast<Leaf>(i)) == name) {
        *mask |= 1u << i;
        found = true;
      }
    }
    if (!found) {
      std::string names;
      for (int i = 0; i < kLeafCount; ++i)
        names += fmt::format("{}{}", i ? ", " : "", LeafName(static_cast<Leaf>(i)));
      *error = fmt::format("--state: '{}' is not a state (one of: {})", name, names);
      return false;
    }
  }
  if (*mask == 0) {
    *error = "--state: give at least one state (e.g. disk,network)";
    return false;
  }
  return true;
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

void AddSpanFlags(CLI::App* command, std::string* min_span, std::string* operation) {
  command
      ->add_option("--min-span", *min_span,
                   "Write a record for each application span at least this long (e.g. 5ms)")
      ->check(DurationCheck(false));
  command->add_option("--operation", *operation,
                      "Only span records whose operation name matches this RE2 pattern (whole "
                      "name)");
}

bool ParseSpanFlags(const std::string& min_span, const std::string& operation,
                    SpanReportOptions* spans, std::string* error) {
  if (!min_span.empty() && !ParseDurationFlag("--min-span", min_span, &spans->min_span_ns, error)) {
    return false;
  }
  if (!operation.empty() && !SpanReport::CheckOperation(operation, error)) return false;
  spans->operation = operation;
  if (!min_span.empty() || !operation.empty()) spans->records = true;
  return true;
}

}  // namespace waitpath
