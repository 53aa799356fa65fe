// `waitpath demo` (docs/demo.md): its flags, and the live analysis it runs against its private
// relayd (RunLive, as `waitpath live --all --tail`). The demo itself is tools/demo/.
#include <fmt/format.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/flag_checks.h"
#include "app/live_command.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/stop_signal.h"
#include "exporters/metrics_server.h"
#include "tools/demo/demo.h"

namespace waitpath {
namespace {

struct DemoFlags {
  demo::DemoOptions demo;
  std::string duration;  // empty: until a signal
  bool json = false;
  std::vector<std::string> watch;
  std::string min_wait;
  bool no_metrics = false;
  bool verbose = false;
  bool plain = false;
  std::string states;
  std::string capture_dir;
  std::string capture_min_request = "p99";
};

int RunDemoCommand(DemoFlags f) {
  std::string error;
  if (!f.duration.empty()) {
    if (!ParseDurationFlag("--duration", f.duration, &f.demo.duration_ns, &error)) {
      Say("waitpath demo: {}\n", error);
      return 2;
    }
    if (f.demo.duration_ns == 0) {
      Say("waitpath demo: --duration: '{}' must be more than 0\n", f.duration);
      return 2;
    }
  }
  if (!(f.demo.speed > 0)) {
    Say("waitpath demo: --speed must be positive\n");
    return 2;
  }
  if (!f.capture_dir.empty()) {
    // Checked before any daemon starts (the relayd's output directory is not there yet).
    CaptureFlags capture;
    capture.dir = f.capture_dir;
    capture.min_request = f.capture_min_request;
    CaptureOptions unused;
    if (!ParseCaptureFlags(capture, false, &unused, &error)) {
      Say("waitpath demo: {}\n", error);
      return 2;
    }
  }
  // Signals only raise the flag: the demo stops its children in order, not the terminal.
  InstallStopSignal({SIGHUP});

  // Before any daemon starts: the default port may well be taken by a `waitpath live` service.
  if (f.no_metrics) {
    f.demo.metrics.clear();
  } else {
    std::string address;
    if (!ParseListenAddress(f.demo.metrics, &address, &error)) {
      Say("waitpath demo: {}\n", error);
      return 2;
    }
    if (!MetricsServer::Start(f.demo.metrics, std::make_shared<prometheus::Registry>(), &error)) {
      Say("waitpath demo: {} (choose another with --metrics ADDR:PORT, or --no-metrics)\n", error);
      return 1;
    }
  }

  return demo::RunDemo(f.demo, StopRequested(),
                       [&f](const demo::LiveRelay& relay, std::atomic<bool>* stop) {
                         LiveOptions live;
                         live.relayd = relay.url;
                         live.all = true;
                         live.tail = true;
                         live.json = f.json;
                         live.watch = f.watch.empty() ? relay.watch : f.watch;
                         live.min_wait = f.min_wait;
                         live.metrics = f.demo.metrics;
                         live.verbose = f.verbose;
                         live.plain = f.plain;
                         live.states = f.states;
                         if (!f.capture_dir.empty()) {
                           // Cut from the relayd's files: waitpath runs beside it.
                           live.capture.dir = f.capture_dir;
                           live.capture.min_request = f.capture_min_request;
                           live.capture.margin = "100ms";
                           live.capture.traces = relay.output;
                         }
                         return RunLive(live, stop);
                       });
}

}  // namespace

Command AddDemoCommand(CLI::App& app) {
  auto f = std::make_shared<DemoFlags>();
  f->demo.metrics = "127.0.0.1:9464";
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Live demo: replays a generated three-host trace set through private LTTng daemons and "
      "tails why its tasks wait (needs root and lttng-tools)");
  cmd->add_option("--speed", f->demo.speed, "Replay speed (1 = real time)")->capture_default_str();
  cmd->add_option("--duration", f->duration, "Stop by itself after this long (e.g. 30s)")
      ->check(DurationCheck(true));
  cmd->add_flag("--json", f->json, "JSON Lines output, as waitpath live --json");
  cmd->add_option("--watch", f->watch,
                  "Tasks to watch, as for analyze (default: the built-in scenario's client, web "
                  "server and database; all tasks of --traces or --scenario)")
      ->allow_extra_args(false);
  cmd->add_option("--min-wait", f->min_wait, "Print waits at least this long (e.g. 1ms)")
      ->check(DurationCheck(false));
  cmd->add_flag("--plain", f->plain,
                "One line per wait even in a terminal (default there: a full-screen view)");
  AddStateOption(cmd, &f->states);
  cmd->add_option("--metrics", f->demo.metrics, "Serve Prometheus /metrics at ADDR:PORT")
      ->capture_default_str()
      ->check(ListenAddressCheck());
  cmd->add_flag("--no-metrics", f->no_metrics, "Do not serve /metrics");
  cmd->add_option("--scenario", f->demo.scenario,
                  "Generator scenario to replay (default: tools/demo/demo.toml)");
  cmd->add_option("--traces", f->demo.traces, "Replay these recorded traces instead of generating")
      ->excludes("--scenario");
  cmd->add_option("--capture-dir", f->capture_dir,
                  "Capture the slowest requests here: the trace of every host on their path, "
                  "their record and a timeline (docs/capture.md)");
  cmd->add_option("--capture-min-request", f->capture_min_request,
                  "Which requests: at least this long, or, as pNN, slower than that percentile "
                  "of their operation's recent ones")
      ->capture_default_str();
  cmd->add_option("--pid-file", f->demo.pid_file,
                  "Write the pids of what the demo started, and its work directory, here");
  cmd->add_flag("-v,--verbose", f->verbose, "babeltrace2 warnings and full error chains");
  return Command{cmd, [f] { return RunDemoCommand(*f); }};
}

}  // namespace waitpath
