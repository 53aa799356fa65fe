#!/usr/bin/env bash
# A live session created again under the same name is followed again, as the same host: the
# systemd service's session script (configs/lttng/waitpath-session.sh) always names it
# `waitpath`, so without this the service went blind after any restart of a host's session or
# of the relayd. Real daemons: a private lttng-relayd, one namespaced lttng-sessiond for the
# replayed host; `waitpath live` runs with the packaged configuration (configs/waitpath.toml),
# only its relayd and metrics addresses changed.
#  1. the host's session ends and is created again: followed again, once, its events analysed;
#  2. the relayd is killed and started again, the session created anew: the same.
# Each round replays the same scenario shifted 10 s later in the host's clock, as a host's
# clock goes on between two sessions.
# usage: test_live_recreated.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
# shellcheck source=tests/lib.sh
. "$SRC/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup live-recreated 21000
metrics_port=$((base + 5))

# Round N: the fork-chain scenario with its epoch N x 10 s later.
for n in 1 2 3 4; do
  sed "s/^duration = .*/&\nepoch_ns = $((1700000000 + 10 * n))000000000/" \
    "$SRC/tools/gen/scenarios/fork-chain.toml" >"$tmp/round$n.toml"
  "$GEN" --scenario "$tmp/round$n.toml" --out "$tmp/round$n" >/dev/null
done
# The task records whose task started in round N's epoch.
round_records() {
  local from=$((1700000000 + 10 * $1))000000000 to=$((1700000000 + 10 * $1 + 10))000000000
  grep '"type":"task"' "$tmp/live.out" |
    sed -n 's/.*"start_ns":\([0-9]*\).*/\1/p' |
    awk -v f="$from" -v t="$to" '$1 >= f && $1 < t' | wc -l
}
events() {  # waitpath_events_total of host forkhost
  python3 - "127.0.0.1:$metrics_port" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
print(sum(int(float(l.rsplit(" ", 1)[1])) for l in body.splitlines()
          if l.startswith("waitpath_events_total{") and 'host="forkhost"' in l))
PY
}
# waitpath_events_total once it stops moving: "session ended" is said when the host's last
# batch arrives, before its events are merged and counted.
settled() {
  local last=-1 now same=0
  for _ in $(seq 75); do
    now=$(events)
    if [ "$now" = "$last" ]; then
      same=$((same + 1))
      [ "$same" -ge 5 ] && break
    else
      same=0 last=$now
    fi
    sleep 0.2
  done
  echo "$last"
}
replay() {  # replay ROUND [replay options]: the round's host streams as session `waitpath`
  local n=$1
  shift
  bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s waitpath -R "$REPLAY" \
    -w "$tmp/w$n" "$tmp/round$n" "$@" >"$tmp/replay$n.log" 2>&1 &
  replayer=$!
  pids+=("$replayer")
}

start_relayd a
sed -e "s|^relayd = .*|relayd = \"$live_url\"|" \
  -e "s|^metrics = .*|metrics = \"127.0.0.1:$metrics_port\"|" \
  -e 's|^watch = .*|watch = ["comm=.*"]|' "$SRC/configs/waitpath.toml" >"$tmp/waitpath.toml"
"$W" --config "$tmp/waitpath.toml" live --json >"$tmp/live.out" 2>"$tmp/live.err" &
live=$!
pids+=("$live")

echo "1. the host's session ends, then is created again"
replay 1 --start-delay-ms 2000 --speed 0.2
wait_for "$tmp/live.err" "following session waitpath of host forkhost" 1 30
wait_for "$tmp/live.err" "(session waitpath): session ended" 1 60
wait "$replayer" || true
per_round=$(settled)
[ "$per_round" -gt 0 ] || fail "no events counted for round 1"
replay 2 --start-delay-ms 2000 --speed 0.2
wait_for "$tmp/live.err" "following session waitpath of host forkhost again" 1 30
wait_for "$tmp/live.err" "(session waitpath): session ended" 2 60
wait "$replayer" || true
n=$(settled)
[ "$n" -eq $((2 * per_round)) ] || fail "events_total $n, not 2 x $per_round"

echo "2. the relayd restarts; the session is created anew"
replay 3 --start-delay-ms 600000
wait_for "$tmp/live.err" "following session waitpath of host forkhost again" 2 30
kill -KILL "$relayd"
wait_for "$tmp/live.err" "lost the relayd" 1 30
start_relayd b
wait_for "$tmp/live.err" "session ended (gone from the relayd)" 1 30
kill -TERM "$replayer"
wait "$replayer" || true
replay 4 --start-delay-ms 2000 --speed 0.2
wait_for "$tmp/live.err" "following session waitpath of host forkhost again" 3 30
wait_for "$tmp/live.err" "(session waitpath): session ended" 4 60

# One host all along: never a second row for it.
[ "$(grep -c "following session waitpath of host forkhost$" "$tmp/live.err")" -eq 1 ] ||
  fail "the host was added more than once"
# Its events counted across its readers: rounds 1, 2 and 4 emitted the same events.
n=$(settled)
[ "$n" -eq $((3 * per_round)) ] || fail "events_total $n, not 3 x $per_round"
kill -INT "$live"
wait "$live" || fail "waitpath live exited $?"
cat "$tmp/live.err"
# The task records (written once a task's end is older than the retention, or at the end):
# each round's three tasks, analysed in their own round.
for n in 1 2 4; do
  [ "$(round_records $n)" -eq 3 ] || fail "round $n: $(round_records $n) task records, not 3"
done
echo PASS
