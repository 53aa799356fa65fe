// Reads one live session natively, without babeltrace2: the relayd's viewer protocol
// (relayd/relayd_viewer.h) gives each trace's metadata text and each stream's packets, and the
// native decoder (NativeReader over in-memory StreamCursors) merges and decodes them into the
// host's batches as it does stream files, so nothing downstream knows which decoder ran.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "readers/host_input.h"
#include "readers/packet_ring.h"

namespace waitpath {

// The parts of a live session URL, net://HOST[:PORT]/host/HOSTNAME/SESSION (the live port is
// 5344 when not given).
struct LiveSessionUrl {
  std::string relayd;  // HOST
  uint16_t port = 5344;
  std::string hostname;
  std::string session;
};
bool ParseLiveSessionUrl(const std::string& url, LiveSessionUrl* out);

struct LiveAttempt {
  bool ended = false;        // the session ended and everything it sent was read
  bool refused = false;      // retrying would not help (another viewer; metadata not supported)
  bool unsupported = false;  // the metadata is beyond the native decoder; nothing was emitted
  bool ctf2 = false;         // and it is CTF 2 (JSON): only babeltrace2 2.1+ could read it
  std::string error;         // why it stopped otherwise (the relayd lost)
};

struct LiveReadOptions {
  // A reattach (after the relayd was lost): a session not (yet) listed is waited for, as
  // babeltrace2's `session-not-found-action=continue`; else it means the session is over.
  bool reattach = false;
  // Attach at the session's beginning (seek "beginning"), not at its live position.
  bool from_beginning = false;
  // The metadata may be refused as unsupported (nothing read yet; babeltrace2 reads instead).
  bool may_fall_back = false;
  // Called once attached (the link to the relayd is up again).
  std::function<void()> on_attached;
  // How long to wait when the relayd has nothing new: from the first, doubling up to the
  // second while nothing comes. The relayd's live timer (200 ms to 1 s) paces the data; a short
  // first wait picks up the rest of a flush quickly, the longer ones keep idle polling cheap.
  std::chrono::milliseconds min_idle_sleep{1};
  std::chrono::milliseconds max_idle_sleep{16};
  // Where the packets go once read, with the metadata (captures cut from them); none: dropped.
  PacketRing* ring = nullptr;
  // Packets of a trace whose metadata has not come wait for it, up to this many bytes per
  // trace; a relayd sending more refuses the session (one line) rather than running memory out.
  uint64_t max_unreadable_bytes = 256ull << 20;
};

// One attempt: connects, attaches to the session (every session of that host and name, as
// babeltrace2 does; seek "last": from the live position), reads until it ends, the relayd is
// lost, or `stop`. `input` is what goes on from attempt to attempt.
LiveAttempt ReadLiveSession(HostInput& input, const std::string& url,
                            const LiveReadOptions& options, const std::atomic<bool>& stop);

}  // namespace waitpath
