// A wait's headline: the one line a person acts on, e.g.
//   2.804 ms  disk 55% on db/postgres (network 15%)
// the state that took most of the wait's active path, its share, the task the path was in
// while in that state, and the runner-up state when it is worth a look (docs/analyze.md,
// "Headlines"). The shares are of the *path*: "running 98% on db/postgres" for a client
// means postgres ran while the client waited for it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "incremental/active_path_resolver.h"
#include "incremental/engine.h"

namespace waitpath {

struct WaitHeadline {
  int64_t duration_ns = 0;
  Leaf leaf = Leaf::kUnknown;  // the largest state of the path
  int64_t leaf_ns = 0;
  Utid where = kNoTask;  // the task that holds most of `leaf` (kNoTask: the waiting task)
  Leaf second = Leaf::kUnknown;
  int64_t second_ns = 0;  // 0: no runner-up worth naming (under 10% of the wait)
  // The whole wait was a packet from a host that is not traced: nothing on the path says
  // why; a server thread awaiting its next request looks like this (docs/analyze.md).
  bool untraced_peer = false;
};

// A runner-up state is named from this share of the wait on.
inline constexpr double kHeadlineSecondShare = 0.10;

// Reads the headline off a resolved wait and its path (pieces tiling the wait).
WaitHeadline HeadlineOf(const ResolvedWait& wait, std::span<const PathSegment> path);

// Whether a wait's whole path is a packet whose sender is not traced.
bool IsUntracedPeerWait(const ResolvedWait& wait);

// "disk 55% on db/postgres (network 15%)": `who` names the task (host/comm), given the
// headline's `where` resolved to the waiting task when kNoTask.
std::string FormatHeadline(const WaitHeadline& h, std::string_view who);

// "2.804 ms", "1.250 s", "85 us": a duration as the terminal shows it.
std::string FormatWaitDuration(int64_t ns);

}  // namespace waitpath
