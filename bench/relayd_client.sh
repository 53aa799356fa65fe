#!/usr/bin/env bash
# CPU of fetching a live session: the native viewer client (waitpath-relayd-dump --discard:
# the protocol alone, nothing decoded or written) against babeltrace2's lttng-live with
# `-o dummy` (fetch and decode), and `waitpath live --json` (fetch, decode, analyse; only task
# records are printed, at the end) reading with each decoder, on the same live session, in
# turn, RUNS times each, each attached for SECONDS (seek last). Then one window of each
# counted (events, packets), for the per-event and per-packet figures. Needs root (namespaced
# session daemon).
# Usage: bench/relayd_client.sh [SECONDS] [RUNS]   Environment: SPEED (replay speed, 100).
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-10} RUNS=${2:-5}
DUMP=${DUMP:-build/tools/relayd_dump/waitpath-relayd-dump} W=${W:-build/app/waitpath}
GEN=${GEN:-build/tools/gen/waitpath-gen} REPLAY=${REPLAY:-build/tools/replay/waitpath-replay}
. tests/lib.sh
. tests/live/daemons.sh
live_setup relayd-client-bench 23000
start_relayd a
"$GEN" --scenario tools/gen/scenarios/rpc.toml --out "$tmp/set" >/dev/null
tools/replay/replay-hosts.sh -r "$relayd_url" -s bench -H server-host -R "$REPLAY" -b 64k:8 \
  -w "$tmp/w" "$tmp/set" --forever --speed "${SPEED:-100}" >"$tmp/replay.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -e "$tmp/w/server-host/ready" ] && break; sleep 0.1; done
url=$live_url/host/server-host/bench
cpu() { /usr/bin/time -f "%U %S" -o "$tmp/t" "$@" >/dev/null 2>&1 || true; tail -1 "$tmp/t" |
  awk '{print $1 + $2}'; }
for i in $(seq "$RUNS"); do
  a=$(cpu timeout -s INT "$SECS" "$DUMP" --relayd "$live_url" --session bench --seek last --discard)
  b=$(cpu timeout -s INT "$SECS" babeltrace2 --input-format=lttng-live "$url" -o dummy)
  c=$(cpu timeout -s INT "$SECS" "$W" live --relayd "$live_url" --session bench --json \
    --decoder native)
  d=$(cpu timeout -s INT "$SECS" "$W" live --relayd "$live_url" --session bench --json \
    --decoder babeltrace2)
  echo "run $i: client ${a}s cpu, babeltrace2 ${b}s cpu, live native ${c}s cpu," \
    "live babeltrace2 ${d}s cpu (${SECS}s attached each)"
done
timeout -s INT "$SECS" "$DUMP" --relayd "$live_url" --session bench --seek last --out "$tmp/d" \
  2>&1 | sed 's/^/client window: /' || true
echo "client window events: $(babeltrace2 "$(dirname "$(find "$tmp/d" -name metadata)")" \
  -c sink.utils.counter 2>&1 | grep 'Event messages' | tail -1)"
echo "babeltrace2 window: $(timeout -s INT "$SECS" babeltrace2 --input-format=lttng-live "$url" \
  -c sink.utils.counter 2>&1 | grep -E 'Event messages|Packet beginning' | tail -2 |
  tr -s ' \n' ' ')"
