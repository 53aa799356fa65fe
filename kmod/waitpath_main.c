// SPDX-License-Identifier: GPL-2.0-only
/*
 * lttng-probe-waitpath: what stock kernel tracepoints lack for waitpath (kmod/README.md).
 *
 * - waitpath_tcp_send / waitpath_tcp_recv: netfilter hooks at NF_INET_LOCAL_OUT and
 *   NF_INET_LOCAL_IN (IPv4, in every network namespace, last priority: the packet as it
 *   leaves the stack after the filter, as it is delivered to the socket) fire our tracepoints
 *   with the packet's IP and TCP headers. They see the socket-level packet whatever overlay
 *   carries it on the wire, and in the sending task's context on the way out.
 * - waitpath_cgroup_attach: the LTTng probe of the stock cgroup_attach_task tracepoint.
 * - waitpath_statedump_cgroup: each task's default-hierarchy cgroup path, emitted from
 *   lttng-modules' state dump (we attach to its lttng_statedump_process_state tracepoint).
 *
 * The tracepoints cost nothing while no LTTng session records them (the hooks test the
 * tracepoint's static key first).
 */
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <linux/cgroup.h>
#include <linux/kernfs.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <lttng/tracer.h>
#include <wrapper/tracepoint.h>

/* Declare and define our own tracepoints (the kernel side of the events). */
#define LTTNG_INSTRUMENTATION
#include "waitpath_events.h"
#include "waitpath_statedump.h"
#undef LTTNG_INSTRUMENTATION

#include "waitpath.h"

LTTNG_DEFINE_TRACE(waitpath_tcp_send,
	TP_PROTO(const struct sk_buff *skb, const struct iphdr *iph, const struct tcphdr *th),
	TP_ARGS(skb, iph, th));

LTTNG_DEFINE_TRACE(waitpath_tcp_recv,
	TP_PROTO(const struct sk_buff *skb, const struct iphdr *iph, const struct tcphdr *th),
	TP_ARGS(skb, iph, th));

LTTNG_DEFINE_TRACE(waitpath_statedump_cgroup,
	TP_PROTO(struct lttng_kernel_session *session, struct task_struct *p, int hierarchy,
		const char *path),
	TP_ARGS(session, p, hierarchy, path));

/* --- TCP: netfilter hooks ---------------------------------------------------------------- */

static void waitpath_tcp(struct sk_buff *skb, bool out)
{
	const struct iphdr *iph;
	const struct tcphdr *th;
	struct tcphdr buf;

	if (!skb || skb->protocol != htons(ETH_P_IP))
		return;
	iph = ip_hdr(skb);
	if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph))
		return;
	th = skb_header_pointer(skb, skb_network_offset(skb) + iph->ihl * 4, sizeof(buf), &buf);
	if (!th)
		return;
	if (out)
		trace_waitpath_tcp_send(skb, iph, th);
	else
		trace_waitpath_tcp_recv(skb, iph, th);
}

static unsigned int waitpath_local_out(void *priv, struct sk_buff *skb,
		const struct nf_hook_state *state)
{
	if (trace_waitpath_tcp_send_enabled())
		waitpath_tcp(skb, true);
	return NF_ACCEPT;
}

static unsigned int waitpath_local_in(void *priv, struct sk_buff *skb,
		const struct nf_hook_state *state)
{
	if (trace_waitpath_tcp_recv_enabled())
		waitpath_tcp(skb, false);
	return NF_ACCEPT;
}

static const struct nf_hook_ops waitpath_nf_ops[] = {
	{
		.hook = waitpath_local_out,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP_PRI_LAST,
	},
	{
		.hook = waitpath_local_in,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_IN,
		.priority = NF_IP_PRI_LAST,
	},
};

static int __net_init waitpath_net_init(struct net *net)
{
	return nf_register_net_hooks(net, waitpath_nf_ops, ARRAY_SIZE(waitpath_nf_ops));
}

static void __net_exit waitpath_net_exit(struct net *net)
{
	nf_unregister_net_hooks(net, waitpath_nf_ops, ARRAY_SIZE(waitpath_nf_ops));
}

static struct pernet_operations waitpath_net_ops = {
	.init = waitpath_net_init,
	.exit = waitpath_net_exit,
};

/* --- cgroups in the state dump ------------------------------------------------------------ */

/* The state dump walks tasks with RCU held and cannot sleep: one static buffer, locked. */
static DEFINE_SPINLOCK(waitpath_path_lock);
static char waitpath_path[1024];

