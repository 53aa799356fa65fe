#!/bin/bash
# Soak benchmark (not a test): `waitpath live` over a generated two-host system replayed
# live in a loop (real lttng-relayd and session daemons, as the live tests) for MINUTES
# (default 30), far longer than the 30 s retention. Samples waitpath's RSS and its history
# gauge every 10 s, and at the end checks every record it printed and every counter it
# served (tests/tools/check_records.py). Prints a JSON summary; writes the samples to
# OUT/soak-samples.tsv. Needs root. Usage: bench/soak_live.sh [-m MINUTES] [-b BUILD_DIR] [-o OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=30 build=build out=bench/results
while getopts "m:b:o:" opt; do
  case $opt in
    m) minutes=$OPTARG ;;
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "soak: needs root (namespaced session daemons)"; exit 2; }
W=$build/app/waitpath GEN=$build/tools/gen/waitpath-gen REPLAY=$build/tools/replay/waitpath-replay
mkdir -p "$out"
# shellcheck source=tests/live/daemons.sh
. tests/live/daemons.sh
live_setup soak 21000
metrics=127.0.0.1:$((base + 3))
scrape() { python3 -c \
  "import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(
    'http://$metrics/metrics', timeout=10).read().decode())"; }
metric() { awk -v n="$1" '$1 == n {print $2}'; }

"$GEN" --scenario tools/gen/scenarios/scale.toml --out "$tmp/set" --set duration=10s \
  --set scale.hosts=2 \
  --set scale.tasks_per_host=6 --set scale.event_rate=30000 >/dev/null
start_relayd a
"$W" live --relayd "$live_url" --all --json --metrics "$metrics" >"$tmp/live.out" \
  2>"$tmp/live.err" &
live=$!
pids+=("$live")
bash tools/replay/replay-hosts.sh -r "$relayd_url" -s soak -R "$REPLAY" "$tmp/set" --forever \
  >"$tmp/replay.log" 2>&1 &
replay=$!
pids+=("$replay")

printf 'seconds\trss_kb\thistory_bytes\tevents\n' >"$out/soak-samples.tsv"
end=$((SECONDS + minutes * 60))
while [ $SECONDS -lt $end ]; do
  sleep 10
  kill -0 "$live" 2>/dev/null || { echo "soak: waitpath exited"; cat "$tmp/live.err"; exit 1; }
  m=$(scrape 2>/dev/null || true)
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/$live/status)
  hist=$(echo "$m" | metric waitpath_history_bytes)
  events=$(echo "$m" | awk '$1 ~ /^waitpath_events_total/ {s += $2} END {print s + 0}')
  printf '%s\t%s\t%s\t%s\n' "$SECONDS" "$rss" "${hist:-0}" "$events" >>"$out/soak-samples.tsv"
done
scrape >"$tmp/metrics.txt"
kill -TERM "$replay"
wait "$replay" 2>/dev/null || true
sleep 8  # the sessions' last data and their end
kill -INT "$live"
wait "$live" || { echo "soak: waitpath exited $?"; cat "$tmp/live.err"; exit 1; }
check=$(python3 tests/tools/check_records.py "$tmp/live.out" --metrics "$tmp/metrics.txt" 2>&1) &&
  ok=true || ok=false
python3 - "$out/soak-samples.tsv" "$minutes" "$ok" "$check" "$tmp/metrics.txt" <<'PY'
import json, statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
rss = [int(r[1]) for r in rows]
hist = [float(r[2]) for r in rows]
ev = [float(r[3]) for r in rows]
m = {}
for line in open(sys.argv[5]):
    if line.startswith("#") or not line.strip():
        continue
    name, value = line.rsplit(" ", 1)
    key = name.split("{")[0]
    m[key] = m.get(key, 0) + float(value)
third = max(1, len(rss) // 3)
print(json.dumps({
    "minutes": float(sys.argv[2]), "samples": len(rows), "events": ev[-1] if ev else 0,
    "rss_mb": {"first": rss[0] / 1024, "min": min(rss) / 1024,
               "median": statistics.median(rss) / 1024,
               "max": max(rss) / 1024, "last": rss[-1] / 1024,
               "median_first_third": statistics.median(rss[:third]) / 1024,
               "median_last_third": statistics.median(rss[-third:]) / 1024},
    "history_mb": {"median": statistics.median(hist) / 2**20, "max": max(hist) / 2**20},
    "evicted_reads": m.get("waitpath_history_evicted_reads_total", 0),
    "events_discarded": m.get("waitpath_events_discarded_total", 0),
    "invariants_ok": sys.argv[3] == "true", "check": sys.argv[4],
}, indent=1))
PY
