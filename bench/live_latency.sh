#!/usr/bin/env bash
# End-to-end live latency: from the moment the replayer emits an event (through lttng-ust,
# a namespaced lttng-sessiond and a private lttng-relayd, live timer LIVE_US) to the moment
# `waitpath tail --json` prints the wait that event ended. p50/p99 over every wait.
# Usage: bench/live_latency.sh [LIVE_US] [SECONDS]   (root; writes bench/results/live_latency.json)
set -euo pipefail
cd "$(dirname "$0")/.."
LIVE_US=${1:-200000} SECS=${2:-10}
W=build/app/waitpath GEN=build/tools/gen/waitpath-gen REPLAY=build/tools/replay/waitpath-replay
tmp=$(mktemp -d /tmp/waitpath-latency.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 1; rm -rf "$tmp"; }
trap cleanup EXIT
base=$((18000 + ($$ % 200) * 4))
"$GEN" --scenario tools/gen/scenarios/mutex-convoy.toml --out "$tmp/g" >/dev/null  # ~100 ms of convoy, looped below
lttng-relayd -C tcp://127.0.0.1:$base -D tcp://127.0.0.1:$((base + 1)) -L tcp://127.0.0.1:$((base + 2)) -o "$tmp/relay" \
  >/dev/null 2>&1 &
pids+=($!)
sleep 1
# Every line of tail's output is stamped with the wall clock when it arrives.
"$W" tail --relayd net://127.0.0.1:$((base + 2)) --json 2>"$tmp/tail.err" |
  python3 -u -c '
import sys, time
for line in sys.stdin:
    print(time.time_ns(), line, end="", flush=True)' >"$tmp/tail.out" &
pids+=($!)
WAITPATH_REPLAY_ANNOUNCE=1 bash tools/replay/replay-hosts.sh -r net://127.0.0.1:$base:$((base + 1)) -l "$LIVE_US" \
  -R "$REPLAY" "$tmp/g" --start-delay-ms 2500 --speed 1 --loop "$((SECS * 10))" >"$tmp/replay.log" 2>&1 &
pids+=($!)
for _ in $(seq $((SECS * 10 + 200))); do grep -q "session ended" "$tmp/tail.err" 2>/dev/null && break; sleep 0.1; done
sleep 1
mkdir -p bench/results
python3 - "$tmp/replay.log" "$tmp/tail.out" "$LIVE_US" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
m = re.search(r"first event at trace time (\d+) due at wall (\d+) speed ([0-9.e+-]+)", log)
if not m:
    sys.exit("bench: the replayer did not announce its start:\n" + log)
first, wall0, speed = int(m.group(1)), int(m.group(2)), float(m.group(3))
lat = []
for line in open(sys.argv[2]):
    arrived, _, rec = line.partition(" ")
    r = json.loads(rec)
    if r.get("type") != "wait":
        continue
    emitted = wall0 + (r["end_ns"] - first) / speed
    lat.append((int(arrived) - emitted) / 1e6)
lat.sort()
if not lat:
    sys.exit("bench: no wait arrived")
pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
res = {"live_timer_us": int(sys.argv[3]), "waits": len(lat), "p50_ms": round(pick(0.5), 1), "p99_ms": round(pick(0.99), 1),
       "max_ms": round(lat[-1], 1)}
print(f"live timer {res['live_timer_us'] / 1000:.0f} ms: {res['waits']} waits, latency p50 {res['p50_ms']} ms, "
      f"p99 {res['p99_ms']} ms, max {res['max_ms']} ms (target p99 < live timer + 200 ms)")
json.dump(res, open("bench/results/live_latency.json", "w"))
PY