static void waitpath_on_process_state(void *data, struct lttng_kernel_session *session,
		struct task_struct *p, int type, int mode, int submode, int status,
		struct files_struct *files)
{
	unsigned long flags;
	struct cgroup *cgrp;

	if (!trace_waitpath_statedump_cgroup_enabled())
		return;
	spin_lock_irqsave(&waitpath_path_lock, flags);
	rcu_read_lock();
	cgrp = task_dfl_cgroup(p);
	if (!cgrp || cgroup_path(cgrp, waitpath_path, sizeof(waitpath_path)) < 0)
		waitpath_path[0] = '\0';
	rcu_read_unlock();
	trace_waitpath_statedump_cgroup(session, p, 0, waitpath_path);
	spin_unlock_irqrestore(&waitpath_path_lock, flags);
}

/*
 * lttng-modules' state-dump tracepoints are not exported: find lttng_statedump_process_state
 * among the tracepoints of the modules that define tracepoints (ours is notified of those
 * already loaded when it registers, and of those loaded or unloaded later).
 */
static const char waitpath_statedump_tp_name[] = "lttng_statedump_process_state";
static struct tracepoint *waitpath_statedump_tp;
static DEFINE_MUTEX(waitpath_tp_mutex);

static int waitpath_tp_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct tp_module *tp_mod = data;
	tracepoint_ptr_t *begin = tp_mod->mod->tracepoints_ptrs;
	unsigned int i, n = tp_mod->mod->num_tracepoints;

	mutex_lock(&waitpath_tp_mutex);
	for (i = 0; i < n; i++) {
		struct tracepoint *tp = tracepoint_ptr_deref(&begin[i]);

		if (strcmp(tp->name, waitpath_statedump_tp_name))
			continue;
		if (val == MODULE_STATE_COMING && !waitpath_statedump_tp) {
			if (!tracepoint_probe_register(tp, waitpath_on_process_state, NULL))
				waitpath_statedump_tp = tp;
		} else if (val == MODULE_STATE_GOING && waitpath_statedump_tp == tp) {
			tracepoint_probe_unregister(tp, waitpath_on_process_state, NULL);
			waitpath_statedump_tp = NULL;
		}
	}
	mutex_unlock(&waitpath_tp_mutex);
	return NOTIFY_OK;
}

static struct notifier_block waitpath_tp_nb = {
	.notifier_call = waitpath_tp_notify,
	.priority = 0,
};

/* --- module ------------------------------------------------------------------------------- */

/* Stops following lttng-statedump's tracepoint (init's error path and exit). */
static void waitpath_statedump_detach(void)
{
	unregister_tracepoint_module_notifier(&waitpath_tp_nb);
	mutex_lock(&waitpath_tp_mutex);
	if (waitpath_statedump_tp)
		tracepoint_probe_unregister(waitpath_statedump_tp, waitpath_on_process_state, NULL);
	waitpath_statedump_tp = NULL;
	mutex_unlock(&waitpath_tp_mutex);
}

static int __init waitpath_init(void)
{
	int ret;

	ret = waitpath_probe_register();
	if (ret)
		return ret;
	ret = waitpath_statedump_probe_register();
	if (ret)
		goto err_probe;
	ret = register_tracepoint_module_notifier(&waitpath_tp_nb);
	if (ret)
		goto err_statedump_probe;
	if (!waitpath_statedump_tp)
		pr_warn("lttng-probe-waitpath: %s not found (lttng-statedump not loaded?): no cgroups in state dumps\n",
			waitpath_statedump_tp_name);
	ret = register_pernet_subsys(&waitpath_net_ops);
	if (ret)
		goto err_notifier;
	return 0;

err_notifier:
	waitpath_statedump_detach();
err_statedump_probe:
	waitpath_statedump_probe_unregister();
err_probe:
	waitpath_probe_unregister();
	return ret;
}

static void __exit waitpath_exit(void)
{
	unregister_pernet_subsys(&waitpath_net_ops);
	waitpath_statedump_detach();
	waitpath_statedump_probe_unregister();
	waitpath_probe_unregister();
	/* No hook or probe of ours may still be running when the module's text goes. */
	tracepoint_synchronize_unregister();
}

module_init(waitpath_init);
module_exit(waitpath_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("LTTng probes for waitpath: socket-level TCP packets, cgroup attribution");
MODULE_VERSION("0.1");
