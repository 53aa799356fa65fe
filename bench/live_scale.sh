#!/usr/bin/env bash
# Live scale: hosts x event rate that the whole pipeline on this machine (replayers, one
# lttng-sessiond per host, lttng-relayd and waitpath live, all on its 2 cores) keeps up with.
# A configuration keeps up when the latency at the end of the run is no worse than at its
# start (no growing lag) and the median stays within a second of the live timer. waitpath's
# own CPU time per event gives what one core dedicated to it would sustain (the replayers and
# daemons use the rest of the machine here).
# Usage: bench/live_scale.sh [--decoder auto|native|babeltrace2] [SECONDS] [HOSTS:RATE...]   (root)
# (default configurations below; results in bench/results/live_scale_[DECODER_]HOSTS_RATE.json)
set -euo pipefail
cd "$(dirname "$0")/.."
DECODER=auto
if [ "${1:-}" = --decoder ]; then DECODER=$2; shift 2; fi
SECS=${1:-10}
shift || true
configs=("1 20000" "2 20000" "4 20000" "1 80000" "2 80000" "4 80000" "4 200000" "4 400000")
[ $# -gt 0 ] && configs=("${@/:/ }")
mkdir -p bench/results
printf "%-6s %12s %8s %9s %9s %12s %12s %-13s %10s %14s\n" hosts "events/s" waits "p50 ms" \
  "p99 ms" "p50 start" \
  "p50 end" verdict "us/event" "1 core ev/s"
for cfg in "${configs[@]}"; do
  read -r hosts rate <<<"$cfg"
  out="bench/results/live_scale_${hosts}_${rate}.json"
  [ "$DECODER" = auto ] || out="bench/results/live_scale_${DECODER}_${hosts}_${rate}.json"
  SCENARIO=tools/gen/scenarios/scale.toml LOOPS=1 OUT="$out" DECODER="$DECODER" \
    GEN_ARGS="--set scale.hosts=$hosts --set scale.event_rate=$rate --set duration=${SECS}s" \
    bench/live_latency.sh 200000 "$SECS" >/dev/null 2>&1 ||
    { echo "$hosts $rate: run failed"; continue; }
  python3 - "$out" "$hosts" "$rate" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
# No growing lag (the last third's median latency within 200 ms of the first third's, or
# better), and a bounded one (the median within a second of the live timer).
keeps = (r["p50_last_third_ms"] <= r["p50_first_third_ms"] + 200 and
         r["p50_ms"] <= r["live_timer_us"] / 1000 + 1000)
print(f'{sys.argv[2]:<6} {int(sys.argv[3]):>12} {r["waits"]:>8} {r["p50_ms"]:>9} {r["p99_ms"]:>9} '
      f'{r["p50_first_third_ms"]:>12} {r["p50_last_third_ms"]:>12} '
      f'{"keeps up" if keeps else "falls behind":<13} {r["waitpath_cpu_us_per_event"]:>10} '
      f'{r["one_core_events_per_s"]:>14}')
PY
done
