// waitpath-relayd-dump: follows one live session of an lttng-relayd with the native viewer
// client (relayd/relayd_viewer.h) and writes it as a CTF trace directory, laid out as the
// relayd's own output, until the session ends (or Ctrl-C, or --idle-exit). What it writes,
// read by babeltrace2, is what the session recorded: tools/relayd_dump/test_relayd_dump.sh.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "base/stop_signal.h"
#include "relayd/ctf_directory_writer.h"
#include "relayd/relayd_viewer.h"

namespace {

using waitpath::RelaydError;
using waitpath::RelaydViewer;

struct Address {
  std::string host;
  uint16_t port = 5344;
};

// net://HOST[:PORT] (the live port; 5344 when omitted).
std::optional<Address> ParseUrl(const std::string& url) {
  const std::string scheme = "net://";
  if (url.rfind(scheme, 0) != 0) return std::nullopt;
  std::string rest = url.substr(scheme.size());
  if (rest.empty() || rest.find('/') != std::string::npos) return std::nullopt;
  Address a;
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(':') == colon) {
    try {
      const int port = std::stoi(rest.substr(colon + 1));
      if (port <= 0 || port > 65535) return std::nullopt;
      a.port = static_cast<uint16_t>(port);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    rest.resize(colon);
  }
  a.host = rest;
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Dump a live session of an lttng-relayd into a CTF trace directory"};
  std::string url, session, host, out, seek = "beginning";
  double wait_s = 30, idle_exit_s = 0;
  int timeout_ms = 10000;
  bool quiet = false, verbose = false;
  app.add_option("--relayd", url, "the relayd's live URL, net://HOST[:PORT] (port 5344)")
      ->required();
  app.add_option("--session", session, "the session's name")->required();
  app.add_option("--host", host, "the traced host's name, when several hosts share the name");
  bool discard = false;
  auto* out_opt = app.add_option("--out", out, "directory to write the trace into");
  app.add_flag("--discard", discard, "write nothing, only count (to time the client alone)")
      ->excludes(out_opt);
  app.add_option("--seek", seek, "beginning (all the session's data) or last (from now)")
      ->check(CLI::IsMember({"beginning", "last"}));
  app.add_option("--wait", wait_s, "seconds to wait for the session to appear (default 30)");
  app.add_option("--idle-exit", idle_exit_s, "stop after this many seconds with nothing new");
  app.add_option("--timeout-ms", timeout_ms, "bound on every request to the relayd (10000)");
  app.add_flag("--quiet", quiet, "no summary line");
  app.add_flag("--verbose", verbose, "a line per stream added or ended, and at attach");
  CLI11_PARSE(app, argc, argv);

  if (out.empty() && !discard) {
    fmt::print(stderr, "waitpath-relayd-dump: --out DIR or --discard is required\n");
    return 2;
  }
  const auto address = ParseUrl(url);
  if (!address) {
    fmt::print(stderr, "waitpath-relayd-dump: bad relayd URL '{}' (expected net://HOST[:PORT])\n",
               url);
    return 2;
  }
  waitpath::InstallStopSignal();
  using Clock = std::chrono::steady_clock;
  try {
    waitpath::RelaydLimits limits;
    limits.io_timeout = std::chrono::milliseconds(timeout_ms);
    RelaydViewer viewer(address->host, address->port, limits);
    // The session may not exist yet: list until it appears.
    std::optional<uint64_t> id;
    const auto give_up = Clock::now() + std::chrono::duration<double>(wait_s);
    while (!id && !waitpath::StopRequested()) {
      for (const auto& s : viewer.ListSessions()) {
        if (s.name == session && (host.empty() || s.hostname == host)) id = s.id;
      }
      if (id) break;
      if (Clock::now() >= give_up) {
        fmt::print(stderr, "waitpath-relayd-dump: relayd {} has no session '{}'{} after {} s\n",
                   viewer.peer(), session, host.empty() ? "" : " of host " + host, wait_s);
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!id) return 0;
    try {
      viewer.Attach(*id,
                    seek == "last" ? RelaydViewer::Seek::kLast : RelaydViewer::Seek::kBeginning);
    } catch (const RelaydError& e) {
      fmt::print(stderr, "waitpath-relayd-dump: cannot follow session '{}': {}\n", session,
                 e.what());
      return 1;
    }
    if (verbose) fmt::print(stderr, "attached to session '{}' (id {})\n", session, *id);
    waitpath::CtfDirectoryWriter writer(out);  // creates nothing until written to
    uint64_t beacons = 0, streams = 0, packets = 0, packet_bytes = 0, metadata_bytes = 0;
    auto last_news = Clock::now();
    while (!waitpath::StopRequested() && viewer.active_sessions() > 0) {
      auto event = viewer.Poll();
      if (!event) {
        if (idle_exit_s > 0 &&
            Clock::now() - last_news > std::chrono::duration<double>(idle_exit_s)) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      last_news = Clock::now();
      if (!discard) writer.Write(*event);
      if (const auto* m = std::get_if<waitpath::ViewerMetadata>(&*event)) {
        metadata_bytes += m->text.size();
      }
      if (const auto* p = std::get_if<waitpath::ViewerPacket>(&*event)) {
        ++packets;
        packet_bytes += p->bytes.size();
      }
      if (std::holds_alternative<waitpath::ViewerBeacon>(*event)) ++beacons;
      if (const auto* added = std::get_if<waitpath::ViewerStreamAdded>(&*event)) {
        ++streams;
        if (verbose) {
          fmt::print(stderr, "stream added: {} {}/{}\n", added->stream.id, added->stream.path,
                     added->stream.channel);
        }
      }
      if (const auto* ended = std::get_if<waitpath::ViewerStreamEnded>(&*event); ended && verbose) {
        fmt::print(stderr, "stream ended: {}\n", ended->stream_id);
      }
      if (std::holds_alternative<waitpath::ViewerSessionEnded>(*event) && verbose) {
        fmt::print(stderr, "session ended\n");
      }
    }
    writer.Flush();
    // Stopped before the session ended: leave it, so that another viewer may attach at once.
    if (viewer.active_sessions() > 0) viewer.Detach(*id);
    if (!quiet) {
      fmt::print(stderr,
                 "waitpath-relayd-dump: session '{}': {} streams, {} packets ({} bytes), {} bytes "
                 "of metadata, {} beacons{}\n",
                 session, streams, packets, packet_bytes, metadata_bytes, beacons,
                 viewer.active_sessions() == 0 ? ", session ended" : "");
    }
    return 0;
  } catch (const RelaydError& e) {
    fmt::print(stderr, "waitpath-relayd-dump: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "waitpath-relayd-dump: {}\n", e.what());
    return 1;
  }
}
