#!/usr/bin/env bash
# Edge records through a real nats-server with JetStream (docs/scale.md, "Figures"): RUNS runs
# of waitpath_bus_bench, each on a fresh server, as fast as the bus takes them (throughput) and
# at a fixed rate (latency at a load below saturation); nats-server's CPU per edge from
# /proc/PID/stat. Prints every run; docs/scale.md gives the medians.
# Usage: bench/bus.sh [EDGES] [RATE_PER_S] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
EDGES=${1:-200000} RATE=${2:-20000} RUNS=${3:-5}
BENCH=${BENCH:-build/bench/waitpath_bus_bench}
command -v nats-server >/dev/null || { echo "nats-server not installed (scripts/setup.sh)"; exit 1; }
tmp=$(mktemp -d /tmp/waitpath-bus-bench.XXXXXX)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
port=$((25000 + $$ % 1000))
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() {  # run LABEL RATE
  rm -rf "$tmp/js"
  nats-server -a 127.0.0.1 -p "$port" -js -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
  server=$!
  sleep 0.7
  local before after
  before=$(ticks "$server")
  out=$("$BENCH" "nats://127.0.0.1:$port" "$EDGES" "$2")
  after=$(ticks "$server")
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  echo "$1: $out; nats-server cpu $(awk -v t=$((after - before)) -v n="$EDGES" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.2f", t / hz * 1e6 / n }') us/edge"
}
for i in $(seq "$RUNS"); do
  run "run $i, as fast as it goes" 0
  run "run $i, at $RATE/s" "$RATE"
done
