// What a reader thread hands downstream: decoded events in per-host time order.
#pragma once

#include <concurrentqueue/concurrentqueue.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/event.h"

namespace waitpath {

// Cumulative reader-side figures for one host (what never reaches the engine as events).
struct ReaderCounters {
  uint64_t events = 0;       // event messages read, of every class
  uint64_t unknown = 0;      // of classes the analysis does not use (skipped)
  uint64_t regressions = 0;  // timestamps that went backwards and were clamped
  uint64_t discarded = 0;    // events the tracer reported as lost
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  uint32_t dialect = 0;  // DialectFlags
  uint32_t cpus = 0;     // distinct CPU ids seen in packet contexts
  uint32_t gaps = 0;     // live input breaks (relayd gone), each a loss on every CPU
  // Holes left by damaged packets skipped or a stream unreadable from some packet on, each a
  // loss on its CPU (ctf/trace_check.h, MergingSink).
  uint32_t damaged = 0;
  // A replayed host (model/replay_format.h): when its last replayed event was emitted, on the
  // UST clock (ns from the epoch); its events carry the original times, so this is what its
  // lag is measured by. 0 otherwise.
  int64_t emitted_ns = 0;
};

struct Batch {
  uint16_t host = 0;
  std::vector<Event> events;
  std::vector<PacketKey> packets;  // Event::a of packet events indexes this
  std::vector<SpanIds> spans;      // AsSpan(e).ids() of span begins indexes this
  ReaderCounters counters;         // as of the end of this batch
  // Every later event of this host has ts >= watermark (advanced by events and by
  // babeltrace2 inactivity messages in live mode).
  int64_t watermark = std::numeric_limits<int64_t>::min();
  // The trace's clock minus the event time, at the batch's last event: 0 when events are on
  // the trace's clock; a replayed host's events carry their original times while its packets
  // are on the UST clock (docs/replay.md). Captures cut packets by this (docs/capture.md).
  int64_t clock_offset_ns = 0;
  bool last = false;  // the host's input ended with this batch
  std::string error;  // on the last batch: why reading stopped early
};

// One queue per host: the reader thread enqueues, the consumer dequeues.
using BatchQueue = moodycamel::ConcurrentQueue<Batch*>;

}  // namespace waitpath
