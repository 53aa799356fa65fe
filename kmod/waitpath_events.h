/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * waitpath's LTTng events (TRACE_SYSTEM waitpath), in lttng-modules' instrumentation style.
 *
 * waitpath_tcp_send / waitpath_tcp_recv: our own tracepoints, fired by netfilter hooks at
 *   NF_INET_LOCAL_OUT / NF_INET_LOCAL_IN (IPv4, TCP only, every network namespace): the
 *   socket-level packet, before any encapsulation on the way out and after decapsulation on
 *   the way in. Fields as in lttng-modules' net_dev_queue (network_header.ipv4/tcp), so that
 *   a packet keys the same whichever of the two a host records.
 * waitpath_cgroup_attach: the kernel's stock cgroup:cgroup_attach_task tracepoint (a task or
 *   a whole thread group moved to a cgroup), which lttng-modules 2.13 has no probe for.
 *
 * Included with LTTNG_INSTRUMENTATION by waitpath_main.c (declares the kernel tracepoints),
 * and with LTTNG_PACKAGE_BUILD by waitpath_probe.c (builds the LTTng probes).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM waitpath

#if !defined(WAITPATH_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define WAITPATH_EVENTS_H

#include <lttng/tracepoint-event.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/cgroup.h>

#ifndef WAITPATH_EVENTS_ONCE
#define WAITPATH_EVENTS_ONCE
/* The 9 TCP flag bits (NS CWR ECE URG ACK PSH RST SYN FIN), like lttng's tcp `flags`. */
static inline uint16_t waitpath_tcp_flags(const struct tcphdr *th)
{
	return (uint16_t)((ntohl(tcp_flag_word((struct tcphdr *)th)) >> 16) & 0x1ff);
}
#endif

LTTNG_TRACEPOINT_EVENT_CLASS(waitpath_tcp_class,
	TP_PROTO(const struct sk_buff *skb, const struct iphdr *iph, const struct tcphdr *th),
	TP_ARGS(skb, iph, th),
	TP_FIELDS(
		ctf_integer_hex(const void *, skbaddr, skb)
		ctf_integer_network_hex(uint32_t, saddr, iph->saddr)
		ctf_integer_network_hex(uint32_t, daddr, iph->daddr)
		ctf_integer_network(uint16_t, sport, th->source)
		ctf_integer_network(uint16_t, dport, th->dest)
		ctf_integer_network(uint32_t, seq, th->seq)
		ctf_integer_network(uint32_t, ack_seq, th->ack_seq)
		ctf_integer_hex(uint16_t, flags, waitpath_tcp_flags(th))
		ctf_integer_network(uint16_t, tot_len, iph->tot_len)
		ctf_integer(unsigned int, len, skb->len)
	)
)

LTTNG_TRACEPOINT_EVENT_INSTANCE(waitpath_tcp_class, waitpath_tcp_send,
	TP_PROTO(const struct sk_buff *skb, const struct iphdr *iph, const struct tcphdr *th),
	TP_ARGS(skb, iph, th))

LTTNG_TRACEPOINT_EVENT_INSTANCE(waitpath_tcp_class, waitpath_tcp_recv,
	TP_PROTO(const struct sk_buff *skb, const struct iphdr *iph, const struct tcphdr *th),
	TP_ARGS(skb, iph, th))

#ifndef LTTNG_INSTRUMENTATION
/* The stock kernel tracepoint: only the probe is ours, never a declaration. */
LTTNG_TRACEPOINT_EVENT_MAP(cgroup_attach_task, waitpath_cgroup_attach,
	TP_PROTO(struct cgroup *dst_cgrp, const char *path, struct task_struct *task,
		bool threadgroup),
	TP_ARGS(dst_cgrp, path, task, threadgroup),
	TP_FIELDS(
		ctf_integer(pid_t, tid, task->pid)
		ctf_integer(pid_t, pid, task->tgid)
		ctf_integer(int, hierarchy, dst_cgrp->root->hierarchy_id)
		ctf_integer(uint8_t, threadgroup, threadgroup ? 1 : 0)
		ctf_string(path, path ? path : "")
	)
)
#endif

#endif /* WAITPATH_EVENTS_H */

/* This part must be outside protection */
#include <lttng/define_trace.h>
