// The UST replay format: what `waitpath-replay` writes and the decoder reads back. A replayed
// event is one `waitpath_replay:event` record carrying an already decoded Event (docs/replay.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "model/event.h"

namespace waitpath {

inline constexpr std::string_view kReplayEventName = "waitpath_replay:event";

// Bumped on any change of field meaning, including the EventKind numbering, which is part of
// the format: `kind` holds the EventKind value as of version 1.
// Version 2: a span begin's `c` is its operation name (c_str), and its trace and parent ids
// travel in has_span_ids/trace_hi/trace_lo/parent_span. Every other kind reads as in version 1,
// so a reader still takes version-1 records (whose span names and ids are lost).
inline constexpr uint8_t kReplayFormatVersion = 2;
inline constexpr uint8_t kReplayFormatOldestVersion = 1;

// Which of Event::c and Event::d are interned strings (names) rather than integers, per kind
// (as of kReplayFormatVersion).
// The record carries those as `c_str`/`d_str` text, with `c`/`d` set to -1 when the original
// had no string and 0 when it had one.
inline constexpr bool ReplayCIsString(EventKind kind) {
  switch (kind) {
    case EventKind::kSchedSwitch:
    case EventKind::kSchedWaking:
    case EventKind::kSchedWakeup:
    case EventKind::kSchedTtwu:
    case EventKind::kSchedWakeupNew:
    case EventKind::kProcessFork:
    case EventKind::kIrqEntry:
    case EventKind::kStatedumpProcess:
    case EventKind::kCgroup:
    case EventKind::kSpanBegin:
      return true;
    default:
      return false;
  }
}

inline constexpr bool ReplayDIsString(EventKind kind) {
  return kind == EventKind::kSchedSwitch;
}

}  // namespace waitpath
