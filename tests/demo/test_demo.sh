#!/bin/bash
# End to end test of `waitpath demo` with real daemons: a private lttng-relayd, one lttng-sessiond
# per generated host (own mount + UTS namespaces) and the live analysis. Runs it twice:
#  1. --duration 20s --json --no-metrics: exits 0 by itself with wait records of >= 2 hosts;
#  2. until SIGINT (as Ctrl-C), serving /metrics on a free port: exits 0 promptly.
# Each time, every process the demo reported in its --pid-file must be gone afterwards, and its
# work directory removed.
#
# usage: test_demo.sh WAITPATH
# Exit 77 (skipped) without root, lttng-tools, namespaces or jq.
set -u
waitpath=$1

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

need_lttng_namespaces

demo_workdir waitpath-demo-test

# check_ended PIDFILE: the processes listed (ROLE [HOST] PID) are gone, the work dir removed.
check_ended() {
  local pids=$1 role pid comm n=0
  [ -s "$pids" ] || fail "no pid file"
  while read -r role rest; do
    pid=${rest##* }
    if [ "$role" = workdir ]; then
      [ -e "$pid" ] && fail "work directory $pid left behind"
      continue
    fi
    n=$((n + 1))
    # Gone, a zombie about to be reaped by init, or the pid reused by an unrelated program.
    [ -r "/proc/$pid/stat" ] || continue
    comm=$(sed 's/^[0-9]* (\(.*\)) \(.\).*/\1 \2/' "/proc/$pid/stat")
    case $comm in
      *" Z") ;;
      lttng-* | waitpath-replay* | bash* | unshare*) fail "$role $rest still runs ($comm)" ;;
    esac
  done <"$pids"
  for role in relayd sessiond replay; do
    grep -q "^$role " "$pids" || fail "the pid file has no $role: $(cat "$pids")"
  done
  echo "ok: the $n processes it started have ended, $(grep -c '^sessiond ' "$pids") session daemons"
}

# Hostile neighbours: a symlink where the pid file's temporary goes, and a stale-looking work
# directory planted by another user; the demo must neither write through the one nor delete
# the other (its own work directories live in root's /run/waitpath).
echo keep >"$work/victim"
ln -s "$work/victim" "$work/pids1.tmp"
mkdir -p /run/waitpath
planted=/run/waitpath/waitpath-demo.planted$$
mkdir "$planted" && echo "999999 0" >"$planted/owner" && chown -R nobody "$planted"

# 1. A fixed duration, JSON output, capturing the slowest requests (--capture-min-request p99,
# the demo's default).
unset TMPDIR
start=$(date +%s)
timeout -s KILL 80 "$waitpath" demo --duration 20s --no-metrics --json --pid-file "$work/pids1" \
  --capture-dir "$work/captures" >"$work/out1" 2>"$work/err1"
