/* The waitpath_replay:event tracepoint (lttng-ust 2.13 provider). Its fields are the replay
 * format read back by readers/event_decoder.cc; see model/replay_format.h and docs/replay.md.
 * Plain C so that the probe can be compiled as C: LTTNG_UST_TP_ARGS takes at most ten
 * arguments, so the integers travel in one struct. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER waitpath_replay

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tools/replay/replay_tp.h"

#if !defined(WAITPATH_TOOLS_REPLAY_REPLAY_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define WAITPATH_TOOLS_REPLAY_REPLAY_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "tools/replay/replay_record.h"

/* The field macros are a list, which clang-format would fold into a staircase. */
// clang-format off
LTTNG_UST_TRACEPOINT_EVENT(
    waitpath_replay, event,
    LTTNG_UST_TP_ARGS(const struct waitpath_replay_record*, r, const char*, c_str, const char*,
                      d_str, const char*, host),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint8_t, format_version, r->format_version)
        lttng_ust_field_integer(int64_t, orig_ts, r->orig_ts)
        lttng_ust_field_integer(uint16_t, cpu, r->cpu)
        lttng_ust_field_integer(uint8_t, kind, r->kind)
        lttng_ust_field_integer_hex(uint8_t, ctx, r->ctx)
        lttng_ust_field_integer(int32_t, cur_tid, r->cur_tid)
        lttng_ust_field_integer(int32_t, cur_pid, r->cur_pid)
        lttng_ust_field_integer(int32_t, a, r->a)
        lttng_ust_field_integer(int32_t, b, r->b)
        lttng_ust_field_integer(int32_t, c, r->c)
        lttng_ust_field_integer(int32_t, d, r->d)
        lttng_ust_field_string(c_str, c_str)
        lttng_ust_field_string(d_str, d_str)
        lttng_ust_field_integer(int64_t, x, r->x)
        lttng_ust_field_integer_hex(uint32_t, dialect, r->dialect)
        lttng_ust_field_integer(uint8_t, has_key, r->has_key)
        lttng_ust_field_integer(uint8_t, has_addresses, r->has_addresses)
        lttng_ust_field_integer_hex(uint32_t, saddr, r->saddr)
        lttng_ust_field_integer_hex(uint32_t, daddr, r->daddr)
        lttng_ust_field_integer(uint16_t, sport, r->sport)
        lttng_ust_field_integer(uint16_t, dport, r->dport)
        lttng_ust_field_integer(uint32_t, seq, r->seq)
        lttng_ust_field_integer(uint32_t, ack_seq, r->ack_seq)
        lttng_ust_field_integer_hex(uint16_t, tcp_flags, r->tcp_flags)
        lttng_ust_field_integer(uint16_t, ip_len, r->ip_len)
        lttng_ust_field_integer(uint8_t, has_span_ids, r->has_span_ids)
        lttng_ust_field_integer_hex(uint64_t, trace_hi, r->trace_hi)
        lttng_ust_field_integer_hex(uint64_t, trace_lo, r->trace_lo)
        lttng_ust_field_integer_hex(uint64_t, parent_span, r->parent_span)
        lttng_ust_field_string(host, host)
    )
)
// clang-format on

#endif /* WAITPATH_TOOLS_REPLAY_REPLAY_TP_H */

#include <lttng/tracepoint-event.h>
