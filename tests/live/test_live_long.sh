#!/bin/bash
# waitpath live over a session far longer than its retention, with real daemons (a private
# lttng-relayd, one namespaced lttng-sessiond per replayed host; the kernel tracer cannot run
# here, so a generated two-host trace is replayed as UST events by waitpath-replay, looped,
# the same tids coming back every round): with --retention 1us, far shorter than its waits and the
# replayed 10 rounds of trace, every record keeps the invariants (tests/tools/check_records.py), no
# metric counter is negative, and the reads into evicted history are counted.
# usage: test_live_long.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup live-long 19400
metrics=127.0.0.1:$((base + 3))
start_relayd a

"$GEN" --scenario "$SRC/tools/gen/scenarios/rpc.toml" --out "$tmp/set" >/dev/null
"$W" live --relayd "$live_url" --all --json --min-wait 0ns --retention 1us --metrics "$metrics" \
  >"$tmp/live.out" 2>"$tmp/live.err" &
live=$!
pids+=("$live")
bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s long -R "$REPLAY" "$tmp/set" \
  --speed 0.1 --loop 10 \
  >"$tmp/replay.log" 2>&1 &
pids+=($!)
deadline=$((SECONDS + 150))
until [ "$(grep -c 'session ended' "$tmp/live.err" || true)" -ge 2 ]; do
  [ $SECONDS -lt $deadline ] ||
    { echo "FAIL: sessions did not end"; cat "$tmp/live.err" "$tmp/replay.log"; exit 1; }
  sleep 1
done
python3 - "$metrics" "$tmp/metrics.txt" <<'PY'
import sys, urllib.request
open(sys.argv[2], "w").write(
    urllib.request.urlopen(f"http://{sys.argv[1]}/metrics", timeout=10).read().decode())
PY
kill -INT "$live"
wait "$live" || { echo "FAIL: live exited $?"; cat "$tmp/live.err"; exit 1; }
python3 "$SRC/tests/tools/check_records.py" "$tmp/live.out" --metrics "$tmp/metrics.txt" ||
  { echo "FAIL: invariants"; exit 1; }
evicted=$(awk '/^waitpath_history_evicted_reads_total/ {print $2}' "$tmp/metrics.txt")
waits=$(grep -c '"type":"wait"' "$tmp/live.out" || true)
echo "waits: $waits, evicted reads: ${evicted:-none}"
[ "$waits" -gt 100 ] || { echo "FAIL: too few waits"; exit 1; }
# The reads into evicted history are the client's waits on the server's packets: they need the
# two hosts synchronized, which a looped replay keeps only with each host's true period (the
# script passes it from truth.json; without it the sync failed in 1 run of 3, and no evicted
# read was counted, twice in CI).
grep -q '^waitpath_clock_sync_quality{host="server-host",quality="accurate"} 1' "$tmp/metrics.txt" \
  || {
  echo "FAIL: server-host's clock is not accurate"
  grep -E 'clock' "$tmp/live.err" "$tmp/metrics.txt"
  exit 1
}
# And live said so, even when the second host attached after the first clocks were set.
grep -q '^waitpath: server-host: clock accurate' "$tmp/live.err" ||
  { echo "FAIL: live did not say server-host's clock"; cat "$tmp/live.err"; exit 1; }
awk -v e="${evicted:-0}" 'BEGIN { exit !(e > 0) }' || {
  echo "FAIL: no evicted read counted"
  tail -20 "$tmp/live.err"
  grep -E '^waitpath_(history|sync|hosts?_|events_lost|waits_resolved)' "$tmp/metrics.txt" |
    head -40
  exit 1
}
echo "OK"
