/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * waitpath's state-dump event (TRACE_SYSTEM waitpath_statedump): each task's cgroup (the
 * default, v2 hierarchy) when a session's LTTng state dump runs, next to its
 * lttng_statedump_process_state. Recorded only into the session whose state dump it is
 * (TP_SESSION_CHECK), like lttng-modules' own statedump events.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM waitpath_statedump

#if !defined(WAITPATH_STATEDUMP_H) || defined(TRACE_HEADER_MULTI_READ)
#define WAITPATH_STATEDUMP_H

#include <lttng/tracepoint-event.h>
#include <lttng/events.h>
#include <linux/sched.h>

LTTNG_TRACEPOINT_EVENT(waitpath_statedump_cgroup,
	TP_PROTO(struct lttng_kernel_session *session, struct task_struct *p, int hierarchy,
		const char *path),
	TP_ARGS(session, p, hierarchy, path),
	TP_FIELDS(
		ctf_integer(pid_t, tid, p->pid)
		ctf_integer(pid_t, pid, p->tgid)
		ctf_integer(int, hierarchy, hierarchy)
		ctf_string(path, path)
	)
)

#endif /* WAITPATH_STATEDUMP_H */

/* This part must be outside protection */
#include <lttng/define_trace.h>
