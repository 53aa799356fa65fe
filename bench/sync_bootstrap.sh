#!/usr/bin/env bash
# Peak number of unmatched packets held by clock-sync matching, with and without the
# two-phase bootstrap, on a skewed input: two hosts 1.7 s apart exchanging RPCs for a long
# time, with events lost on one CPU so that some packets never find their other half.
# Usage: bench/sync_bootstrap.sh [SECONDS] [LOSS_SHARE]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-60} LOSS=${2:-0.3}
GEN=${GEN:-build/tools/gen/waitpath-gen}
WAITPATH=${WAITPATH:-build/app/waitpath}
out=$(mktemp -d /var/tmp/waitpath-syncbench.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$GEN" --scenario tools/gen/scenarios/scale.toml --out "$out/t" --set scale.hosts=2 \
  --set duration="${SECS}s" \
  --set scale.event_rate=20000 --set loss.host=node01 --set loss.cpu=0 --set loss.share="$LOSS" \
  --set loss.chunk=200 >/dev/null
for mode in two-phase single-phase; do
  flag=""; [ "$mode" = single-phase ] && flag=--single-phase
  /usr/bin/time -f "%M" -o "$out/rss" "$WAITPATH" sync --json $flag "$out/t" >"$out/sync.json"
  python3 - "$mode" "$out/sync.json" "$(cat "$out/rss")" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[2])]
s = next(r for r in recs if r["type"] == "sync")
c = [r for r in recs if r["type"] == "clock"][-1]
print(f'{sys.argv[1]:13} peak unmatched {s["peak_pending"]:7}  expired {s["expired"]:6}  matched '
      f'{s["matched"]:7}  inversions {s["inversions"]}  {c["host"]} {c["quality"]} accuracy '
      f'{c["accuracy"]/1e3:.1f} us  peak RSS {int(sys.argv[3])/1024:.1f} MB')
PY
done
