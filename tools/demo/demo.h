// `waitpath demo`: the whole live path on one machine, with nothing to configure
// (docs/demo.md). It generates a multi-host trace set, starts a private lttng-relayd and one
// private lttng-sessiond per host (each in its own mount + UTS namespace carrying the host's
// name), replays every host's trace into a live session in a loop, and runs the live analysis
// it is given against the relayd. Everything it starts is stopped by pid, never by name, and
// its work directory is removed, once stopped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace waitpath::demo {

struct DemoOptions {
  double speed = 1.0;       // replay speed (> 0; 1 = real time)
  int64_t duration_ns = 0;  // stop by itself after this long; 0: only when stopped
  std::string scenario;     // generator scenario; empty: the built-in tools/demo/demo.toml
  std::string traces;       // replay these recorded traces instead of generating
  std::string pid_file;     // list what was started here (ROLE [HOST] PID, workdir DIR)
  std::string metrics;      // for the start message: where the analysis serves /metrics, if it does
};

// What the analysis attaches to, once every host streams.
struct LiveRelay {
  std::string url;     // the relayd's live port, net://127.0.0.1:PORT
  std::string output;  // the relayd's output directory (lttng-relayd -o), for captures
  // The tasks whose waits tell the demo's story (--watch selectors): the built-in scenario's
  // programs, not its background noise; empty: every task.
  std::vector<std::string> watch;
};

// Runs the live analysis on `relay` until `*stop` is raised; returns its exit status.
using Analysis = std::function<int(const LiveRelay& relay, std::atomic<bool>* stop)>;

// Starts everything, runs `analysis` until `stop` is raised (by a signal, by the duration, or
// because something the demo started stopped by itself), then stops everything in order.
// Returns 0 when stopped, 1 when something could not start or stopped by itself (the reason
// on one line of stderr), else the analysis' exit status.
int RunDemo(const DemoOptions& options, std::atomic<bool>& stop, const Analysis& analysis);

}  // namespace waitpath::demo
