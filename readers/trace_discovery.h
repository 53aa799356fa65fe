// Finds the CTF traces under command-line paths and groups them into hosts.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ctf/trace_check.h"

namespace waitpath {

// What a trace's CTF environment says about where it came from.
struct TraceEnv {
  std::string hostname;     // "hostname" (LTTng) or "host" (perf); empty if absent
  std::string domain;       // "kernel", "ust", ...
  std::string tracer_name;  // "lttng-modules", "perf", ...
  int tracer_major = -1, tracer_minor = -1;
  bool ctf2 = false;  // CTF 2 metadata (JSON; LTTng 2.15+'s default), else CTF 1.8 (TSDL)
  // LTTng's session and its creation time ("wl-rpc@20261123T100029+0000"): traces of one
  // recording (a session's per-user UST traces) share it. Empty when the tracer says neither.
  std::string recording;

  // "CTF 2, lttng-ust 2.16", "CTF 1.8, lttng-modules 2.13", "CTF 1.8": what `stats` says.
  std::string FormatLine() const;
};

// One host: every trace directory whose environment names it.
struct HostSpec {
  std::string hostname;
  std::vector<std::string> trace_dirs;
  std::vector<TraceEnv> envs;  // parallel to trace_dirs
  // Live instead: net://RELAYD/host/HOSTNAME/SESSION, read with src.ctf.lttng-live.
  std::string live_url;
  // What babeltrace2 reads, parallel to trace_dirs: the directory itself, or a cleaned view of
  // it without its damaged packets (ctf/trace_check.h).
  std::vector<std::string> read_dirs;
  // The holes the damage skipped leaves on the host's CPUs (loss markers at their times).
  std::vector<StreamLoss> losses;
  std::vector<StreamPackets> streams;  // of every trace, where packets were checked
};

// Env strings longer than this are cut (a host name is a label in messages and metrics).
inline constexpr size_t kMaxEnvString = 255;

// Parses the env { ... } block of CTF 1.8 metadata text (any size; values out of range read as
// absent).
TraceEnv ParseTraceEnv(const std::string& metadata_text);

struct DiscoverOptions {
  // Hosts are named by the command-line directory they were found under instead of by the
  // hostname in their metadata (two machines with one hostname).
  bool host_from_dir = false;
  // Two recordings of one hostname and domain found (a machine traced twice, or two machines
  // with one name; e.g. a directory of unrelated traces): read as one host. False: refused,
  // naming both and these two ways out.
  bool merge_recordings = false;
  // One line per warning (damage skipped, copies of one trace, hostnames shared); default:
  // "waitpath: warning: ..." on stderr.
  std::function<void(const std::string&)> warn;
};

// What DiscoverHosts found: true when there are hosts to read. `refused`: a directory given
// holds two recordings of one hostname and domain and neither `merge_recordings` nor
// `host_from_dir` was asked; the command line can
// fix it (the commands exit 2, as for a bad flag). `unread`: with hosts found, the paths and
// traces that could not be read (missing, not a trace, refused by the check), one line each:
// the rest is read and reported, and the command says these and exits 1 (README, "Exit
// status").
struct Discovery {
  bool found = false;
  bool refused = false;
  std::vector<std::string> unread;
  explicit operator bool() const { return found; }
};

// Expands each path (a trace directory, or a directory holding several traces such as an
// LTTng session output) and groups the traces by hostname, in order of first appearance.
// Every trace is checked first (ctf/trace_check.h): a trace babeltrace2 must not see is
// refused, a damaged one is read through its cleaned view.
// A path or trace that cannot be read is named in `unread` and the others are read; returns
// false with a one-line `error` naming them when nothing usable is found.
Discovery DiscoverHosts(const std::vector<std::string>& paths, std::vector<HostSpec>* hosts,
                        std::string* error, const DiscoverOptions& options = {});

// The hosts' names, in order.
std::vector<std::string> HostNames(const std::vector<HostSpec>& hosts);

}  // namespace waitpath
