// The flags of just-in-time capture (`--capture-dir DIR --capture-min-wait DUR`...; docs/
// capture.md), shared by `live` (traces cut from the relayd's output directory) and `analyze`
// (cut from the recorded traces given), and the timeline written into each capture.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "exporters/wait_capture.h"

namespace waitpath {

struct CaptureFlags {
  std::string dir;
  std::string min_wait;
  std::string min_request;
  std::string margin = "1s";
  size_t max_mb = 1024;
  uint32_t max_per_hour = 60;
  std::string traces;   // live: the relayd's output directory (lttng-relayd -o)
  size_t ring_mb = 64;  // live without `traces`: the recent packets kept per host
};

void AddCaptureFlags(CLI::App* cmd, CaptureFlags* flags, bool live);

// False with a one-line `error` on a bad or missing value.
bool ParseCaptureFlags(const CaptureFlags& flags, bool live, CaptureOptions* options,
                       std::string* error);

// The stored trace directories of each host under a relayd's output directory
// (DIR/HOSTNAME/SESSION-DATE/...): the traces of the newest session directory of that host.
TraceLocator RelaydOutputLocator(std::string root);

// Writes `capture.dir`/timeline.json: the capture analysed as `analyze --timeline --from --to`
// over its window, watching what `watch` selects, waits of at least `min_wait_ns` (the
// capture's threshold) highlighted; false with `error`.
bool WriteCaptureTimeline(const CaptureMade& capture, const std::vector<std::string>& watch,
                          const std::string& reference, int64_t min_wait_ns, std::string* error);
// A capture's finisher (WaitCapture::SetFinisher) that writes its timeline as above, and says
// on stderr when it cannot.
std::function<void(const CaptureMade&)> CaptureTimelineWriter(std::vector<std::string> watch,
                                                              std::string reference,
                                                              int64_t min_wait_ns);

}  // namespace waitpath
