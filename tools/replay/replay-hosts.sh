#!/bin/bash
# Replays the hosts of a recorded trace set to an lttng-relayd in live mode, as if each host
# were a machine streaming its kernel trace: one lttng-sessiond per host, each in its own mount,
# UTS and PID namespace (so its trace environment says the original hostname, and everything a
# host started dies with it, even a daemon, even if this script is killed), one live session
# per host, one waitpath-replay per host, all at once. Needs root. See docs/replay.md; `waitpath
# demo` runs it once per host (docs/demo.md).
#
# usage: replay-hosts.sh [-r RELAYD_URL] [-s SESSION] [-l LIVE_TIMER_US] [-R REPLAY_BIN] [-H HOST]
#                        [-w WORK_DIR] [-b SIZE:COUNT] [-f SIZE:COUNT]
#                        TRACE_SET [waitpath-replay options...]
#   RELAYD_URL  control/data URL of the relayd (default net://127.0.0.1; net://ADDR:CTRL:DATA)
#   SESSION     session name on every host (default waitpath-replay); a live reader attaches to
#               net://RELAYD/host/HOSTNAME/SESSION
#   HOST        only this host of the trace set
#   WORK_DIR    holds WORK_DIR/HOST per host, kept (default: a temporary directory, removed);
#               WORK_DIR/HOST/ready says "SESSIOND_PID REPLAY_PID PIDNS" once the host streams
#               (the pids as the host's own PID namespace PIDNS, "pid:[INODE]", numbers them)
#   -b          the blocking UST channel's sub-buffers per CPU (default 4M:8)
#   -f          the relayd keeps COUNT trace files of SIZE per stream (default: all of it)
# With --loop/--forever and no --period-ns, a generated set's hosts each get their true period.
# Ctrl-C (or SIGTERM) stops the replays and ends every daemon it started, by pid. A replay that
# ends by itself ends its session (live readers see it end); the script ends with the last.
set -u

# One host, run inside its own mount + UTS namespace: a session daemon whose sockets
# (/var/run/lttng) and lttng-ust shared memory (/dev/shm) are private, a live session
# streaming to the relayd, and the replayer. On SIGTERM or SIGINT it stops the replayer,
# destroys the session and ends the daemon by its pid.
replay_host() {
  host=$1 dir=$2 url=$3 session=$4 timer=$5 subbuf=$6 files=$7 trace=$8 replay=$9
  shift 9
  sessiond="" replayer="" stopping=""
  stop() {
    # A second signal while stopping changes nothing (re-trapping inside a handler upsets bash).
    [ -n "$stopping" ] && return
    stopping=1
    # SIGTERM, not SIGINT: a non-interactive shell starts background jobs with SIGINT ignored,
    # so a replayer that has not installed its handler yet would never see a SIGINT.
    if [ -n "$replayer" ]; then
      kill -TERM "$replayer" 2>/dev/null
      for _ in $(seq 100); do kill -0 "$replayer" 2>/dev/null || break; sleep 0.05; done
      kill -KILL "$replayer" 2>/dev/null
      wait "$replayer"
    fi
    lttng stop "$session" >/dev/null 2>&1
    lttng destroy "$session" >/dev/null 2>&1
    if [ -n "$sessiond" ]; then
      kill "$sessiond" 2>/dev/null
      for _ in $(seq 100); do kill -0 "$sessiond" 2>/dev/null || break; sleep 0.05; done
    fi
    exit "${1:-0}"
  }
  fail() {
    echo "host $host: $*"
    stop 1
  }
  trap stop INT TERM
  mkdir -p /var/run/lttng || fail "cannot create /var/run/lttng"
  mount --bind "$dir/run" /var/run/lttng || fail "cannot bind-mount a private /var/run/lttng"
  mount -t tmpfs tmpfs /dev/shm || fail "cannot mount a private /dev/shm"
  hostname "$host" || fail "cannot set the hostname"
  export LTTNG_HOME=$dir/home
  lttng-sessiond -d --no-kernel || fail "lttng-sessiond did not start"
  sessiond=$(cat "$dir/run/lttng-sessiond.pid") || fail "no pid file from lttng-sessiond"
  lttng create "$session" --live="$timer" --set-url="$url" >/dev/null ||
    fail "lttng create failed (is the relayd reachable at $url?)"
  # Blocking channel: a slow consumer makes the replayer wait instead of discarding.
  channel=(--subbuf-size "${subbuf%:*}" --num-subbuf "${subbuf#*:}" --blocking-timeout=inf)
  [ -n "$files" ] && channel+=(--tracefile-size "${files%:*}" --tracefile-count "${files#*:}")
  lttng enable-channel -u "${channel[@]}" rp >/dev/null || fail "lttng enable-channel failed"
  lttng enable-event -u -c rp 'waitpath_replay:*' >/dev/null || fail "lttng enable-event failed"
  lttng start >/dev/null || fail "lttng start failed"
  LTTNG_UST_ALLOW_BLOCKING=1 "$replay" --host "$host" "$@" "$trace" &
  replayer=$!
  echo "$sessiond $replayer $(readlink /proc/self/ns/pid)" >"$dir/ready.tmp" &&
    mv "$dir/ready.tmp" "$dir/ready"
  wait "$replayer"
  status=$?
  replayer=""
  echo "host $host: waitpath-replay ended by itself (status $status)"
  stop "$status"
}

