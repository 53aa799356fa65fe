// `waitpath live` and `waitpath tail`: one reader thread per live session (discovered on the
// relayd and picked up while running), the engine on this thread, until stopped.
#include "app/live_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>

#include "app/analysis.h"
#include "app/command.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "app/live_sessions.h"
#include "app/report_flags.h"
#include "base/duration.h"
#include "base/output.h"
#include "base/stop_signal.h"
#include "exporters/labeled_collectable.h"
#include "exporters/metrics_server.h"
#include "exporters/terminal_screen.h"
#include "fleet/nats_bus.h"
#include "fleet/shard_peers.h"
#include "readers/bt_util.h"
#include "stream/pipeline.h"

namespace waitpath {
namespace {

namespace fs = std::filesystem;

// What the terminal view says it reads, and which filters it applies.
std::string FiltersText(const LiveOptions& options) {
  std::string f;
  if (!options.min_wait.empty()) f += "min-wait " + options.min_wait;
  if (!options.states.empty())
    f += (f.empty() ? "" : ", ") + std::string("state ") + options.states;
  return f;
}

// The summary the terminal view leaves behind (at Ctrl-C, q, or the end of recorded traces).
void PrintSummary(const TriageView& view, ScreenStatus status) {
  status.final = true;
  int width, height;
  TerminalScreen::Size(&width, &height);
  std::string text;
  for (const std::string& line : RenderTriage(view, status, width, 0)) text += line + "\n";
  std::cout << text << std::flush;
}

// Recorded traces (`tail TRACE...`): the offline pipeline, waits printed as they resolve (or,
// in a terminal, the view's summary at the end).
int TailTraces(const LiveOptions& options, AnalysisPlan plan, ScreenStatus status) {
  std::vector<HostSpec> hosts;
  std::string error;
  const int found = FindHosts(options.traces, DiscoverOptions{}, &hosts);
  if (hosts.empty()) return found;
  plan.hosts = HostNames(hosts);
  Analysis analysis(std::move(plan));
  PipelineOptions pipeline;
  pipeline.reader.verbose = options.verbose;
  pipeline.policy = options.sync_passes == 2 ? SyncPolicy::kPrePass : SyncPolicy::kOnePass;
  pipeline.reader.decoder = DecoderChoice(options.decoder);
  std::vector<HostStats> stats;
  if (!AnalyseTraces(hosts, pipeline, analysis.feed(), &stats, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  analysis.Finish();
  ReportNothingWatched(analysis.accounting(), options.watch);
  if (const TriageView* view = analysis.view()) {
    status.source =
        fmt::format("{} host{} from recorded traces", hosts.size(), hosts.size() == 1 ? "" : "s");
    for (const HostStats& s : stats) {
      HostHealth h;
      h.name = s.host;
      h.lost = s.reader.discarded;
      h.gaps = s.reader.gaps + s.reader.damaged;
      h.state = s.error.empty() ? "read" : s.error;
      status.hosts.push_back(std::move(h));
    }
    PrintSummary(*view, status);
  }
  return std::max(found, ReportHostErrors(stats));
}

// A shard of a fleet: the bus, and the engine's peers over it (docs/scale.md). The peers go
// first: the bus's callbacks use them until it is closed.
struct Fleet {
  std::unique_ptr<NatsBus> bus;
  std::unique_ptr<ShardPeers> peers;
};

bool JoinFleet(const LiveOptions& options, Analysis& analysis, Fleet* fleet, std::string* error) {
  BusOptions bus_options;
  bus_options.urls = options.bus;
  bus_options.replicas = options.bus_replicas;
  bus_options.catch_up_ns = options.max_lag_ns;  // how far behind a shard may read
  fleet->bus = NatsBus::Connect(bus_options, error);
  if (!fleet->bus) return false;
  ShardOptions shard_options;
  shard_options.name = options.shard;
  shard_options.own = options.own;
  shard_options.wait_ms = options.edge_wait_ms;
  shard_options.stall_ms = options.stall_ms;
  if (options.max_lag_ns > 0) shard_options.max_lag_ns = options.max_lag_ns;
  WatchedAccounting& accounting = analysis.accounting();
  fleet->peers = std::make_unique<ShardPeers>(
      shard_options, *fleet->bus, analysis.engine(), accounting.hosts(),
      [&accounting](uint16_t id, const std::string& name) { accounting.SetRemoteHost(id, name); });
  analysis.engine().SetRemotePeers(fleet->peers.get());
  Say("waitpath: shard {}: hosts matching {}, bus {}\n", options.shard, options.own, options.bus);
  return true;
}

// /metrics: every family, and on a shard each with shard="NAME" and the shard's own families
// (docs/scale.md, "Metrics"). Null when it cannot listen (said).
std::unique_ptr<MetricsServer> ServeMetrics(const std::string& listen, MetricsExporter& metrics,
                                            const Fleet& fleet, const std::string& shard) {
  std::shared_ptr<prometheus::Collectable> served = metrics.collectable();
  if (fleet.peers) {
    served = std::make_shared<LabeledCollectable>(
        std::vector<LabeledCollectable::Source>{
            [inner = metrics.collectable()] { return inner->Collect(); },
            [s = fleet.peers.get()] { return s->Families(); }},
        std::vector<prometheus::ClientMetric::Label>{{"shard", shard}});
  }
  return MetricsServer::StartAnnounced(listen, served);
}

// Finds sessions every second and analyses what they send until stopped (`stopping`), until
// nobody reads the output any more (`| head`), or `q` in the terminal view (`terminal`, when
// there is one: drawn each second).
void Follow(LiveSessions& sessions, Fleet& fleet, TerminalScreen* terminal, const TriageView* view,
            ScreenStatus* status, const std::atomic<bool>& stopping) {
  auto next_discovery = std::chrono::steady_clock::now();
  auto next_draw = next_discovery;
  while (!stopping.load() && !StdoutClosed()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_discovery) {
      sessions.Discover();
      next_discovery = now + std::chrono::seconds(1);
    }
    // A shard answers the others' queries between batches: it pumps in shorter slices.
    sessions.Pump(fleet.peers ? 10000 : 100000);
    if (fleet.peers) fleet.peers->Poll();
    if (terminal) {
      if (terminal->Poll()) break;
      if (std::chrono::steady_clock::now() >= next_draw) {
        status->hosts = sessions.Health();
        terminal->Draw(*view, *status);
        next_draw = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      }
    }
  }
}

// On a relayd: the sessions followed until stopped, then what they showed.
int FollowRelayd(const LiveOptions& options, AnalysisPlan plan, ScreenStatus status,
                 const std::atomic<bool>& stopping) {
  // Without --capture-traces, captures are cut from the packets the readers keep, written to a
  // scratch directory first (removed at the end).
  LiveSessions* ring_sessions = nullptr;
  const std::string ring_scratch =
      (fs::temp_directory_path() / fmt::format("waitpath-ring-{}", getpid())).string();
  if (plan.capture) {
    plan.capture->locate = RelaydOutputLocator(options.capture.traces);
    if (options.capture.traces.empty()) {
      plan.capture->locate = [&](const std::string& host) {
        return ring_sessions ? ring_sessions->RingTraces(host, ring_scratch + "/" + host)
                             : std::vector<std::string>{};
      };
    }
    plan.capture->finish =
        CaptureTimelineWriter(options.watch, "", plan.capture->options.min_wait_ns);
  }
  Analysis analysis(std::move(plan));
  Fleet fleet;
  std::string error;
  if (!options.shard.empty() && !JoinFleet(options, analysis, &fleet, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  std::unique_ptr<MetricsServer> server;
  if (analysis.metrics()) {
    server = ServeMetrics(options.metrics, *analysis.metrics(), fleet, options.shard);
    if (!server) return 1;
  }
  status.source = "relayd " + options.relayd;
  TriageView* view = analysis.view();
  {
    LiveSessions sessions(options, analysis, fleet.peers.get());
    ring_sessions = &sessions;
    std::optional<TerminalScreen> terminal;  // what is said meanwhile shows in the view
    if (view) terminal.emplace();
    Follow(sessions, fleet, terminal ? &*terminal : nullptr, view, &status, stopping);
    sessions.StopAll();
    if (fleet.peers) {
      fleet.peers->PublishProgress();  // the last of it: peers waiting on us need not wait more
      fleet.bus->Flush(2000);
      Say("waitpath: {}\n", fleet.peers->Summary());
      fleet.bus->Close();  // its callbacks use the shard, which goes first
    }
    if (view) status.hosts = sessions.Health();
    terminal.reset();  // back to the normal screen before anything else is printed
    ring_sessions = nullptr;
  }
  std::error_code ec;
  if (analysis.capture()) fs::remove_all(ring_scratch, ec);
  analysis.Finish();
  ReportNothingWatched(analysis.accounting(), options.watch);
  if (view && !StdoutClosed()) PrintSummary(*view, status);
  return StdoutClosed() ? kExitOutputClosed : 0;
}

}  // namespace

bool PlanLive(const LiveOptions& options, bool screen, AnalysisPlan* plan, int64_t* max_lag_ns,
              std::string* error) {
  AnalysisOptions report;
  report.json = options.json;
  report.time_format = options.time_format;
  report.task_records = !options.tail;
  // tail shows every wait unless told otherwise; live only with --min-wait.
  report.min_wait_ns = options.tail ? 0 : -1;
  if (!ParseReportFlags(options.watch, options.min_wait, options.retention, &plan->watch, &report,
                        &plan->engine, error) ||
      (!options.states.empty() && !ParseStateList(options.states, &report.states, error)) ||
      !ParseDurationFlag("--max-lag", options.max_lag, max_lag_ns, error))
    return false;
  CaptureOptions capture;
  if (!ParseCaptureFlags(options.capture, options.traces.empty(), &capture, error)) return false;
  if (!options.capture.dir.empty() && options.capture.traces.empty() &&
      DecoderChoice(options.decoder) == TraceDecoderChoice::kBabeltrace2) {
    *error =
        "--capture-dir with --decoder babeltrace2 needs --capture-traces DIR (the relayd's output "
        "directory): babeltrace2 hands out events, not the packets captures are cut from";
    return false;
  }
  // Spans (docs/requests.md): tail writes a record per span (--min-span, --operation filter
  // them); live as analyze does: JSON records, the per-operation summary when stopped.
  SpanReportOptions& spans = plan->spans.emplace();
  spans.json = options.json;
  spans.records = options.tail || options.json;
  spans.summary = !options.tail;
  spans.time_format = options.time_format;
  if (!ParseSpanFlags(options.min_span, options.operation, &spans, error)) return false;
  if (screen) {
    // Span records would tear the screen: the view leaves them to --plain and --json (the
    // per-operation summary still follows the view's summary at the end).
    spans.records = false;
    TriageOptions& view = plan->view.emplace();
    view.min_wait_ns = std::max<int64_t>(0, report.min_wait_ns);
    view.states = report.states;
  } else {
    plan->report = report;
  }
  // Metrics and captures are of a relayd's sessions (flags of `live` only).
  if (options.traces.empty()) {
    plan->live = true;
    if (!capture.dir.empty()) plan->capture.emplace().options = capture;
    if (!options.metrics.empty())
      plan->metrics = MetricsOptions{options.max_processes, options.label_by == "cgroup"};
  }
  return true;
}

int RunLive(const LiveOptions& options, std::atomic<bool>* stop) {
  ConfigureBabeltraceLogging(options.verbose);
  std::atomic<bool>* stopping = stop;
  if (!stopping) {
    InstallStopSignal();
    stopping = &StopRequested();
  }
  // A person at a terminal gets the full-screen view; pipes, files and --plain get lines.
  const bool screen = !options.json && !options.plain && TerminalScreen::Usable();
  LiveOptions parsed = options;
  AnalysisPlan plan;
  std::string error;
  if (!PlanLive(options, screen, &plan, &parsed.max_lag_ns, &error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  ScreenStatus status;
  status.filters = FiltersText(options);
  status.time_format = options.time_format;
  if (!options.traces.empty()) return TailTraces(parsed, std::move(plan), std::move(status));
  return FollowRelayd(parsed, std::move(plan), std::move(status), *stopping);
}

namespace {

void AddCommonFlags(CLI::App* cmd, LiveOptions* o) {
  cmd->add_option("--watch", o->watch,
                  "Tasks to report: key=value[,key=value] (comm, comm!, tid, pid, host); repeat "
                  "to OR")
      ->allow_extra_args(false);
  cmd->add_option("--min-wait", o->min_wait, "Report each wait at least this long (e.g. 5ms)")
      ->check(DurationCheck(false));
  cmd->add_flag("--json", o->json, "JSON Lines");
  cmd->add_flag("--plain", o->plain,
                "One line per wait even in a terminal (default there: a full-screen view)");
  AddStateOption(cmd, &o->states);
  AddSpanFlags(cmd, &o->min_span, &o->operation);
  cmd->add_option("--retention", o->retention,
                  "History kept behind the newest event: the part of a wait reaching further "
                  "back reads `unknown` (docs/analyze.md, Memory)")
      ->capture_default_str()
      ->check(DurationCheck(true));
  cmd->add_option(
         "--max-lag", o->max_lag,
         "Live: a host further behind the others is not waited for (its older events are lost)")
      ->capture_default_str()
      ->check(DurationCheck(false));
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  AddClockFlags(cmd, &o->time_format);
}

}  // namespace

Command AddLiveCommand(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  CLI::App* cmd = app.add_subcommand(
      "live", "Attach to an LTTng relay daemon and analyse its sessions until stopped");
  cmd->add_option("--relayd", o->relayd, "net://HOST[:PORT] of the relay daemon")
      ->capture_default_str()
      ->check(RelaydUrlCheck());
  cmd->add_option("--session", o->sessions, "A session to follow (repeat); see --all");
  cmd->add_flag("--all", o->all, "Follow every session, including ones that start later");
  cmd->add_flag("--tail", o->tail,
                "Print each wait as it resolves instead of task records at the end");
  cmd->add_option("--metrics", o->metrics,
                  "Serve Prometheus metrics on ADDR:PORT (e.g. 127.0.0.1:9464)")
      ->check(ListenAddressCheck());
  cmd->add_option("--max-processes", o->max_processes, "Process label values per metric family")
      ->capture_default_str()
      ->check(IntegerRange(1, 100'000));
  cmd->add_option("--label-by", o->label_by,
                  "Label the active-path metrics by `process` (name) or by `cgroup` (kmod/)")
      ->check(CLI::IsMember({"process", "cgroup"}))
      ->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run as this shard of a fleet: follow only the hosts of --own, exchange network "
                  "waits with the other shards over --bus (docs/scale.md)");
  cmd->add_option("--bus", o->bus, "nats://HOST:PORT[,nats://HOST:PORT...] of the NATS servers");
  cmd->add_option("--own", o->own, "A regular expression over host names: the hosts of this shard");
  cmd->add_option("--bus-replicas", o->bus_replicas,
                  "Replicas of the JetStream stream when this shard creates it (3 on a cluster)")
      ->capture_default_str()
      ->check(IntegerRange(1, 5));
  cmd->add_option("--edge-wait-ms", o->edge_wait_ms,
                  "How long a wait for the sender's summary lasts, and a receive from an address "
                  "no shard has claimed waits on a shard not yet synchronized (docs/scale.md)")
      ->capture_default_str()
      ->check(IntegerRange(0, 60'000));
  cmd->add_option("--attach", o->attach,
                  "Where a session is followed from: its `live` position, or its `beginning` "
                  "(what the relayd kept: a shard started after its peers loses nothing; read "
                  "natively only)")
      ->check(CLI::IsMember({"live", "beginning"}))
      ->capture_default_str();
  cmd->add_option("--stall-ms", o->stall_ms,
                  "A shard whose progress does not advance this long while a receive waits for it "
                  "is stalled: such receives are unknown, counted (docs/scale.md, \"Progress\")")
      ->capture_default_str()
      ->check(IntegerRange(100, 600'000));
  AddCommonFlags(cmd, o.get());
  AddDecoderOption(cmd, &o->decoder);
  AddCaptureFlags(cmd, &o->capture, true);
  return Command{cmd, [o] {
                   if (!o->all && o->sessions.empty()) {
                     Say("waitpath: live: give --session NAME or --all\n");
                     return 2;
                   }
                   if (!o->shard.empty() && (o->bus.empty() || o->own.empty())) {
                     Say("waitpath: live: --shard needs --bus and --own\n");
                     return 2;
                   }
                   if (!o->shard.empty()) {
                     try {
                       std::regex check(o->own);
                     } catch (const std::regex_error& e) {
                       Say("waitpath: live: --own {}: {}\n", o->own, e.what());
                       return 2;
                     }
                   }
                   return RunLive(*o, nullptr);
                 }};
}

Command AddTailCommand(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  o->tail = true;
  o->all = true;
  CLI::App* cmd = app.add_subcommand(
      "tail",
      "Follow the waits of watched tasks as they resolve, live or over recorded traces: in a "
      "terminal a full-screen view (slowest recent waits, processes by state, hosts), else (or "
      "--plain) one line per wait");
  cmd->add_option("--relayd", o->relayd,
                  "net://HOST[:PORT]: follow its sessions (default when no TRACE)")
      ->capture_default_str()
      ->check(RelaydUrlCheck());
  cmd->add_option("--session", o->sessions, "Only these sessions (default: all)");
  AddCommonFlags(cmd, o.get());
  AddDecoderOption(cmd, &o->decoder);
  cmd->add_option("TRACE", o->traces, "Recorded traces instead of a relayd");
  cmd->add_option("--sync-passes", o->sync_passes,
                  "TRACE of several hosts: 1 reads them once, the clock sync improving as it "
                  "reads; 2 synchronizes from a whole first pass (docs/sync.md)")
      ->capture_default_str()
      ->check(IntegerRange(1, 2));
  return Command{cmd, [o] {
                   if (!o->sessions.empty()) o->all = false;
                   return RunLive(*o, nullptr);
                 }};
}

}  // namespace waitpath
