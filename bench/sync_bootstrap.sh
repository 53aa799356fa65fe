#!/usr/bin/env bash
# Peak number of unmatched packets held by clock-sync matching, with and without the
# two-phase bootstrap, on a skewed input: hosts seconds apart, a long exchange, and events
# lost on the server so that some packets never find their other half.
# Usage: bench/sync_bootstrap.sh [CALLS] [LOSS_SHARE]
set -euo pipefail
cd "$(dirname "$0")/.."
CALLS=${1:-20000} LOSS=${2:-0.2}
GEN=${GEN:-build/tools/gen/waitpath-gen}
WAITPATH=${WAITPATH:-build/app/waitpath}
out=$(mktemp -d /var/tmp/waitpath-syncbench.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$GEN" --scenario tools/gen/scenarios/rpc.toml --out "$out/t" --set duration=120s \
  --set "hosts.0.tasks.0.script.0=repeat $CALLS" --set loss.host=server-host --set loss.cpu=0 \
  --set loss.share="$LOSS" --set loss.chunk=50 >/dev/null
python3 - "$out/t/truth.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
print("trace:", sum(h["events"] for h in t["hosts"]), "events,", sum(h["discarded"] for h in t["hosts"]), "discarded;",
      ", ".join(f'{c["host"]} {c["host_offset_ns"]/1e9:+.2f} s {c["drift_ppm"]:+.0f} ppm' for c in t["clocks"]))
PY
for mode in two-phase single-phase; do
  flag=""; [ "$mode" = single-phase ] && flag=--single-phase
  /usr/bin/time -f "%M" -o "$out/rss" "$WAITPATH" sync --json $flag "$out/t" >"$out/sync.json"
  python3 - "$mode" "$out/sync.json" "$(cat "$out/rss")" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[2])]
s = next(r for r in recs if r["type"] == "sync")
c = [r for r in recs if r["type"] == "clock"][-1]
print(f'{sys.argv[1]:13} peak unmatched {s["peak_pending"]:7}  expired {s["expired"]:7}  matched {s["matched"]:7}  '
      f'inversions {s["inversions"]}  {c["host"]} {c["quality"]} accuracy {c["accuracy"]/1e3:.1f} us  peak RSS {int(sys.argv[3])/1024:.1f} MB')
PY
done
