/* Instantiates the waitpath_span tracepoint probes: compile this file into the program that
 * includes waitpath/span.h. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "waitpath/span_tp.h"
