// `waitpath analyze`: active paths of watched tasks over recorded traces.
#pragma once

#include <string>
#include <vector>

#include "app/analysis.h"
#include "app/capture_flags.h"
#include "app/timeline_flags.h"
#include "base/time_format.h"
#include "stream/pipeline.h"

namespace waitpath {

// What `analyze` exports to Prometheus (docs/metrics.md).
struct MetricsFlags {
  std::string file;    // --metrics-file: text exposition written once at the end
  std::string listen;  // --metrics ADDR:PORT: served during the analysis and after it
  std::string linger;  // --metrics-linger: how long to keep serving after; empty: until a signal
  size_t max_processes = 50;
  std::string label_by = "process";  // --label-by: process or cgroup
};

struct AnalyzeOptions {
  std::vector<std::string> traces;
  std::vector<std::string> watch;
  std::string min_wait;  // e.g. "5ms"; empty: no wait records
  size_t top = 10;
  bool json = false;
  std::string format = "text";  // text, json, folded, csv
  TimeFormat time_format;
  bool verbose = false;
  std::string decoder = "auto";  // --decoder: of recorded traces
  std::string retention = "30s";
  size_t max_history_mb = 256;
  size_t keep_decoded_mb =
      kDefaultKeepDecodedMb;  // several hosts: reuse the sync pass's decoded events
  // Several hosts: 1 reads the traces once, the sync improving as it goes (kOnePass); 2 fixes
  // the transforms from a whole first pass (kPrePass).
  int sync_passes = 1;
  std::string reference;  // several hosts: the reference clock's host (default: the first)
  std::string host_from = "hostname";  // or "dir": hosts named by their directory
  bool merge_recordings = false;       // two recordings of one hostname read as one host
  TimelineFlags timeline;              // --timeline FILE [--from T] [--to T] [--timeline-max-mb]
  CaptureFlags capture;                // --capture-dir DIR --capture-min-wait DUR...
  std::string min_span;                // --min-span: a record per span at least this long (text)
  std::string operation;               // --operation: span records of matching operations only
  MetricsFlags metrics;
};

// The analysis `analyze` runs, from its flags: the report in its format, the span report, and a
// timeline, captures and metrics when asked for (the hosts, the timeline's reference and the
// captures' traces are the command's to add once it found the traces). False, with a one-line
// `error`, on a bad flag.
bool PlanAnalysis(const AnalyzeOptions& options, AnalysisPlan* plan, std::string* error);

int RunAnalyze(const AnalyzeOptions& options);

}  // namespace waitpath
