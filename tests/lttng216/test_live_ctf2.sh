#!/usr/bin/env bash
# `waitpath live` on LTTng 2.16's default: a 2.16 lttng-relayd and lttng-sessiond (the sid
# chroot of sid-chroot.sh) serve two live user-space sessions of the same program, one in CTF 2
# (no --trace-format: what 2.15+ records by default) and one in CTF 1.8. One `waitpath live`
# per session (one host each), native decoder: each finds its session, reads every event the
# program emitted (waitpath_events_total), never falls back to babeltrace2 and sees the session
# end, and says once that a session of user-space events only leaves its threads' states
# unknown. Before viewer protocol 2.15 the CTF 2 session was not even listed (waitpath said
# nothing); before the CTF 2 front-end its metadata could not be read.
# usage: test_live_ctf2.sh WAITPATH SOURCE_DIR
set -euo pipefail
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

rounds=3 iterations=300
per_round=$((2 * (iterations * 4 + (iterations + 3) / 4)))  # as record-ust.sh counts them

# ---- inside the chroot: the daemons, the two sessions, the program; until stopped ----------
if [ "${1:-}" = --in-chroot ]; then
  shift
  work=$1 base=$2
  export LTTNG_HOME=/tmp/lttng-home
  mkdir -p "$LTTNG_HOME" /tmp/bin
  gcc -O2 -I"$here" -o /tmp/bin/ust_fields "$here/ust_fields.c" -llttng-ust -ldl -lpthread
  lttng-relayd -C "tcp://127.0.0.1:$base" -D "tcp://127.0.0.1:$((base + 1))" \
    -L "tcp://127.0.0.1:$((base + 2))" -o /tmp/relay 2>"$work/relayd.log" &
  lttng-sessiond --no-kernel 2>"$work/sessiond.log" &
  for _ in $(seq 100); do lttng -n list >/dev/null 2>&1 && break; sleep 0.1; done
  for s in live-ctf2 live-ctf18; do
    args=()
    [ "$s" = live-ctf18 ] && args=(--trace-format=ctf-1.8)
    lttng -n create "$s" --live=200000 --set-url="net://127.0.0.1:$base:$((base + 1))" \
      "${args[@]}" >/dev/null
    lttng -n enable-channel -u -s "$s" --subbuf-size=64K --num-subbuf=16 chan >/dev/null
    lttng -n add-context -u -s "$s" -c chan -t vpid -t vtid -t procname >/dev/null
    lttng -n enable-event -u -s "$s" -c chan 'ust_fields:*' >/dev/null
    lttng -n start "$s" >/dev/null
  done
  touch "$work/ready"
  # The viewers attach (they wait for this file), then the program runs.
  for _ in $(seq 300); do [ -e "$work/go" ] && break; sleep 0.1; done
  for _ in $(seq "$rounds"); do
    /tmp/bin/ust_fields "$iterations"
    sleep 0.5
  done
  for s in live-ctf2 live-ctf18; do
    lttng -n stop "$s" >/dev/null
    lttng -n destroy "$s" >/dev/null
  done
  touch "$work/done"
  # Until the viewers have seen the end (sid-chroot.sh ends what is left, by pid).
  for _ in $(seq 600); do [ -e "$work/stop" ] && break; sleep 0.1; done
  exit 0
fi

W=$(readlink -f "$1") SRC=$(readlink -f "$2")
[ "$(id -u)" -eq 0 ] || skip "needs root (the sid chroot)"
command -v python3 >/dev/null || skip "python3 not found"
work=$(mktemp -d /tmp/waitpath-live-ctf2.XXXXXX)
base=$((22000 + ($$ % 200) * 8))
pids=()
cleanup() {
  touch "$work/stop"
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ "${WAITPATH_KEEP_TMP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
# Builds the chroot when it is not cached (77 when it cannot: passed on).
rc=0
"$here/sid-chroot.sh" build >/dev/null || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

WAITPATH_SID_BIND="$SRC $work" "$here/sid-chroot.sh" run \
  bash "$here/test_live_ctf2.sh" --in-chroot "$work" "$base" >"$work/chroot.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -e "$work/ready" ] && break; sleep 0.1; done
[ -e "$work/ready" ] || { cat "$work/chroot.log"; fail "the 2.16 daemons did not start"; }

events() {  # events PORT: waitpath_events_total summed over hosts
  python3 - "127.0.0.1:$1" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
print(sum(int(float(l.rsplit(" ", 1)[1])) for l in body.splitlines()
          if l.startswith("waitpath_events_total{")))
PY
}
port=$((base + 4))
for s in live-ctf2 live-ctf18; do
  "$W" live --relayd "net://127.0.0.1:$((base + 2))" --session "$s" --json \
    --metrics "127.0.0.1:$port" >"$work/$s.out" 2>"$work/$s.err" &
  pids+=($!)
  port=$((port + 1))
done
for s in live-ctf2 live-ctf18; do
  for _ in $(seq 100); do grep -q "following session $s" "$work/$s.err" && break; sleep 0.1; done
  grep -q "following session $s" "$work/$s.err" ||
    { cat "$work/$s.err"; fail "$s: not followed"; }
done
touch "$work/go"
for s in live-ctf2 live-ctf18; do
  for _ in $(seq 600); do grep -q "session ended" "$work/$s.err" && break; sleep 0.1; done
  grep -q "session ended" "$work/$s.err" || { cat "$work/$s.err"; fail "$s: no end seen"; }
done
port=$((base + 4))
for s in live-ctf2 live-ctf18; do
  n=$(events "$port")
  cat "$work/$s.err"
  [ "$n" -eq $((rounds * per_round)) ] || fail "$s: $n events read, not $((rounds * per_round))"
  ! grep -q "read with babeltrace2" "$work/$s.err" || fail "$s: the native decoder fell back"
  # User-space events only: said once that the host's thread states are unknown.
  said=": no kernel scheduler events (sched_switch) in its session"
  for _ in $(seq 50); do grep -q "$said" "$work/$s.err" && break; sleep 0.1; done
  [ "$(grep -c "$said" "$work/$s.err")" -eq 1 ] ||
    fail "$s: a session without kernel events not said to be one, once"
  port=$((port + 1))
done
echo PASS