relayd_url=net://127.0.0.1 session=waitpath-replay live_timer=200000 only_host="" work=""
subbuf=4M:8 files=""
replay_bin=$(dirname "$0")/../../build/tools/replay/waitpath-replay
# Installed (PREFIX/share/waitpath/replay-hosts.sh): the waitpath-replay on PATH.
[ -x "$replay_bin" ] || replay_bin=$(command -v waitpath-replay || echo waitpath-replay)
while getopts "r:s:l:R:H:w:b:f:" opt; do
  case $opt in
    r) relayd_url=$OPTARG ;;
    s) session=$OPTARG ;;
    l) live_timer=$OPTARG ;;
    R) replay_bin=$OPTARG ;;
    H) only_host=$OPTARG ;;
    w) work=$OPTARG ;;
    b) subbuf=$OPTARG ;;
    f) files=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '8,21p' "$0"; exit 2; }
trace_set=$1
shift
for sizes in "$subbuf" ${files:+"$files"}; do
  [[ $sizes =~ ^[0-9]+[kKMG]?:[0-9]+$ ]] ||
    { echo "replay-hosts: '$sizes': expected SIZE:COUNT, e.g. 4M:8"; exit 2; }
done
[ -x "$replay_bin" ] || { echo "replay-hosts: no waitpath-replay at $replay_bin (use -R)"; exit 2; }
[ "$(id -u)" -eq 0 ] ||
  { echo "replay-hosts: needs root (namespaces, one session daemon per host)"; exit 2; }
hosts=$("$replay_bin" --list-hosts "$trace_set") || exit 1
if [ -n "$only_host" ]; then
  grep -qxF -- "$only_host" <<<"$hosts" ||
    { echo "replay-hosts: no host $only_host in $trace_set (hosts: ${hosts//$'\n'/ })"; exit 2; }
  hosts=$only_host
fi
own_work=""
if [ -z "$work" ]; then
  work=$(mktemp -d /tmp/waitpath-replay-hosts.XXXXXX)
  own_work=1
fi

# The host shells still running (jobs not yet reaped: their pids cannot have been reused). Each
# job is `unshare`, which ignores SIGTERM: its child, the host's shell (PID 1 of the host's
# namespace) gets it and stops in order; when that shell ends, the kernel kills whatever is left
# in the namespace (the session daemon, its consumers). Should this script be killed outright,
# `unshare` gets SIGKILL (setpriv --pdeathsig) and its shell SIGTERM (--kill-child).
cleanup() {
  for p in $(jobs -p); do
    for shell in $(pgrep -P "$p"); do kill -TERM "$shell" 2>/dev/null; done
  done
  wait
  [ -z "$own_work" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Looped rounds: hosts replayed together must shift by one true period, each in its own clock,
# or their clocks jump apart at every round and the clock sync fails (docs/replay.md). For a
# generated set (its truth.json gives the duration and each host's clock slope) the period is
# passed per host unless the caller gave one; for other sets with several hosts, a warning.
looped="" period_given=""
for a in "$@"; do
  case $a in
    --loop | --loop=* | --forever) looped=1 ;;
    --period-ns | --period-ns=*) period_given=1 ;;
  esac
done
period_of() { :; }
if [ -n "$looped" ] && [ -z "$period_given" ]; then
  if [ -f "$trace_set/truth.json" ] && command -v python3 >/dev/null; then
    period_of() {
      python3 - "$trace_set/truth.json" "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
slope = [c["slope"] for c in t.get("clocks", []) if c["host"] == sys.argv[2]]
if "duration_ns" in t and slope:
    print(f"--period-ns={round((t['duration_ns'] + 1000000) / slope[0])}")
PY
    }
  elif [ "$(wc -l <<<"$hosts")" -gt 1 ]; then
    echo "replay-hosts: warning: looping several hosts without --period-ns: each shifts by" \
      "its own trace's span, so their clocks drift apart at every round (docs/replay.md)"
  fi
fi

for host in $hosts; do
  mkdir -p "$work/$host/run" "$work/$host/home"
  period=$(period_of "$host")
  rm -f "$work/$host/ready"
  setpriv --pdeathsig KILL \
    unshare -m -u -p --fork --kill-child=SIGTERM --mount-proc --propagation private \
    bash -c "$(declare -f replay_host)"'; replay_host "$@"' \
    replay-host "$host" "$work/$host" "$relayd_url" "$session" "$live_timer" "$subbuf" "$files" \
    "$trace_set" "$replay_bin" "$@" ${period:+"$period"} &
  echo "replay-hosts: $host -> ${relayd_url}, live URL net://RELAYD/host/$host/$session"
done
wait
