// The flags `analyze`, `live` and `tail` share: which tasks, which waits, how much history.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "exporters/analysis_report.h"
#include "exporters/span_report.h"
#include "exporters/watch.h"
#include "incremental/engine.h"

namespace waitpath {

// Parses --watch selectors, --min-wait and --retention into `watch`, `report` (min_wait_ns
// is left as set when `min_wait` is empty) and `engine`. False, with a one-line `error`
// naming the flag, on bad input.
// --clock-date, --clock-gmt, --clock-seconds (base/time_format.h), as babeltrace2's.
void AddClockFlags(CLI::App* command, TimeFormat* format);

// --state disk,network: the headline states (incremental/leaf_state.h names) to show, as a bit
// per Leaf. False, with a one-line `error` naming the closest state, on an unknown one.
bool ParseStateList(const std::string& list, uint32_t* mask, std::string* error);

bool ParseReportFlags(const std::vector<std::string>& watch_flags, const std::string& min_wait,
                      const std::string& retention, WatchSet* watch, AnalysisOptions* report,
                      EngineOptions* engine, std::string* error);

// --min-span DUR and --operation RE (docs/requests.md) on `command`.
void AddSpanFlags(CLI::App* command, std::string* min_span, std::string* operation);
// Parses them into `spans`; with either given, a record is written per matching span.
bool ParseSpanFlags(const std::string& min_span, const std::string& operation,
                    SpanReportOptions* spans, std::string* error);

}  // namespace waitpath
