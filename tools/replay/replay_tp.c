/* Instantiates the waitpath_replay tracepoint probes into waitpath-replay itself. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tools/replay/replay_tp.h"
