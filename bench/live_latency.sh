#!/usr/bin/env bash
# End-to-end live latency: from the moment the replayer emits an event (through lttng-ust,
# a namespaced lttng-sessiond and a private lttng-relayd, live timer LIVE_US) to the moment
# `waitpath tail --json` prints the wait that event ended. p50/p99 over every wait.
# Usage: bench/live_latency.sh [LIVE_US] [SECONDS]   (root; writes bench/results/live_latency.json)
# Environment: SCENARIO (default mutex-convoy, looped to fill SECONDS), GEN_ARGS (extra
# waitpath-gen --set options), LOOPS (replay rounds), OUT (result file), DECODER (waitpath's
# --decoder: auto, the default, reads natively; babeltrace2), MODE (`tail`, the default: `waitpath
# tail --json` prints every wait, timed on arrival; `metrics`: `waitpath live --all --metrics`, how
# a fleet runs it, printing nothing per wait: CPU only, no latency).
set -euo pipefail
cd "$(dirname "$0")/.."
LIVE_US=${1:-200000} SECS=${2:-10}
W=${W:-build/app/waitpath} GEN=${GEN:-build/tools/gen/waitpath-gen} \
  REPLAY=${REPLAY:-build/tools/replay/waitpath-replay}
tmp=$(mktemp -d /tmp/waitpath-latency.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 1; rm -rf "$tmp"
}
trap cleanup EXIT
base=$((18000 + ($$ % 200) * 4))
SCENARIO=${SCENARIO:-tools/gen/scenarios/mutex-convoy.toml}  # default: ~100 ms of convoy, looped
LOOPS=${LOOPS:-$((SECS * 10))}
OUT=${OUT:-bench/results/live_latency.json}
# shellcheck disable=SC2086
"$GEN" --scenario "$SCENARIO" --out "$tmp/g" ${GEN_ARGS:-} >/dev/null
lttng-relayd -C tcp://127.0.0.1:$base -D tcp://127.0.0.1:$((base + 1)) \
  -L tcp://127.0.0.1:$((base + 2)) -o "$tmp/relay" \
  >/dev/null 2>&1 &
pids+=($!)
sleep 1
MODE=${MODE:-tail}
if [ "$MODE" = metrics ]; then
  "$W" live --relayd net://127.0.0.1:$((base + 2)) --all --metrics 127.0.0.1:$((base + 3)) \
    --decoder "${DECODER:-auto}" 2>"$tmp/tail.err" >/dev/null &
  : >"$tmp/tail.out"
