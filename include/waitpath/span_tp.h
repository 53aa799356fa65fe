/* The waitpath_span tracepoint provider (lttng-ust >= 2.13): application spans that waitpath
 * resolves into active paths (docs/requests.md). Include waitpath/span.h rather than this
 * file; compile waitpath/span_tp.c (or define LTTNG_UST_TRACEPOINT_CREATE_PROBES and
 * LTTNG_UST_TRACEPOINT_DEFINE before including this header in one C file) into the program.
 *
 * The 16-byte trace id travels as two big-endian halves, trace_id_high then trace_id_low, as in
 * jaeger_ust:start_span, so that both providers decode the same way. The thread is not a
 * field: record the vtid and vpid contexts (`lttng add-context -u -t vtid -t vpid`). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER waitpath_span

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "waitpath/span_tp.h"

#if !defined(WAITPATH_SPAN_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define WAITPATH_SPAN_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    waitpath_span, begin,
    LTTNG_UST_TP_ARGS(uint64_t, trace_hi, uint64_t, trace_lo, uint64_t, span_id, uint64_t,
                      parent_span_id, const char*, name),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, trace_id_high, trace_hi)
                            lttng_ust_field_integer_hex(uint64_t, trace_id_low, trace_lo)
                                lttng_ust_field_integer_hex(uint64_t, span_id, span_id)
                                    lttng_ust_field_integer_hex(uint64_t, parent_span_id,
                                                                parent_span_id)
                                        lttng_ust_field_string(name, name)))

LTTNG_UST_TRACEPOINT_EVENT(waitpath_span, end, LTTNG_UST_TP_ARGS(uint64_t, span_id),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, span_id,
                                                                           span_id)))

LTTNG_UST_TRACEPOINT_EVENT(waitpath_span, handoff, LTTNG_UST_TP_ARGS(uint64_t, span_id),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, span_id,
                                                                           span_id)))

#endif /* WAITPATH_SPAN_TP_H */

#include <lttng/tracepoint-event.h>
