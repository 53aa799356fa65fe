#!/usr/bin/env bash
# Issue 15's live targets, both readers in the same runs: `waitpath tail --relayd` reading
# natively (the default) and through babeltrace2, in turn (native, babeltrace2, native, …:
# paired runs), on real daemons (bench/live_latency.sh: a private lttng-relayd, a namespaced
# lttng-sessiond per host, waitpath-replay emitting through lttng-ust).
#   latency: the looped mutex convoy at live timer 200 ms; target p99 <= live timer + 100 ms;
#   CPU: the `scale` scenario replayed at HOSTS x RATE; waitpath's own user+sys CPU per event,
#        target <= 0.5 us/event (2 M events/s per core); natively also `waitpath live --all
#        --metrics` (MODE=metrics: how a fleet runs it, nothing printed per wait).
# Usage: bench/live_targets.sh [PAIRS] [SECONDS]   (root; default 3 pairs of 8 s runs)
# Writes bench/results/live_targets.json and prints the table docs/bench.md quotes.
# Environment: W, GEN, REPLAY as for bench/live_latency.sh; SCALE_CONFIGS (default
# "1:80000 4:100000").
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-3} SECS=${2:-8}
res=$(mktemp -d /tmp/waitpath-live-targets.XXXXXX)
trap 'rm -rf "$res"' EXIT
read -r -a configs <<<"${SCALE_CONFIGS:-1:80000 4:100000}"
for i in $(seq "$PAIRS"); do
  for d in native babeltrace2; do
    echo "live targets: pair $i, $d: latency" >&2
    DECODER=$d OUT="$res/latency_${d}_$i.json" bench/live_latency.sh 200000 "$SECS" >/dev/null \
      2>&1 ||
      echo "live targets: latency run $d $i failed" >&2
    for c in "${configs[@]}"; do
      hosts=${c%%:*} rate=${c##*:}
      echo "live targets: pair $i, $d: $hosts host(s) x $rate events/s" >&2
      SCENARIO=tools/gen/scenarios/scale.toml LOOPS=1 DECODER=$d \
        OUT="$res/scale_${d}_${hosts}_${rate}_$i.json" \
        GEN_ARGS="--set scale.hosts=$hosts --set scale.event_rate=$rate --set duration=${SECS}s" \
        bench/live_latency.sh 200000 "$SECS" >/dev/null 2>&1 || echo \
        "live targets: scale run $d $c $i failed" >&2
      if [ "$d" = native ]; then
        # The same replay read by `live --metrics`, how a fleet runs it: nothing printed per wait.
        echo "live targets: pair $i, $d, live --metrics: $hosts host(s) x $rate events/s" >&2
        SCENARIO=tools/gen/scenarios/scale.toml LOOPS=1 DECODER=$d MODE=metrics \
          OUT="$res/scale_metrics_${hosts}_${rate}_$i.json" \
          GEN_ARGS="--set scale.hosts=$hosts --set scale.event_rate=$rate --set duration=${SECS}s" \
          bench/live_latency.sh 200000 "$SECS" >/dev/null 2>&1 || echo \
          "live targets: metrics run $c $i failed" >&2
      fi
    done
  done
done
mkdir -p bench/results
python3 - "$res" "${configs[@]}" <<'PY'
import glob, json, os, statistics, sys
res, configs = sys.argv[1], sys.argv[2:]
def load(pattern):
    return [json.load(open(f)) for f in sorted(glob.glob(os.path.join(res, pattern)))]
def stat(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else None
def fmt(s, unit=""):
    return f"**{s[0]:g}{unit}** ({s[1]:g}–{s[2]:g})" if s else "–"
out = {"pairs": {}, "targets": []}
print("| run | reader | runs | p50 ms | p99 ms | waitpath µs/event | one core events/s |")
print("|---|---|---|---|---|---|---|")
rows = [("latency", "latency_{d}_*.json")] + [(f"scale {c.replace(':', ' × ')}/s",
                                               f"scale_{{d}}_{c.replace(':', '_')}_*.json")
                                              for c in configs]
for name, pattern in rows:
    for d in ("native", "babeltrace2", "metrics"):
        if d == "metrics" and name == "latency":
            continue
        runs = load(pattern.format(d=d))
        if not runs:
            print(f"| {name} | {d} | 0 | – | – | – | – |")
            continue
        p50, p99 = stat([r["p50_ms"] for r in runs]), stat([r["p99_ms"] for r in runs])
        us = stat([r.get("waitpath_cpu_us_per_event") for r in runs])
        ev = stat([r.get("one_core_events_per_s") for r in runs])
        out["pairs"][f"{name} {d}"] = {"runs": runs, "p50_ms": p50, "p99_ms": p99,
                                       "us_per_event": us}
        reader = "native, `live --metrics`" if d == "metrics" else d
        print(f"| {name} | {reader} | {len(runs)} | {fmt(p50)} | {fmt(p99)} | {fmt(us)} | "
              f"{fmt(ev)} |")
lat = out["pairs"].get("latency native")
if lat:
    timer_ms = lat["runs"][0]["live_timer_us"] / 1000
    out["targets"].append({"goal": f"live p99 latency <= live timer + 100 ms ({timer_ms + 100:g} "
                                   f"ms), native reader",
                           "measured": lat["p99_ms"][0], "met": lat["p99_ms"][0] <= timer_ms + 100})
for c in configs:
    s = out["pairs"].get(f"scale {c.replace(':', ' × ')}/s native")
    if s and s["us_per_event"]:
        out["targets"].append({"goal": f"live <= 0.5 us of waitpath CPU per event (2 M events/s "
                                       f"per core), {c.replace(':', ' × ')}/s",
                               "measured": s["us_per_event"][0],
                               "met": s["us_per_event"][0] <= 0.5})
    m = out["pairs"].get(f"scale {c.replace(':', ' × ')}/s metrics")
    if m and m["us_per_event"]:
        out["targets"].append({"goal": f"the same, `live --metrics` (nothing printed per wait), "
                                       f"{c.replace(':', ' × ')}/s",
                               "measured": m["us_per_event"][0],
                               "met": m["us_per_event"][0] <= 0.5})
print()
print("| goal | measured (median) | met |")
print("|---|---|---|")
for t in out["targets"]:
    print(f"| {t['goal']} | {t['measured']:g} | {'yes' if t['met'] else 'no'} |")
json.dump(out, open("bench/results/live_targets.json", "w"), indent=1)
PY
