#!/usr/bin/env bash
# waitpath live end to end with real daemons (a private lttng-relayd, one namespaced
# lttng-sessiond per replayed host; the kernel tracer cannot run here, so recorded kernel
# traces are replayed as UST events by waitpath-replay):
#  1. a relayd that is not there at start: a clear message, clean stop on SIGTERM;
#  2. two hosts streaming: `live --all --json` equals `analyze --json` on the original traces,
#     read by the native decoder (the default) and again by babeltrace2 (`--decoder
#     babeltrace2`, the same replay in another session), whose outputs are the same lines;
#  3. the relayd killed mid-stream: reported once per host however long it stays away (the
#     failed attempts only counted), waitpath keeps running; after a restart, each reader
#     reports its reattach once, the reconnect counter counts those (not the attempts), new
#     sessions are picked up and their results are correct.
# usage: test_live.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup live-test 16000
stop_and_wait() {  # stop_and_wait PID SIGNAL: must exit 0 within 15 s
  kill "-$2" "$1"
  for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then echo "FAIL: waitpath did not stop on SIG$2"; return 1; fi
  wait "$1"
}
task_records() { grep '"type":"task"' "$1" | sort; }
metric() {  # metric ADDR NAME: the sum of NAME's series scraped from ADDR (0 when absent)
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
print(int(sum(float(l.rsplit(" ", 1)[1]) for l in body.splitlines()
              if l.startswith(sys.argv[2] + "{"))))
PY
}

"$GEN" --scenario "$SRC/tools/gen/scenarios/fork-chain.toml" --out "$tmp/g1" >/dev/null
"$GEN" --scenario "$SRC/tools/gen/scenarios/cpu-contention.toml" --out "$tmp/g2" >/dev/null
mkdir -p "$tmp/set"
cp -r "$tmp/g1/forkhost" "$tmp/g2/busy" "$tmp/set/"
"$W" analyze --json "$tmp/set" >"$tmp/analyze.json"

echo "1. no relayd at start"
"$W" live --relayd "$live_url" --all --json >"$tmp/l1.out" 2>"$tmp/l1.err" &
l1=$!
pids+=("$l1")
wait_for "$tmp/l1.err" "cannot list the sessions of relayd" 1 10
stop_and_wait "$l1" TERM
[ "$(grep -c 'cannot list' "$tmp/l1.err")" -eq 1 ] ||
  { echo "FAIL: the message repeats"; cat "$tmp/l1.err"; exit 1; }

echo "2. two hosts streaming live"
start_relayd a
"$W" live --relayd "$live_url" --all --json >"$tmp/l2.out" 2>"$tmp/l2.err" &
l2=$!
pids+=("$l2")
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s first -R "$REPLAY" "$tmp/set" \
  --start-delay-ms 4000 --speed 0.2 \
  >"$tmp/r2.log" 2>&1 &
pids+=($!)
wait_for "$tmp/l2.err" "session ended" 2 60
stop_and_wait "$l2" INT
if ! diff <(task_records "$tmp/analyze.json") <(task_records "$tmp/l2.out") >"$tmp/diff2"; then
  echo "FAIL: live differs from analyze"; head -20 "$tmp/diff2"; exit 1
fi
[ "$(task_records "$tmp/l2.out" | wc -l)" -gt 0 ] || { echo "FAIL: no task records"; exit 1; }
grep -q 'read with babeltrace2' "$tmp/l2.err" &&
  { echo "FAIL: the native decoder fell back:"; cat "$tmp/l2.err"; exit 1; }

echo "2b. the same, read by babeltrace2"
"$W" live --relayd "$live_url" --session first-bt --json --decoder babeltrace2 >"$tmp/l2b.out" \
  2>"$tmp/l2b.err" &
l2b=$!
pids+=("$l2b")
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s first-bt -R "$REPLAY" "$tmp/set" \
  --start-delay-ms 4000 --speed 0.2 \
  >"$tmp/r2b.log" 2>&1 &
pids+=($!)
wait_for "$tmp/l2b.err" "(session first-bt): session ended" 2 60
stop_and_wait "$l2b" INT
if ! diff <(task_records "$tmp/analyze.json") <(task_records "$tmp/l2b.out") >"$tmp/diff2b"; then
  echo "FAIL: live (babeltrace2) differs from analyze"; head -20 "$tmp/diff2b"; exit 1
fi
# Every record the same with either decoder, not only the task records.
if ! diff <(sort "$tmp/l2.out") <(sort "$tmp/l2b.out") >"$tmp/diff2n"; then
  echo "FAIL: the native and babeltrace2 live readers differ"; head -20 "$tmp/diff2n"; exit 1
fi

echo "3. relayd killed mid-stream and restarted"
metrics=127.0.0.1:$((base + 3))
"$W" live --relayd "$live_url" --all --json --metrics "$metrics" >"$tmp/l3.out" 2>"$tmp/l3.err" &
l3=$!
pids+=("$l3")
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s second -R "$REPLAY" "$tmp/set" \
  --speed 0.2 --loop 20 \
  >"$tmp/r3.log" 2>&1 &
r3=$!
pids+=("$r3")
wait_for "$tmp/l3.err" "following session second" 2 30
sleep 2
kill -KILL "$relayd"
wait_for "$tmp/l3.err" "lost the relayd; reattaching" 2 20
kill -TERM "$r3" 2>/dev/null || true
sleep 2
# Away for 2 s: attempts failed (250 ms after the loss, then 500 ms, 1 s) and none reconnected.
failed=$(metric "$metrics" waitpath_relayd_reconnect_failures_total)
reconnects=$(metric "$metrics" waitpath_relayd_reconnects_total)
[ "$failed" -ge 2 ] && [ "$reconnects" -eq 0 ] ||
  { echo "FAIL: relayd away: $failed failed attempts (want >= 2)," \
      "$reconnects reconnects (want 0)"; exit 1; }
start_relayd b
wait_for "$tmp/l3.err" "reachable" 1 20 || true  # the relayd query may not have failed in between
# Both readers reattach (their sessions are gone from the new relayd: let go 5 s later).
wait_for "$tmp/l3.err" "reattached to the relayd" 2 20
reconnects=$(metric "$metrics" waitpath_relayd_reconnects_total)
[ "$reconnects" -eq 2 ] || { echo "FAIL: $reconnects reconnects, want 2 (one per reader)"; exit 1; }
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s third -R "$REPLAY" "$tmp/set" \
  --start-delay-ms 4000 --speed 0.2 \
  >"$tmp/r4.log" 2>&1 &
pids+=($!)
wait_for "$tmp/l3.err" "following session third" 2 30
wait_for "$tmp/l3.err" "(session third): session ended" 2 60
stop_and_wait "$l3" INT
# One loss reported per reader, however many attempts it took; one reattach.
[ "$(grep -c 'lost the relayd' "$tmp/l3.err")" -eq 2 ] &&
  [ "$(grep -c 'reattached to the relayd' "$tmp/l3.err")" -eq 2 ] ||
  { echo "FAIL: each loss and each reattach is said once per reader:"; cat "$tmp/l3.err"; exit 1; }
# After the gap: the new sessions' hosts give exactly the original results.
if ! python3 - "$tmp/analyze.json" "$tmp/l3.out" <<'PY'
import json, sys
want = sorted(l for l in open(sys.argv[1]) if '"type":"task"' in l)
got = set(l for l in open(sys.argv[2]) if '"type":"task"' in l)
missing = [l for l in want if l not in got]
sys.exit(1 if missing else 0)
PY
then
  echo "FAIL: after the restart, results differ from analyze"; exit 1
fi
echo "OK"
