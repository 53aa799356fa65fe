#!/bin/bash
# Sets up, on one traced host, the LTTng kernel live session that `waitpath live` analyses: the
# kernel events waitpath reads and nothing else, in discard mode (losses are counted, never
# silent), streaming to an lttng-relayd. Run it as root (or a member of the `tracing` group) on
# every host, with the lttng-modules kernel tracer installed. See docs/demo.md.
set -u

usage() {
  cat <<'EOF'
usage: waitpath-session.sh [options] RELAYD_URL
       waitpath-session.sh --destroy [--name NAME]

Creates and starts an LTTng kernel live session with exactly the events waitpath needs,
streaming to the relay daemon at RELAYD_URL (e.g. net://relay.example.com, or
net://HOST:CONTROL_PORT:DATA_PORT for non-default ports). `waitpath live` then attaches to
that relayd's live port (net://HOST:5344 by default) and finds the session by this host's name.

options:
  --name NAME             session name (default: waitpath); the live URL of this host is
                          net://RELAYD/host/$(hostname)/NAME
  --live-timer US         live timer period in microseconds (default: 1000000): how often
                          partially filled sub-buffers are flushed to the relayd, i.e. the
                          live analysis' latency floor
  --subbuf-size SIZE      kernel sub-buffer size (default: 1M); per CPU
  --num-subbuf N          sub-buffers per CPU (default: 8)
  --tracefile-size SIZE   the relayd rotates each stream's file at this size (default: 64M)
  --tracefile-count N     and keeps this many per stream (default: 16); 0 = unbounded
  --no-start              create and configure only (`lttng start NAME` later)
  --kmod                  also the events of waitpath's probe module (kmod/README.md:
                          lttng-probe-waitpath, loaded): socket-level TCP packets and
                          cgroups; fails if the kernel tracer does not list them
  --spans                 also application spans (docs/requests.md): a user-space channel
                          with waitpath_span:* (include/waitpath/span.h) and jaeger_ust:*
                          events and the vtid/vpid contexts that tie them to their threads
  --destroy               stop and destroy the session NAME
  --dry-run               print the lttng commands instead of running them
  -h, --help              this help

Channel sizing (per CPU; the kernel tracer allocates every CPU's buffers up front):
  A busy server produces roughly 20k-100k of these events per second and CPU (scheduler
  switches and wake-ups, interrupts, softirqs, timers, packets), about 50 bytes each on
  average: up to ~5 MB/s per CPU. 8 sub-buffers of 1 MiB hold ~1.6 s of that peak: the
  consumer daemon ships a sub-buffer as soon as it is full (~0.2 s at peak), so the session
  loses events only if the consumer or the network to the relayd stalls for more than ~1.4 s.
  The live timer also closes a partly filled sub-buffer at each tick; with a 1 s timer that
  uses at most one sub-buffer per tick at low rates. Memory: 8 MiB per CPU (512 MiB on a
  64-CPU host): lower --num-subbuf on large idle hosts, raise it (or --subbuf-size) if
  `waitpath live` reports discarded events. Discard mode (not overwrite) is deliberate:
  waitpath marks the affected CPU unknown until its next sched_switch and counts the loss.
  The relayd keeps at most tracefile-size x tracefile-count per stream on disk (1 GiB per CPU
  by default); the live reader only needs the recent part.
EOF
}

name=waitpath live_timer=1000000 subbuf_size=1M num_subbuf=8
tracefile_size=64M tracefile_count=16 start=1 destroy=0 dry_run=0 kmod=0 spans=0 url=""
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=${2:?--name needs a value}; shift ;;
    --live-timer) live_timer=${2:?--live-timer needs a value}; shift ;;
    --subbuf-size) subbuf_size=${2:?--subbuf-size needs a value}; shift ;;
    --num-subbuf) num_subbuf=${2:?--num-subbuf needs a value}; shift ;;
    --tracefile-size) tracefile_size=${2:?--tracefile-size needs a value}; shift ;;
    --tracefile-count) tracefile_count=${2:?--tracefile-count needs a value}; shift ;;
    --no-start) start=0 ;;
    --kmod) kmod=1 ;;
    --spans) spans=1 ;;
    --destroy) destroy=1 ;;
    --dry-run) dry_run=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "waitpath-session: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      [ -z "$url" ] || { echo "waitpath-session: one RELAYD_URL only (see --help)" >&2; exit 2; }
      url=$1 ;;
  esac
  shift
done

