// Turns a decoded Event (and its batch's packet key) into a waitpath_replay:event record.
#pragma once

#include <cstdint>

#include "model/batch.h"
#include "tools/replay/replay_record.h"

namespace waitpath {

// A record plus its string fields. The strings point into the process-wide StringTable (or at
// a literal), so they stay valid; they are NUL-terminated as the tracepoint needs.
struct ReplayRecord {
  waitpath_replay_record fields{};
  const char* c_str = "";
  const char* d_str = "";
};

// `shift` is added to every timestamp the event carries (--loop rounds). `dialect` is the
// original host's DialectFlags. `round` advances TCP sequence numbers (seq and ack_seq alike,
// by kRoundSeqStride per round): a send left unmatched in one round (a viewer that attached
// after its receive) must not match the same segment's receive one round later, which real
// TCP never repeats within the matchers' windows.
// Span ids advance likewise (span, parent and the trace id's low half, by kRoundSpanStride
// per round): a trace id names one request, and every round's requests are new ones; hosts
// replayed together run the same rounds, so a parent on another host stays the parent.
inline constexpr uint32_t kRoundSeqStride = 0x01000193;
inline constexpr uint64_t kRoundSpanStride = 0x0001000000000000ULL;
ReplayRecord BuildReplayRecord(const Event& e, const Batch& batch, uint32_t dialect, int64_t shift,
                               uint32_t round = 0);

}  // namespace waitpath
