// `waitpath sync`: the clock transform of every host to the reference host.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "app/command.h"
#include "app/flag_checks.h"
#include "app/host_errors.h"
#include "base/output.h"
#include "exporters/clock_report.h"
#include "readers/bt_util.h"
#include "stream/pipeline.h"

namespace waitpath {
namespace {

struct SyncOptions {
  std::vector<std::string> traces;
  std::string reference;
  bool json = false;
  bool verbose = false;
  std::string decoder = "auto";  // --decoder: of recorded traces
  bool single_phase = false;
  std::string host_from = "hostname";  // or "dir": hosts named by their directory
  bool merge_recordings = false;       // two recordings of one hostname read as one host
};

int RunSync(const SyncOptions& o) {
  ConfigureBabeltraceLogging(o.verbose);
  std::vector<HostSpec> hosts;
  std::string error;
  DiscoverOptions discover;
  discover.host_from_dir = o.host_from == "dir";
  discover.merge_recordings = o.merge_recordings;
  const int found = FindHosts(o.traces, discover, &hosts);
  if (hosts.empty()) return found;
  PipelineOptions options;
  options.policy = SyncPolicy::kPrePass;  // its first pass alone
  options.reader.verbose = o.verbose;
  options.reader.decoder = DecoderChoice(o.decoder);
  options.reference = o.reference;
  options.two_phase = !o.single_phase;
  Pipeline pipeline(options, nullptr);
  for (const HostSpec& host : hosts) pipeline.AddSource(host);
  if (!pipeline.ReadAll(&error)) {
    Say("waitpath: {}\n", error);
    return 2;
  }
  ClockSync& sync = *pipeline.sync();
  for (const HostClock& c : sync.Clocks())
    std::cout << (o.json ? ClockJson(c) : ClockText(c)) << '\n';
  const SyncCounters& k = sync.counters();
  const uint64_t inversions = sync.CountInversions();
  if (o.json) {
    std::cout << fmt::format(
        "{{\"type\":\"sync\",\"sent\":{},\"received\":{},\"matched\":{},\"same_host\":{},"
        "\"expired\":{},"
        "\"peak_pending\":{},\"inversions\":{}}}\n",
        k.sends, k.receives, k.matched, k.same_host, k.expired, k.peak_pending, inversions);
  } else {
    std::cout << fmt::format(
        "packets: {} sent, {} received, {} matched across hosts, {} same-host, {} expired "
        "unmatched "
        "(at most {} waiting); {} received before sent after sync\n",
        k.sends, k.receives, k.matched, k.same_host, k.expired, k.peak_pending, inversions);
  }
  return std::max(found, ReportHostErrors(pipeline.stats()));
}

}  // namespace

Command AddSyncCommand(CLI::App& app) {
  auto o = std::make_shared<SyncOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sync", "Synchronize the hosts' clocks from the TCP packets they exchanged");
  cmd->add_flag("--json", o->json,
                "One JSON record per host: t_reference = slope * t_host + offset_ns");
  cmd->add_option("--reference", o->reference,
                  "The host whose clock is the reference (default: the first)");
  cmd->add_flag("--single-phase", o->single_phase,
                "Keep unmatched packets for the long bootstrap window all along (for comparison)")
      ->group("");  // hidden: a benchmark knob
  cmd->add_flag("-v,--verbose", o->verbose, "babeltrace2 warnings and full error chains");
  AddDecoderOption(cmd, &o->decoder);
  cmd->add_option("--host-from", o->host_from,
                  "Name hosts by the hostname in their traces, or by the directory given for "
                  "them (two machines with one hostname)")
      ->check(CLI::IsMember({"hostname", "dir"}))
      ->capture_default_str();
  cmd->add_flag("--merge-recordings", o->merge_recordings,
                "Read several recordings of one hostname (a machine traced twice, two machines "
                "with one name) as one host; refused otherwise");
  cmd->add_option("TRACE", o->traces, "Trace directories, one or more per host")->required();
  return Command{cmd, [o] { return RunSync(*o); }};
}

}  // namespace waitpath
