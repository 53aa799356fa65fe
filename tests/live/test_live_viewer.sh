#!/bin/bash
# A session that already has a viewer (another babeltrace2 attached first): the relayd serves
# one viewer per session, so waitpath says so in one line and does not follow it, instead of a
# reattach loop that counts a lost relayd; the other host's session is followed as usual.
# Real daemons: a private lttng-relayd, one namespaced lttng-sessiond per replayed host.
# usage: test_live_viewer.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4
# shellcheck source=tests/lib.sh
. "$SRC/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare babeltrace2; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup live-viewer 19600
start_relayd a
"$GEN" --scenario "$SRC/tools/gen/scenarios/rpc.toml" --out "$tmp/set" >/dev/null
"$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s s1 -R "$REPLAY" -w "$tmp/w" "$tmp/set" \
  --forever >"$tmp/replay.log" 2>&1 &
pids+=($!)
wait_for "$tmp/replay.log" "live URL" 2 30
for _ in $(seq 100); do
  [ "$(ls "$tmp"/w/*/ready 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1
done
viewed=client-host
babeltrace2 --input-format=lttng-live "$live_url/host/$viewed/s1" >/dev/null 2>"$tmp/bt.err" &
pids+=($!)
sleep 2
timeout 15 "$W" live --relayd "$live_url" --all --json >"$tmp/live.out" 2>"$tmp/live.err" || true
cat "$tmp/live.err"
n=$(grep -c "host $viewed (session s1): another viewer is attached to this session" \
  "$tmp/live.err" || true)
[ "$n" -eq 1 ] || fail "expected one 'another viewer' line for $viewed, got $n"
! grep -q "lost the relayd" "$tmp/live.err" || fail "a refused viewer was taken for a lost relayd"
grep -q '"host":"server-host"' "$tmp/live.out" || fail "the other host's session was not followed"
echo PASS
