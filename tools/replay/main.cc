// waitpath-replay: re-emits one host's recorded kernel trace as waitpath_replay:event UST
// events, in time order and at its original pace (or faster), so that the live path can be
// exercised on machines where the LTTng kernel tracer cannot run (docs/replay.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/stop_signal.h"
#include "readers/bt_util.h"
#include "readers/host_reader.h"
#include "readers/trace_discovery.h"
#include "tools/replay/record_builder.h"
#include "tools/replay/replay_pacer.h"
#include "tools/replay/ust_emitter.h"

namespace waitpath {
namespace {

// Raised by SIGINT and SIGTERM once the replay starts.
std::atomic<bool>& g_stop = StopRequested();

struct Totals {
  uint64_t events = 0;
  uint64_t rounds = 0;
  int64_t first_ts = std::numeric_limits<int64_t>::max();
  int64_t last_ts = std::numeric_limits<int64_t>::min();
};

// Reads the host's trace once through a HostReader and emits every decoded event, shifted by
// `shift`, its TCP sequence numbers advanced for round `round` (record_builder.h). Returns an
// error line, empty on success or when stopped.
std::string ReplayRound(const HostSpec& host, int64_t shift, uint32_t round, ReplayPacer& pacer,
                        UstEmitter& emitter, Totals& totals, bool verbose) {
  moodycamel::LightweightSemaphore ready;
  ReaderOptions options;
  options.verbose = verbose;
  HostReader reader(0, host, options, &ready);
  reader.Start();
  std::string error;
  bool last = false;
  while (!last && !g_stop.load(std::memory_order_relaxed)) {
    Batch* batch = nullptr;
    if (!reader.queue().try_dequeue(batch)) {
      ready.wait(50'000);  // bounded, to notice a stop request
      continue;
    }
    const uint32_t dialect = batch->counters.dialect;
    for (const Event& e : batch->events) {
      if (!pacer.WaitUntilDue(e.ts + shift, g_stop)) break;
      emitter.Emit(BuildReplayRecord(e, *batch, dialect, shift, round));
      ++totals.events;
      totals.first_ts = std::min(totals.first_ts, e.ts + shift);
      totals.last_ts = e.ts + shift;
    }
    last = batch->last;
    if (last && !batch->error.empty()) error = batch->error;
    reader.Recycle(batch);
  }
  reader.RequestStop();
  return g_stop.load(std::memory_order_relaxed) ? std::string() : error;
}

int Run(const std::string& trace, const std::string& host_name, double speed, bool asap,
        int64_t loops, bool list_hosts, bool verbose, int64_t start_delay_ms, int64_t period_ns) {
  ConfigureBabeltraceLogging(verbose);
  std::vector<HostSpec> hosts;
  std::string error;
  if (!DiscoverHosts({trace}, &hosts, &error)) {
    fmt::print(stderr, "waitpath-replay: {}\n", error);
    return 1;
  }
  if (list_hosts) {
    for (const HostSpec& h : hosts) fmt::print("{}\n", h.hostname);
    return 0;
  }
  const HostSpec* host = nullptr;
  std::string names;
  for (const HostSpec& h : hosts) {
    names += (names.empty() ? "" : ", ") + h.hostname;
    if (h.hostname == host_name || (host_name.empty() && hosts.size() == 1)) host = &h;
  }
  if (!host) {
    fmt::print(stderr, "waitpath-replay: {}: {} (hosts: {}); choose one with --host NAME\n", trace,
               host_name.empty() ? "several hosts" : "no host named '" + host_name + "'", names);
    return 2;
  }
  InstallStopSignal();
  if (!UstEmitter::Enabled()) {
    fmt::print(
        stderr,
        "waitpath-replay: warning: waitpath_replay:event is not enabled in any tracing session "
        "(start lttng-sessiond, then `lttng enable-event -u 'waitpath_replay:*'` and `lttng "
        "start`); "
        "events go nowhere\n");
  }

  // A live viewer attaching to a new session starts at the live position: a delay lets it
  // attach before the first event (waitpath live discovers sessions once a second).
  for (int64_t waited = 0; waited < start_delay_ms && !g_stop.load(); waited += 50) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Latency benches ask the pacer to say when the first event is due (and for which host).
  if (std::getenv("WAITPATH_REPLAY_ANNOUNCE"))
    setenv("WAITPATH_REPLAY_ANNOUNCE", host->hostname.c_str(), 1);
  ReplayPacer pacer(asap ? 0.0 : speed);
  UstEmitter emitter(host->hostname);
  Totals totals;
  int64_t shift = 0;
  const int64_t started = ReplayPacer::MonotonicNs();
  // The shift between rounds: given (hosts replayed together must shift by the same true
  // time, each in its own clock, or their clocks jump apart at every round), else the trace's
  // span + 1 ms, known after the first round.
  int64_t period = period_ns;
  for (int64_t round = 0; (loops <= 0 || round < loops) && !g_stop.load(); ++round) {
    const std::string round_error =
        ReplayRound(*host, shift, static_cast<uint32_t>(round), pacer, emitter, totals, verbose);
    if (!round_error.empty()) {
      fmt::print(stderr, "waitpath-replay: host {}: {}\n", host->hostname, round_error);
      return 1;
    }
    if (g_stop.load()) break;
    ++totals.rounds;
    if (totals.events == 0) break;  // nothing to loop over
    // Later rounds start 1 ms after the previous one's last event: time keeps increasing.
    if (period <= 0) period = totals.last_ts - totals.first_ts + 1'000'000;
    shift += period;
  }
  const double seconds = static_cast<double>(ReplayPacer::MonotonicNs() - started) / 1e9;
  fmt::print(stderr,
             "waitpath-replay: host {}: {} events in {} round(s), {:.3f} s ({:.0f} events/s){}\n",
             host->hostname, totals.events, totals.rounds, seconds,
             seconds > 0 ? static_cast<double>(totals.events) / seconds : 0.0,
             g_stop.load() ? ", stopped by signal" : "");
  return 0;
}

}  // namespace
}  // namespace waitpath

int main(int argc, char** argv) {
  CLI::App app{
      "waitpath-replay: re-emit one host's recorded kernel trace as lttng-ust events "
      "(waitpath_replay:event), paced in real time"};
  std::string trace, host;
  double speed = 1.0;
  bool asap = false, forever = false, list_hosts = false, verbose = false;
  int64_t loops = 1, start_delay_ms = 0, period_ns = 0;
  app.add_option("--start-delay-ms", start_delay_ms,
                 "wait this long before the first event (lets live viewers attach)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("TRACE_DIR", trace, "recorded trace (a CTF trace or a directory of traces)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--speed", speed, "replay X times faster than recorded (default 1)")
      ->check(CLI::PositiveNumber);
  auto* asap_flag = app.add_flag("--asap", asap, "emit as fast as possible, ignoring timestamps");
  auto* loop_opt = app.add_option("--loop", loops, "replay N times, later rounds shifted in time")
                       ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  auto* forever_flag = app.add_flag("--forever", forever, "replay until interrupted");
  loop_opt->excludes(forever_flag);
  asap_flag->excludes(app.get_option("--speed"));
  app.add_option("--period-ns", period_ns,
                 "shift between rounds in this host's clock (default: the trace's span + 1 ms); "
                 "hosts replayed together need the same true period, each in its own clock")
      ->check(CLI::PositiveNumber);
  app.add_option("--host", host, "the host to replay when TRACE_DIR holds several");
  app.add_flag("--list-hosts", list_hosts, "print the hosts found in TRACE_DIR and exit");
  app.add_flag("--verbose", verbose, "babeltrace2 warnings and full error chains");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "waitpath-replay: {} (see waitpath-replay --help)\n", e.what());
    return 2;
  }
  return waitpath::Run(trace, host, speed, asap, forever ? 0 : loops, list_hosts, verbose,
                       start_delay_ms, period_ns);
}
