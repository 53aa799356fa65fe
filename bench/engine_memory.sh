#!/usr/bin/env bash
# Peak memory and throughput of `waitpath analyze` on generated traces of 1x and 10x the
# duration at the same event rate (memory must stay flat: eviction by --retention), with
# babeltrace2 -o dummy on the same traces for reference. Writes bench/results/engine_memory.json.
# Usage: bench/engine_memory.sh [HOSTS] [RATE] [SECONDS_1X] [RETENTION]
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTS=${1:-1} RATE=${2:-200000} SECS=${3:-5} RETENTION=${4:-1s}
GEN=${GEN:-build/tools/gen/waitpath-gen}
WAITPATH=${WAITPATH:-build/app/waitpath}
[ -x "$GEN" ] && [ -x "$WAITPATH" ] || { echo "bench: build first (scripts/setup.sh)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/waitpath-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

measure() {  # prints "max_rss_kb wall_s"
  /usr/bin/time -f "%M %e" -o "$work/time" "$@" >/dev/null 2>"$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  cat "$work/time"
}

mkdir -p bench/results
printf "%-5s %10s %10s %12s %12s %10s %10s\n" scale events "rss MB" "analyze s" "bt2 s" "ev/s" \
  "bt2 ratio"
json="["
for mult in 1 10; do
  dur=$((SECS * mult))
  out="$work/x$mult"
  "$GEN" --scenario tools/gen/scenarios/scale.toml --out "$out" --set duration="${dur}s" \
    --set scale.event_rate="$RATE" --set scale.hosts="$HOSTS" >/dev/null
  events=$(python3 \
    -c "import json; print(sum(h['events'] for h in json.load(open('$out/truth.json'))['hosts']))")
  read -r rss wall <<<"$(measure "$WAITPATH" analyze --json --retention "$RETENTION" "$out")"
  if [ "$HOSTS" -eq 1 ]; then bt_dir=$(ls -d "$out"/*/ | head -1); else bt_dir=$out; fi
  read -r _ btwall <<<"$(measure babeltrace2 "$bt_dir" -o dummy)"
  [ "$HOSTS" -eq 1 ] ||
    btwall=$(for d in "$out"/*/; do measure babeltrace2 "$d" -o dummy | cut -d' ' -f2; done |
    paste -sd+ | bc)
  printf "%-5s %10d %10.1f %12.2f %12.2f %10.0f %10.2f\n" "${mult}x" "$events" \
    "$(echo "$rss/1024" | bc -l)" "$wall" \
    "$btwall" "$(echo "$events/$wall" | bc -l)" "$(echo "$wall/$btwall" | bc -l)"
  json+=$(printf \
    '{"scale":%d,"hosts":%d,"events":%d,"max_rss_kb":%d,"analyze_s":%s,"babeltrace2_s":%s},' \
    "$mult" "$HOSTS" "$events" "$rss" "$wall" "$btwall")
  rm -rf "$out"
done
echo "${json%,}]" >bench/results/engine_memory.json
echo "(retention $RETENTION; bt2 ratio = analyze time / babeltrace2 -o dummy time; $(nproc) cores)"