status=$?
cat "$work/err1"
[ $status -eq 0 ] || fail "demo --duration 20s: exit status $status: $(tail -1 "$work/err1")"
echo "ok: exit 0 after $(($(date +%s) - start)) s"
jq -e . "$work/out1" >/dev/null || fail "stdout is not JSON Lines: $(head -c 500 "$work/out1")"
hosts=$(jq -r 'select(.type == "wait") | .host' "$work/out1" | sort | uniq -c)
echo "wait records per host:"
echo "$hosts"
[ "$(grep -c . <<<"$hosts")" -ge 2 ] || fail "wait records of fewer than two hosts"
# The requests: the client's checkout spans, each one trace with the web's cart and the db's
# query (the replayers re-emit the spans), their paths reaching into the db host. Each round of
# the loop replays new ids: a trace id is one request.
traces=$(jq -s '[.[] | select(.type == "span")] | group_by(.trace_id)
  | map(select((map(.name) | sort) == ["cart", "checkout", "query"])) | length' "$work/out1")
[ "$traces" -gt 0 ] || fail "no request traced as checkout -> cart -> query under one trace id"
across=$(jq -s '[.[] | select(.type == "span" and .name == "checkout")
  | select(any(.by_task[]; .host == "db"))] | length' "$work/out1")
[ "$across" -gt 0 ] || fail "no checkout whose path reaches the db host"
echo "ok: $traces requests traced across the three hosts, $across reaching the db"
# The captures: each a request slower than its operation's p99 so far, its record in wait.json
# as the demo wrote it, its traces readable by babeltrace2, and `waitpath analyze` of the
# capture giving the same request again: the same span, duration and start (in the demo's
# reference clock through the transforms wait.json keeps), each state within the hosts' sync
# accuracy (the capture is synchronized from its own, shorter, traces).
mapfile -t made < <(find "$work/captures" -mindepth 1 -maxdepth 1 -type d | sort)
[ "${#made[@]}" -ge 1 ] || fail "no capture in $work/captures: $(grep -i capture "$work/err1")"
[ "$(grep -c '^waitpath: captured ' "$work/err1")" -eq "${#made[@]}" ] ||
  fail "captures not said one by one"
# A checkout when one was captured: its path spans the three hosts, the reference among them.
pick=${made[0]}
for c in "${made[@]}"; do
  if grep -q '"name": "checkout"' "$c/wait.json"; then pick=$c; break; fi
done
for trace in $(find "$pick" -name metadata -printf '%h\n'); do
  babeltrace2 "$trace" >/dev/null 2>&1 || fail "babeltrace2 cannot read $trace"
done
"$waitpath" analyze --json --min-span 1ns "$pick" >"$work/again" 2>"$work/again.err" ||
  fail "analyze of the capture: $(tail -1 "$work/again.err")"
python3 - "$work/out1" "$pick/wait.json" "$work/again" \
  <<'PY' || fail "the capture does not give its request again"
import json, sys
spans = [json.loads(l) for l in open(sys.argv[1]) if '"type":"span"' in l]
info = json.load(open(sys.argv[2]))
again = [json.loads(l) for l in open(sys.argv[3]) if '"type":"span"' in l]
cap = info["span"]
live = [s for s in spans if s["span_id"] == cap["span_id"] and s["trace_id"] == cap["trace_id"]]
assert live == [cap], ("wait.json's span is not the demo's record", cap, live)
same_op = sorted(s["duration_ns"] for s in spans if s["name"] == cap["name"]
                 and s["host"] == cap["host"])
assert cap["duration_ns"] > same_op[len(same_op) // 2], ("not a slow one", cap["duration_ns"],
                                                         same_op)
got = [s for s in again if s["span_id"] == cap["span_id"] and s["trace_id"] == cap["trace_id"]]
assert len(got) == 1, ("the capture's analysis lacks the span", len(again))
got = got[0]
for k in ("name", "host", "tid"):
    assert got[k] == cap[k], (k, got[k], cap[k])
# Times: the capture is analysed in the clock of its own first host; mapped to the demo's
# reference with the transform wait.json keeps: exact when that host is the reference; else
# within the sync accuracy (live refines the transform as it goes, and wait.json keeps the
# last one) and 1 us (a double's slope at this epoch).
first = sorted(h["host"] for h in info["hosts"])[0]
to_ref = [h["to_reference"] for h in info["hosts"] if h["host"] == first][0]
from fractions import Fraction
slack = sum(h["to_reference"].get("accuracy_ns", 0) for h in info["hosts"])
tolerance = 0 if first == info["reference"] else slack + 1000
for k in ("start_ns", "end_ns"):
    t = Fraction(to_ref["slope"]) * got[k] + Fraction(to_ref["offset_ns"])
    assert abs(t - cap[k]) <= tolerance, (k, float(t), cap[k], first)
slack = sum(h["to_reference"].get("accuracy_ns", 0) for h in info["hosts"])
for state, ns in cap["breakdown_ns"].items():
    # (plus the drift of a host's clock against the reference's over the request)
    assert ns >= 0 and abs(got["breakdown_ns"][state] - ns) <= slack + 1000, (
        state, got["breakdown_ns"][state], ns, slack)
assert sum(got["breakdown_ns"].values()) == got["duration_ns"]
print("capture", cap["name"], cap["span_id"], cap["duration_ns"],
      "ns: the same request again, states within", int(slack), "ns")
PY
echo "ok: ${#made[@]} captures of slow requests; $(basename "$pick") reproduces its request"
check_ended "$work/pids1"
[ "$(cat "$work/victim")" = keep ] || fail "the pid file was written through a symlink"
[ -d "$planted" ] || fail "another user's directory $planted was deleted"
rm -rf "$planted"
grep -q "^workdir /run/waitpath/waitpath-demo\." "$work/pids1" ||
  fail "work directory not under /run/waitpath: $(grep workdir "$work/pids1")"
echo "ok: no write through a planted symlink, no deletion of another user's directory"

# 2. Until SIGINT, with metrics on a free port.
port=$(python3 \
  -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$waitpath" demo --metrics "127.0.0.1:$port" --pid-file "$work/pids2" >"$work/out2" 2>"$work/err2" &
demo_pid=$!
for _ in $(seq 300); do
  grep -q "^replay " "$work/pids2" 2>/dev/null && break
  kill -0 "$demo_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q "^replay " "$work/pids2" 2>/dev/null ||
  fail "the demo did not start: $(tail -1 "$work/err2")"
sleep 5
if command -v curl >/dev/null; then
  curl -sf "http://127.0.0.1:$port/metrics" | grep -q "^waitpath_" ||
    fail "no waitpath metrics at 127.0.0.1:$port"
  echo "ok: /metrics served on 127.0.0.1:$port"
fi
kill -INT "$demo_pid"
for _ in $(seq 300); do
  kill -0 "$demo_pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$demo_pid" 2>/dev/null && fail "still running 30 s after SIGINT"
wait "$demo_pid"
status=$?
demo_pid=""
cat "$work/err2"
[ $status -eq 0 ] || fail "exit status $status after SIGINT"
grep -q . "$work/out2" || fail "nothing printed before SIGINT"
check_ended "$work/pids2"

# 4. Its reader goes away: `| head -1` (stdout closed), and `2>&1 | tee` then Ctrl-C on both
# (stdout and stderr closed while it stops). Either way it stops in order, exits 0 or 141
# (never an abort), and leaves nothing behind.
timeout -s KILL 80 "$waitpath" demo --json --no-metrics --pid-file "$work/pids4" 2>"$work/err4" |
  head -1 >"$work/out4"
status=${PIPESTATUS[0]}
[ "$status" -eq 141 ] ||
  fail "demo | head -1: exit status $status (expected 141): $(tail -1 "$work/err4")"
jq -e . "$work/out4" >/dev/null || fail "demo | head -1 printed no JSON line"
check_ended "$work/pids4"
echo "ok: demo --json | head -1 stops in order, exit 141"
set -m  # the pipeline in its own process group, as a terminal's job
{ "$waitpath" demo --no-metrics --pid-file "$work/pids5" 2>&1
  echo "status $?" >"$work/status5"; } |
  tee "$work/log5" >/dev/null &
set +m
job=$!
for _ in $(seq 300); do
  grep -q "^replay " "$work/pids5" 2>/dev/null && break
  sleep 0.1
done
sleep 2
kill -INT -- "-$job"  # Ctrl-C: the whole job, tee included
for _ in $(seq 300); do
  [ -s "$work/status5" ] && break
  sleep 0.1
done
status=$(awk '{print $2}' "$work/status5" 2>/dev/null)
[ "$status" = 0 ] || [ "$status" = 141 ] || fail "demo 2>&1 | tee, Ctrl-C: exit status '$status'"
check_ended "$work/pids5"
echo "ok: demo 2>&1 | tee, Ctrl-C: exit $status, stopped in order"

# 3. Killed outright (SIGKILL: no handler runs): nothing it started may survive it.
"$waitpath" demo --no-metrics --pid-file "$work/pids3" >"$work/out3" 2>"$work/err3" &
demo_pid=$!
for _ in $(seq 300); do
  [ "$(grep -c "^replay " "$work/pids3" 2>/dev/null)" -ge 2 ] && break
  kill -0 "$demo_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q "^replay " "$work/pids3" 2>/dev/null ||
  fail "the demo did not start: $(tail -1 "$work/err3")"
sleep 2
kill -KILL "$demo_pid"
wait "$demo_pid" 2>/dev/null
demo_pid=""
for _ in $(seq 100); do
  left=""
  while read -r role rest; do
    [ "$role" = workdir ] && continue
    pid=${rest##* }
    [ -r "/proc/$pid/stat" ] || continue
    case $(sed 's/^[0-9]* (\(.*\)) \(.\).*/\1 \2/' "/proc/$pid/stat") in
      *" Z") ;;
      lttng-* | waitpath-replay* | bash* | unshare*) left="$left $role/$pid" ;;
    esac
  done <"$work/pids3"
  [ -z "$left" ] && break
  sleep 0.2
done
[ -z "$left" ] || fail "after SIGKILL, still running:$left"
echo "ok: after SIGKILL, the $(grep -vc '^workdir' "$work/pids3") processes it started have ended"
rm -rf "$(awk '$1 == "workdir" {print $2}' "$work/pids3")"  # the next demo would, as stale
echo PASS
