// `waitpath live` and `waitpath tail`: attach to LTTng relay daemons and analyse their
// sessions continuously (or tail recorded traces), until stopped.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "app/analysis.h"
#include "app/capture_flags.h"
#include "base/time_format.h"

namespace waitpath {

struct LiveOptions {
  std::string relayd = "net://127.0.0.1";  // net://HOST[:PORT]
  std::vector<std::string> sessions;       // session names to attach; with `all`, every one
  bool all = false;
  std::vector<std::string> traces;  // `tail` on recorded traces instead of a relayd
  int sync_passes = 1;              // `tail TRACE…` on several hosts: as analyze --sync-passes
  std::vector<std::string> watch;   // --watch selectors, as for analyze
  std::string min_wait;             // report waits at least this long ("" = all, tail)
  bool tail = false;                // print each resolved wait as it resolves
  bool json = false;
  std::string metrics;  // ADDR:PORT for /metrics; empty: none
  size_t max_processes = 50;
  std::string label_by = "process";  // --label-by: process or cgroup
  std::string retention = "30s";
  std::string max_lag = "10s";  // a host further behind is not waited for
  int64_t max_lag_ns = 0;       // parsed by RunLive (PlanLive)
  bool verbose = false;
  std::string decoder = "auto";  // --decoder: of recorded traces and live sessions
  TimeFormat time_format;
  // In a terminal, tail/live/demo draw a full-screen view (exporters/terminal_screen.h);
  // --plain (or output that is not a terminal) prints lines instead.
  bool plain = false;
  std::string states;     // --state disk,network: waits whose headline state is one of these
  CaptureFlags capture;   // live: --capture-dir DIR --capture-min-wait DUR --capture-traces DIR
  std::string min_span;   // --min-span: span records at least this long
  std::string operation;  // --operation: span records of matching operations only
  // One shard of a fleet (docs/scale.md): --shard NAME --bus URL --own RE.
  std::string shard;
  std::string bus;       // nats://HOST:PORT[,...]
  std::string own;       // regex over host names: the sessions this shard follows
  int bus_replicas = 1;  // of the JetStream stream, when this shard creates it
  int64_t edge_wait_ms = 2000;
  int64_t stall_ms = 15000;
  std::string attach = "live";  // --attach: a session's live position, or its beginning
};

// The analysis `live` and `tail` run, from their flags: the report's lines, or the terminal
// view's model when `screen`; span records and the per-operation summary; on a relayd, metrics
// and captures when asked for (their traces and timelines are the command's to add). False, with
// a one-line `error`, on a bad flag; `max_lag_ns` from --max-lag.
bool PlanLive(const LiveOptions& options, bool screen, AnalysisPlan* plan, int64_t* max_lag_ns,
              std::string* error);

// Runs until `*stop` becomes true, or SIGINT/SIGTERM when `stop` is null (base/stop_signal.h;
// clean shutdown: graphs torn down, reader threads joined). Returns the process exit code.
int RunLive(const LiveOptions& options, std::atomic<bool>* stop);

}  // namespace waitpath