# The events waitpath reads (docs/reading.md), by LTTng >= 2.7 kernel names. The x86 IPI
# vectors (x86_irq_vectors_*_entry/exit) are matched by a wildcard: their set depends on the
# kernel, and the wildcard simply matches nothing on other architectures.
events=(
  sched_switch sched_waking sched_wakeup sched_wakeup_new
  sched_process_fork sched_process_exit sched_process_free
  irq_handler_entry irq_handler_exit irq_softirq_entry irq_softirq_exit irq_softirq_raise
  timer_hrtimer_expire_entry timer_hrtimer_expire_exit
  net_dev_queue net_if_receive_skb
  block_rq_issue block_rq_complete
  lttng_statedump_process_state
)
# kmod/ (lttng-probe-waitpath): checked against `lttng list -k`, because lttng accepts event
# names that no loaded probe provides and then records nothing.
kmod_events=(waitpath_tcp_send waitpath_tcp_recv waitpath_cgroup_attach waitpath_statedump_cgroup)
channel=waitpath

run() {
  if [ "$dry_run" -eq 1 ]; then
    # Copy-pasteable: words with shell-special characters in single quotes.
    local out="" a
    for a in "$@"; do
      if [[ $a =~ ^[A-Za-z0-9_=,./:@%+-]+$ ]]; then out+=" $a"; else out+=" '${a//\'/\'\\\'\'}'"; fi
    done
    echo "${out# }"
    return 0
  fi
  "$@" >/dev/null || { echo "waitpath-session: failed: $*" >&2; exit 1; }
}

if [ "$destroy" -eq 1 ]; then
  run lttng destroy "$name"  # stops it first
  exit 0
fi

[ -n "$url" ] || { echo "waitpath-session: RELAYD_URL missing (see --help)" >&2; exit 2; }
case $url in
  net://* | net6://* | tcp://* | tcp6://*) ;;
  *) echo "waitpath-session: RELAYD_URL must be net://HOST[:CTRL:DATA] (got $url)" >&2; exit 2 ;;
esac
[[ $live_timer =~ ^[1-9][0-9]*$ ]] ||
  { echo "waitpath-session: --live-timer takes microseconds" >&2; exit 2; }

if [ "$dry_run" -eq 0 ]; then
  command -v lttng >/dev/null ||
    { echo "waitpath-session: lttng not found (apt-get install lttng-tools lttng-modules-dkms)" \
    >&2; exit 1; }
  # The kernel tracer needs lttng-modules and root (or the tracing group).
  lttng list -k >/dev/null 2>&1 ||
    { echo "waitpath-session: the LTTng kernel tracer is not available (lttng-modules loaded?" \
        "root or tracing group? lttng-sessiond running?)" >&2; exit 1; }
  if [ "$kmod" -eq 1 ]; then
    listed=$(lttng list -k 2>/dev/null)
    for e in "${kmod_events[@]}"; do
      grep -qw "$e" <<<"$listed" ||
        { echo "waitpath-session: --kmod: the kernel tracer has no $e" \
            "(modprobe lttng-probe-waitpath; kmod/README.md)" >&2; exit 1; }
    done
  fi
fi

run lttng create "$name" --live="$live_timer" --set-url="$url"
run lttng enable-channel --kernel --session="$name" --discard \
  --subbuf-size="$subbuf_size" --num-subbuf="$num_subbuf" \
  --tracefile-size="$tracefile_size" --tracefile-count="$tracefile_count" "$channel"
run lttng enable-event --kernel --session="$name" --channel="$channel" --tracepoint \
  "$(IFS=,; echo "${events[*]}")"
run lttng enable-event --kernel --session="$name" --channel="$channel" --tracepoint \
  'x86_irq_vectors_*'
if [ "$kmod" -eq 1 ]; then
  run lttng enable-event --kernel --session="$name" --channel="$channel" --tracepoint \
    "$(IFS=,; echo "${kmod_events[*]}")"
fi
# Every event names the task current on its CPU: when the session discards events, a lost
# sched_switch is inferred from the next event's own task (docs/reading.md) instead of
# charging that task's time to the one we thought was running.
run lttng add-context --kernel --session="$name" --channel="$channel" --type=tid --type=procname
if [ "$spans" -eq 1 ]; then
  # Spans are rare next to kernel events: small per-UID buffers. The same session, hence the
  # same monotonic clock and the same host name: waitpath joins them to the kernel trace.
  run lttng enable-channel --userspace --session="$name" --discard --buffers-uid \
    --subbuf-size=256K --num-subbuf=4 \
    --tracefile-size="$tracefile_size" --tracefile-count="$tracefile_count" "${channel}_spans"
  run lttng enable-event --userspace --session="$name" --channel="${channel}_spans" \
    'waitpath_span:*,jaeger_ust:*'
  run lttng add-context --userspace --session="$name" --channel="${channel}_spans" \
    --type=vtid --type=vpid
fi
if [ "$start" -eq 1 ]; then
  run lttng start "$name"
fi
[ "$dry_run" -eq 1 ] || echo \
  "waitpath-session: session $name streams to $url; live URL net://RELAYD/host/$(hostname)/$name"
