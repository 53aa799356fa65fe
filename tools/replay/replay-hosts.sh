#!/bin/bash
# Replays every host of a recorded trace set to an lttng-relayd in live mode, as if each host
# were a machine streaming its kernel trace: one lttng-sessiond per host, each in its own mount
# and UTS namespace (so its trace environment says the original hostname), one live session per
# host, one waitpath-replay per host, all at once. Needs root. See docs/replay.md.
#
# usage: replay-hosts.sh [-r RELAYD_URL] [-s SESSION] [-l LIVE_TIMER_US] [-R REPLAY_BIN]
#                        TRACE_SET [waitpath-replay options...]
#   RELAYD_URL  control/data URL of the relayd (default net://127.0.0.1)
#   SESSION     session name on every host (default waitpath-replay); a live reader attaches to
#               net://RELAYD/host/HOSTNAME/SESSION
# Ctrl-C (or SIGTERM) stops the replays and ends every daemon it started.
set -u

relayd_url=net://127.0.0.1 session=waitpath-replay live_timer=200000
replay_bin=$(dirname "$0")/../../build/tools/replay/waitpath-replay
while getopts "r:s:l:R:" opt; do
  case $opt in
    r) relayd_url=$OPTARG ;;
    s) session=$OPTARG ;;
    l) live_timer=$OPTARG ;;
    R) replay_bin=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '7,12p' "$0"; exit 2; }
trace_set=$1
shift
[ -x "$replay_bin" ] || { echo "replay-hosts: no waitpath-replay at $replay_bin (use -R)"; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "replay-hosts: needs root (namespaces, one session daemon per host)"; exit 2; }
hosts=$("$replay_bin" --list-hosts "$trace_set") || exit 1

work=$(mktemp -d /tmp/waitpath-replay-hosts.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  wait
  # The session daemons were started by the per-host shells; end each by its pid file.
  for f in "$work"/*/run/lttng-sessiond.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for host in $hosts; do
  mkdir -p "$work/$host/run" "$work/$host/home"
  # One host: private /var/run/lttng (daemon sockets) and /dev/shm (lttng-ust shared memory).
  unshare -m -u --propagation private bash -c '
    set -e
    host=$1 dir=$2 url=$3 session=$4 timer=$5 trace=$6 bin=$7
    shift 7
    mkdir -p /var/run/lttng
    mount --bind "$dir/run" /var/run/lttng
    mount -t tmpfs tmpfs /dev/shm
    hostname "$host"
    export LTTNG_HOME=$dir/home
    lttng-sessiond -d --no-kernel
    lttng create "$session" --live="$timer" --set-url="$url" >/dev/null
    lttng enable-channel -u --subbuf-size 4M --num-subbuf 8 --blocking-timeout=inf rp >/dev/null
    lttng enable-event -u -c rp "waitpath_replay:*" >/dev/null
    lttng start >/dev/null
    stop() { kill -INT "$child" 2>/dev/null; }
    trap stop INT TERM
    LTTNG_UST_ALLOW_BLOCKING=1 "$bin" --host "$host" "$@" "$trace" &
    child=$!
    wait "$child" || wait "$child" || true
    lttng stop >/dev/null || true
    lttng destroy >/dev/null || true
    kill "$(cat "$dir/run/lttng-sessiond.pid")"
  ' replay-host "$host" "$work/$host" "$relayd_url" "$session" "$live_timer" "$trace_set" \
    "$replay_bin" "$@" &
  pids+=($!)
  echo "replay-hosts: $host -> ${relayd_url}, live URL net://RELAYD/host/$host/$session"
done
wait
