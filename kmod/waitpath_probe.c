// SPDX-License-Identifier: GPL-2.0-only
/*
 * The LTTng probes of waitpath_events.h (TRACE_SYSTEM waitpath): registered by
 * waitpath_main.c's module init rather than by a module_init of their own.
 */
#include <linux/module.h>
#include <lttng/tracer.h>

/* The kernel's own declaration: checks that our prototype matches the running kernel. */
#include <trace/events/cgroup.h>

#define LTTNG_PACKAGE_BUILD
#define CREATE_TRACE_POINTS
#define TP_MODULE_NOINIT
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE waitpath_events

#include "waitpath_events.h"

#include "waitpath.h"

int waitpath_probe_register(void)
{
	return lttng_kernel_probe_register(&__probe_desc___waitpath);
}

void waitpath_probe_unregister(void)
{
	lttng_kernel_probe_unregister(&__probe_desc___waitpath);
}
