#!/usr/bin/env bash
# Read throughput of `waitpath stats` against babeltrace2 decoding the same trace into the
# dummy sink, measured in one run (median of N repetitions each). Prints a table and writes
# bench/results/read_throughput.json. Usage: bench/read_throughput.sh [REPS] [TRACE...]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}; shift || true
WAITPATH=${WAITPATH:-build/app/waitpath}
SHARED=../shared/traces
traces=("$@")
if ((${#traces[@]} == 0)); then
  for t in many-threads scp_src scp_dest bug446190; do
    [ -d "$SHARED/$t" ] && traces+=("$SHARED/$t")
  done
fi
[ -x "$WAITPATH" ] || { echo "bench: $WAITPATH not built (run scripts/setup.sh)" >&2; exit 1; }

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo \
  "$e - $s" | bc -l; }

# babeltrace2's muxer rejects traces with timestamp regressions; single-stream traces are then
# read without it (source -> dummy), which is the same decoding work.
bt_cmd() {
  local dir=$1 streams
  streams=$(find "$dir" -maxdepth 1 -type f ! -name metadata | wc -l)
  if [ "$streams" -eq 1 ]; then
    echo babeltrace2 run --component=src:source.ctf.fs --params="inputs=[\"$dir\"]" \
      --component=d:sink.utils.dummy --connect=src:d
  else
    echo babeltrace2 "$dir" -o dummy
  fi
}

mkdir -p bench/results
json="["
printf "%-14s %10s %12s %12s %14s %14s %8s\n" trace events "bt2 s" "stats s" "bt2 ev/s" \
  "stats ev/s" ratio
for t in "${traces[@]}"; do
  events=$("$WAITPATH" stats --json "$t" | python3 \
    -c 'import sys,json; print(sum(json.loads(l)["events"] for l in sys.stdin))')
  read -r -a bt <<<"$(bt_cmd "$t")"
  bts=$(for _ in $(seq "$REPS"); do seconds "${bt[@]}"; done | median)
  wps=$(for _ in $(seq "$REPS"); do seconds "$WAITPATH" stats "$t"; done | median)
  name=$(basename "$t")
  printf "%-14s %10d %12.3f %12.3f %14.0f %14.0f %8.2f\n" "$name" "$events" "$bts" "$wps" \
    "$(echo "$events / $bts" | bc -l)" "$(echo "$events / $wps" | bc -l)" \
    "$(echo "$bts / $wps" | bc -l)"
  json+=$(printf '{"trace":"%s","events":%d,"babeltrace2_s":%.4f,"stats_s":%.4f},' "$name" \
    "$events" "$bts" "$wps")
done
json="${json%,}]"
echo "$json" >bench/results/read_throughput.json
echo "(ratio > 1: waitpath stats is faster than babeltrace2 -o dummy; median of $REPS runs;" \
  "$(nproc) cores)"
