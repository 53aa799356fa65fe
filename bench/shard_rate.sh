#!/usr/bin/env bash
# Cross-shard waits one shard resolves per second (docs/scale.md, "Figures"): RUNS runs of
# waitpath_shard_rate_bench per poll interval of the answering shard, each on a fresh local
# nats-server with JetStream, and once over the in-memory bus (the analysis alone, no server).
# Usage: bench/shard_rate.sh [WAITS] [RUNS] [POLL_US...]
set -euo pipefail
cd "$(dirname "$0")/.."
WAITS=${1:-4000} RUNS=${2:-3}
shift $(($# < 2 ? $# : 2))
POLLS=("$@")
[ ${#POLLS[@]} -gt 0 ] || POLLS=(200 1000 10000)
BENCH=${BENCH:-build/bench/waitpath_shard_rate_bench}
command -v nats-server >/dev/null ||
  { echo "nats-server not installed (scripts/setup.sh)"; exit 1; }
tmp=$(mktemp -d /tmp/waitpath-shard-rate.XXXXXX)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$tmp"' EXIT
# shellcheck source=tests/live/nats_cluster.sh
. tests/live/nats_cluster.sh
for poll in "${POLLS[@]}"; do
  "$BENCH" memory "$WAITS" "$poll" | head -1
  for _ in $(seq "$RUNS"); do
    port=$(free_ports 1)
    rm -rf "$tmp/js"
    nats-server -a 127.0.0.1 -p "$port" -js -sd "$tmp/js" >"$tmp/nats.log" 2>&1 &
    server=$!
    sleep 0.7
    "$BENCH" "nats://127.0.0.1:$port" "$WAITS" "$poll" | head -1
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=""
  done
done
