/* The integer fields of one waitpath_replay:event record (plain C: the tracepoint probe is C).
 * Meanings are those of live/event_views.h and docs/replay.md. */
#ifndef WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H
#define WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H

#include <stdint.h>

struct waitpath_replay_record {
  int64_t orig_ts; /* ns since the epoch, the original (possibly --loop shifted) timestamp */
  int64_t x;
  int32_t cur_tid, cur_pid, a, b, c, d;
  uint32_t dialect; /* the original host's DialectFlags */
  uint32_t saddr, daddr, seq, ack_seq;
  uint16_t cpu, sport, dport, tcp_flags, ip_len;
  uint8_t format_version, kind, ctx, has_key, has_addresses;
};

#endif /* WAITPATH_TOOLS_REPLAY_REPLAY_RECORD_H */
