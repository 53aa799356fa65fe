// Cuts a recorded CTF trace to a time window: the trace's metadata file as it is and, of each
// stream file, the packets whose [timestamp_begin, timestamp_end] overlaps the window, end to
// end under the same file name. Packets are copied whole, never rewritten, so the copy is the
// tracer's own data and babeltrace2 and Trace Compass open it as they open the original (a
// stream starting at a later packet is a stream that started later; its packet_seq_num says
// which packets came before). A capture of a slow wait is made of these (docs/capture.md).
#pragma once

#include <cstdint>
#include <string>

namespace waitpath {

struct CtfCut {
  uint64_t packets = 0;      // copied
  uint64_t bytes = 0;        // copied, metadata included
  uint64_t streams = 0;      // stream files written (those with a packet in the window)
  std::string error;         // non-empty: nothing usable was written (one line, names the file)
  bool overwritten = false;  // the error: the window's start is gone (rotated files overwritten)
};

// Copies the part of the trace in `dir` (a directory holding `metadata`) that overlaps
// [from_ns, to_ns] (ns of the trace's own clock, as babeltrace2 gives them) into `out`, which
// is created. Damaged packets are left out (ctf/trace_check.h); a trace with no packet in the
// window is an error, and so is one that no longer holds the window's start (a stream whose
// oldest stored packet, not its first, begins after it).
CtfCut CutTrace(const std::string& dir, int64_t from_ns, int64_t to_ns, const std::string& out);

}  // namespace waitpath
