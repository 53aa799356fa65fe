/* Instantiates the example's two tracepoint providers in one translation unit (lttng-ust wants
 * LTTNG_UST_TRACEPOINT_DEFINE in exactly one): waitpath_span (what include/waitpath/span_tp.c
 * does for an application) and jaeger_ust. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "waitpath/span_tp.h"
#include "jaeger_tp.h"
