// SPDX-License-Identifier: GPL-2.0-only
/*
 * The LTTng probe of waitpath_statedump.h (TRACE_SYSTEM waitpath_statedump), with the
 * session check of state-dump events: a task's cgroup goes only into the session whose state
 * dump emitted it.
 */
#include <linux/module.h>
#include <lttng/tracer.h>

#define LTTNG_PACKAGE_BUILD
#define CREATE_TRACE_POINTS
#define TP_MODULE_NOINIT
#define TP_SESSION_CHECK
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE waitpath_statedump

#include "waitpath_statedump.h"

#include "waitpath.h"

int waitpath_statedump_probe_register(void)
{
	return lttng_kernel_probe_register(&__probe_desc___waitpath_statedump);
}

void waitpath_statedump_probe_unregister(void)
{
	lttng_kernel_probe_unregister(&__probe_desc___waitpath_statedump);
}
