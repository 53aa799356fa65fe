// The flags that ask for a timeline (`--timeline FILE`, `--from`, `--to`, `--timeline-max-mb`)
// read into the writer's options, and the file written at the end (docs/timeline.md).
#pragma once

#include <cstddef>
#include <string>

#include "exporters/timeline_writer.h"

namespace waitpath {

struct TimelineFlags {
  std::string file;      // --timeline: empty, none
  std::string from, to;  // nanoseconds since the epoch, or a duration from the first event
  size_t max_mb = 64;
};

// False, with a one-line `error` naming the flag, on a malformed bound or --to not after
// --from. `min_wait_ns` (< 0: none asked) decides which waits are drawn as reported: those
// at least that long, else those of at least 1 ms.
bool ParseTimelineFlags(const TimelineFlags& flags, int64_t min_wait_ns, TimelineOptions* options,
                        std::string* error);

// Writes the timeline to flags.file; false with a one-line `error` when it is too large or the
// file cannot be written (no partial file is left then).
bool WriteTimelineFile(TimelineWriter& writer, const std::string& file, std::string* error);

}  // namespace waitpath
