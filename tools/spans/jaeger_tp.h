/* A tracepoint provider with the event layout of jaeger-go-lttng-instr (jaeger_ust:start_span,
 * jaeger_ust:end_span), so that the example can check waitpath's compatibility with it on a
 * real LTTng-UST trace (docs/requests.md, "Jaeger"). Only the layout is shared: names, types and
 * order of the fields. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER jaeger_ust

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "jaeger_tp.h"

#if !defined(WAITPATH_TOOLS_SPANS_JAEGER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define WAITPATH_TOOLS_SPANS_JAEGER_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    jaeger_ust, start_span,
    LTTNG_UST_TP_ARGS(uint64_t, trace_hi, uint64_t, trace_lo, uint64_t, span_id, const char*,
                      op_name, int64_t, start_time),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, trace_id_high, trace_hi)
                            lttng_ust_field_integer(uint64_t, trace_id_low, trace_lo)
                                lttng_ust_field_integer(uint64_t, span_id, span_id)
                                    lttng_ust_field_string(op_name, op_name)
                                        lttng_ust_field_integer(int64_t, start_time, start_time)))

LTTNG_UST_TRACEPOINT_EVENT(
    jaeger_ust, end_span,
    LTTNG_UST_TP_ARGS(uint64_t, trace_hi, uint64_t, trace_lo, uint64_t, span_id, int64_t, duration),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, trace_id_high, trace_hi)
                            lttng_ust_field_integer(uint64_t, trace_id_low, trace_lo)
                                lttng_ust_field_integer(uint64_t, span_id, span_id)
                                    lttng_ust_field_integer(int64_t, duration, duration)))

#endif /* WAITPATH_TOOLS_SPANS_JAEGER_TP_H */

#include <lttng/tracepoint-event.h>