else
  # Every line of tail's output is stamped with the wall clock when it arrives.
  # (Process substitution, not a pipe, so that $! is waitpath's pid and cleanup stops it.)
  "$W" tail --relayd net://127.0.0.1:$((base + 2)) --json --decoder "${DECODER:-auto}" \
    2>"$tmp/tail.err" > >(python3 -u -c '
import sys, time
for line in sys.stdin:
    print(time.time_ns(), line, end="", flush=True)' >"$tmp/tail.out") &
fi
pids+=($!)
wp=$!
WAITPATH_REPLAY_ANNOUNCE=1 bash tools/replay/replay-hosts.sh \
  -r net://127.0.0.1:$base:$((base + 1)) -l "$LIVE_US" \
  -R "$REPLAY" "$tmp/g" --start-delay-ms 2500 --speed 1 --loop "$LOOPS" >"$tmp/replay.log" 2>&1 &
pids+=($!)
# waitpath's own CPU time (user + system, from /proc), sampled until the session ends: with
# the event count it gives what one dedicated core could sustain, separately from the
# replayers and LTTng daemons that share this machine with it.
ticks=0
t0=$(date +%s.%N)
for _ in $(seq $((SECS * 10 + 200))); do
  ticks=$(awk '{print $14 + $15}' "/proc/$wp/stat" 2>/dev/null || echo "$ticks")
  grep -q "session ended" "$tmp/tail.err" 2>/dev/null && break
  sleep 0.1
done
sleep 1
ticks=$(awk '{print $14 + $15}' "/proc/$wp/stat" 2>/dev/null || echo "$ticks")
t1=$(date +%s.%N)
echo "$ticks $(getconf CLK_TCK) $t0 $t1 $LOOPS" >"$tmp/cpu"
mkdir -p bench/results
python3 - "$tmp/replay.log" "$tmp/tail.out" "$LIVE_US" "$OUT" "$tmp/g/truth.json" "$tmp/tail.err" \
  "$tmp/cpu" "$MODE" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
starts = {m.group(1): (int(m.group(2)), int(m.group(3)), float(m.group(4)))
          for m in re.finditer(r"host (\S+): first event at trace time (\d+) due at wall (\d+) "
                               r"speed ([0-9.e+-]+)", log)}
if not starts:
    sys.exit("bench: the replayer did not announce its start:\n" + log)
# Several hosts: wait times are in the reference host's clock; map them back to the waiting
# host's own clock (the replayer's timeline) with the generator's true clocks.
truth = json.load(open(sys.argv[5]))
clk = {c["host"]: (c["host_offset_ns"], c["drift_ppm"] * 1e-6) for c in truth["clocks"]}
epoch = truth["epoch_ns"]
m = re.search(r"clock of host (\S+) \(the reference\)", open(sys.argv[6]).read())
ref = m.group(1) if m else None
if m is None and len(clk) > 1:
    print("bench: waitpath did not say which host is the clock reference:\n"
          + open(sys.argv[6]).read(), file=sys.stderr)
def to_host(t, host):
    if ref is None or host == ref:
        return t
    true = epoch + (t - epoch - clk[ref][0]) / (1 + clk[ref][1])
    return epoch + clk[host][0] + (true - epoch) * (1 + clk[host][1])
lat, in_order = [], []
for line in open(sys.argv[2]):
    arrived, _, rec = line.partition(" ")
    r = json.loads(rec)
    if r.get("type") != "wait":
        continue
    first, wall0, speed = starts[r["host"]]
    emitted = wall0 + (to_host(r["end_ns"], r["host"]) - first) / speed
    lat.append((int(arrived) - emitted) / 1e6)
    in_order.append(lat[-1])
lat.sort()
metrics_mode = sys.argv[8] == "metrics"
if not lat and not metrics_mode:
    sys.exit("bench: no wait arrived")
res = {"live_timer_us": int(sys.argv[3]), "mode": sys.argv[8], "waits": len(lat), "p50_ms": None,
       "p99_ms": None}
if lat:
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    third = max(1, len(in_order) // 3)
    median = lambda xs: sorted(xs)[len(xs) // 2]
    res.update({"p50_ms": round(pick(0.5), 1), "p99_ms": round(pick(0.99), 1),
                "max_ms": round(lat[-1], 1),
                "p50_first_third_ms": round(median(in_order[:third]), 1),
                "p50_last_third_ms": round(median(in_order[-third:]), 1)})
    print(f"live timer {res['live_timer_us'] / 1000:.0f} ms: {res['waits']} waits, latency p50 "
          f"{res['p50_ms']} ms, p99 {res['p99_ms']} ms, max {res['max_ms']} ms (target p99 < live "
          f"timer + 200 ms); p50 first third {res['p50_first_third_ms']} ms, last third "
          f"{res['p50_last_third_ms']} ms")
ticks, hz, t0, t1, loops = open(sys.argv[7]).read().split()
cpu_s = int(float(ticks)) / int(hz)
events = sum(h["events"] for h in truth["hosts"]) * int(loops)
res.update({"events": events, "waitpath_cpu_s": round(cpu_s, 2),
            "wall_s": round(float(t1) - float(t0), 1),
            "waitpath_cpu_us_per_event": round(cpu_s / events * 1e6, 3) if events else None,
            "one_core_events_per_s": round(events / cpu_s) if cpu_s else None})
print(f"waitpath used {cpu_s:.2f} s of CPU for {events} events ({res['waitpath_cpu_us_per_event']} "
      f"us/event): one dedicated core would sustain about {res['one_core_events_per_s']} events/s")
json.dump(res, open(sys.argv[4], "w"))
PY
