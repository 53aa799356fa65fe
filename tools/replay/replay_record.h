/* The integer fields of one waitpath_replay:event record (plain C: the tracepoint probe is C).
 * Meanings are those of model/event_views.h and docs/replay.md. */
#ifndef WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H
#define WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H

#include <stdint.h>

struct waitpath_replay_record {
  int64_t orig_ts; /* ns since the epoch, the original (possibly --loop shifted) timestamp */
  int64_t x;
  /* Span begins (format 2): the W3C/Jaeger trace id as two big-endian halves and the parent's
   * span id; has_span_ids says the original carried them (SpanIds). */
  uint64_t trace_hi, trace_lo, parent_span;
  int32_t cur_tid, cur_pid, a, b, c, d;
  uint32_t dialect; /* the original host's DialectFlags */
  uint32_t saddr, daddr, seq, ack_seq;
  uint16_t cpu, sport, dport, tcp_flags, ip_len;
  uint8_t format_version, kind, ctx, has_key, has_addresses, has_span_ids;
};

#endif /* WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H */
