#!/usr/bin/env bash
# CPU time (user+sys) of multi-host `analyze` read once (the default, --sync-passes 1) against
# the two-pass analysis (--sync-passes 2, with its decoded batches kept, and with
# --keep-decoded-mb 0: every event decoded twice), on generated `scale` traces of 4 and 16
# hosts. Runs alternate (one, two, two-keep-0, one, …) so that a busy period of this shared
# machine hits every variant; prints min/median/max per variant and the median of the
# pair-by-pair ratios one/two, and babeltrace2's CPU time on the same traces (one process
# per host, summed) for scale.
# Usage: bench/one_pass.sh [RUNS] [DURATION] [RATE]   (default 5 runs, 5s at 1,000,000 ev/s)
# Environment: WAITPATH, GEN (default build/...), BENCH_WORK (default a fresh /var/tmp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5} DURATION=${2:-5s} RATE=${3:-1000000}
GEN=${GEN:-build/tools/gen/waitpath-gen}
WAITPATH=${WAITPATH:-build/app/waitpath}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }
work=${BENCH_WORK:-$(mktemp -d /var/tmp/waitpath-onepass.XXXXXX)}
[ -n "${BENCH_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

# One run: "user+sys wall maxrss_kb" of the command, its output thrown away.
measure() {
  /usr/bin/time -f "%U %S %e %M" -o "$work/time" "$@" >/dev/null 2>&1
  awk '{printf "%.3f %.3f %d\n", $1 + $2, $3, $4}' "$work/time"
}

for hosts in 4 16; do
  trace="$work/scale-${hosts}h"
  [ -d "$trace" ] || "$GEN" --scenario tools/gen/scenarios/scale.toml --out "$trace" \
    --set duration="$DURATION" --set scale.event_rate="$RATE" --set scale.hosts="$hosts" >/dev/null
  args=(analyze --json --top 100000 "$trace")
  : >"$work/samples"
  "$WAITPATH" "${args[@]}" >/dev/null  # warm-up: page cache
  for ((i = 0; i < RUNS; i++)); do
    echo "one $(measure "$WAITPATH" "${args[@]}")" >>"$work/samples"
    echo "two $(measure "$WAITPATH" "${args[@]}" --sync-passes 2)" >>"$work/samples"
    echo "two-keep0 $(measure "$WAITPATH" "${args[@]}" --sync-passes 2 --keep-decoded-mb 0)" \
      >>"$work/samples"
  done
  bt2=0
  for host in "$trace"/*/; do
    bt2=$(awk -v a="$bt2" \
      -v b="$(measure babeltrace2 "$host" -o dummy | cut -d' ' -f1)" 'BEGIN { print a + b }')
  done
  events=$(python3 \
    -c "import json,sys; print(sum(h['events'] for h in json.load(open(sys.argv[1]))['hosts']))" \
    "$trace/truth.json")
  python3 - "$work/samples" "$hosts" "$events" "$bt2" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for name, cpu, wall, rss in rows:
    by.setdefault(name, []).append((float(cpu), float(wall), int(rss)))
bt2 = float(sys.argv[4])
print(f"scale {sys.argv[2]} hosts, {int(sys.argv[3]):,} events; babeltrace2 CPU {bt2:.2f} s (one "
      f"process per host, summed)")
print(f"  {'variant':10} {'CPU s min/median/max':>24} {'wall s median':>14} {'peak RSS MB':>12} "
      f"{'CPU/bt2':>8}")
for name in ("one", "two", "two-keep0"):
    s = by[name]
    cpu = sorted(x[0] for x in s)
    print(f"  {name:10} {cpu[0]:7.2f} {statistics.median(cpu):7.2f} {cpu[-1]:7.2f}   "
          f"{statistics.median(x[1] for x in s):12.2f} "
          f"{statistics.median(x[2] for x in s) / 1024:12.0f} {statistics.median(cpu) / bt2:8.2f}")
for other in ("two", "two-keep0"):
    ratios = sorted(a[0] / b[0] for a, b in zip(by["one"], by[other]))
    print(f"  CPU one/{other}, pair by pair: min {ratios[0]:.2f} median "
          f"{statistics.median(ratios):.2f} max {ratios[-1]:.2f}")
PY
done
