#!/usr/bin/env bash
# Edge records through a real nats-server with JetStream (docs/scale.md, "Figures"): RUNS runs
# of waitpath_bus_bench, each on a fresh server, as fast as the bus takes them (throughput) and
# at a fixed rate (latency at a load below saturation); nats-server's CPU per edge from
# /proc/PID/stat. Prints every run; docs/scale.md gives the medians.
# With REPLICAS=3 the bus is a three-node cluster (three nats-servers on loopback, the stream
# replicated x3); the nats-server CPU is the three nodes' together.
# Usage: [REPLICAS=1|3] bench/bus.sh [EDGES] [RATE_PER_S] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
EDGES=${1:-200000} RATE=${2:-20000} RUNS=${3:-5} REPLICAS=${REPLICAS:-1}
BENCH=${BENCH:-build/bench/waitpath_bus_bench}
command -v nats-server >/dev/null ||
  { echo "nats-server not installed (scripts/setup.sh)"; exit 1; }
[ "$REPLICAS" = 1 ] || [ "$REPLICAS" = 3 ] || { echo "REPLICAS is 1 or 3"; exit 1; }
tmp=$(mktemp -d /tmp/waitpath-bus-bench.XXXXXX)
servers=()
stop_servers() {
  local p
  for p in "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${servers[@]}"; do wait "$p" 2>/dev/null || true; done
  servers=()
}
trap 'stop_servers; rm -rf "$tmp"' EXIT
# shellcheck source=tests/live/nats_cluster.sh
. tests/live/nats_cluster.sh
port=$(free_ports 1)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
start_servers() {  # sets urls
  rm -rf "$tmp"/js "$tmp"/nats?
  urls=
  if [ "$REPLICAS" = 1 ]; then
    nats-server -a 127.0.0.1 -p "$port" -js -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
    servers+=($!)
    urls=nats://127.0.0.1:$port
    sleep 0.7
    return
  fi
  nats_cluster "$tmp" bench
  servers+=("${nats_pids[@]}")
  urls=$nats_urls
  sleep 0.7
}
run() {  # run LABEL RATE
  start_servers
  local before=0 after=0 p
  for p in "${servers[@]}"; do before=$((before + $(ticks "$p"))); done
  out=$("$BENCH" "$urls" "$EDGES" "$2" "$REPLICAS")
  for p in "${servers[@]}"; do after=$((after + $(ticks "$p"))); done
  stop_servers
  echo "$1: $out; nats-server cpu $(awk -v t=$((after - before)) -v n="$EDGES" \
    -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.2f", t / hz * 1e6 / n }') us/edge"
}
for i in $(seq "$RUNS"); do
  run "run $i, as fast as it goes" 0
  run "run $i, at $RATE/s" "$RATE"
done
