#!/bin/bash
# The native relayd viewer client (relayd/relayd_viewer.h) against real daemons: a private
# lttng-relayd and namespaced lttng-sessiond's streaming replayed UST sessions.
#  1. A session created after the client connected, whose streams appear after it attached:
#     what the client writes (waitpath-relayd-dump --seek beginning) reads in babeltrace2 as
#     exactly the relayd's own files of that session (the oracle).
#  2. Nothing listening on the port: one line, at once.
#  3. A session another viewer (babeltrace2) holds: one line; once it leaves, attaching works;
#     a client stopped by SIGINT detaches, and the next one attaches at once.
#  4. The relayd killed mid-stream: one line, exit 1, within the request timeout.
# usage: test_relayd_dump.sh DUMP WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR
set -euo pipefail
DUMP=$1 GEN=$2 REPLAY=$3 SRC=$4
# shellcheck source=tests/lib.sh
. "$SRC/tests/lib.sh"
need_lttng_namespaces
command -v babeltrace2 >/dev/null || skip "babeltrace2 not installed"
# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
live_setup relayd-dump 20800
start_relayd a
"$GEN" --scenario "$SRC/tools/gen/scenarios/rpc.toml" --out "$tmp/set" >/dev/null

# --- 1. oracle, with a session and streams that appear after the client -------------------
# The replayer starts only once $tmp/go exists: until then the session has no stream (UST
# per-UID streams appear when the first application registers).
cat >"$tmp/replay-later" <<WRAP
#!/bin/bash
for a in "\$@"; do [ "\$a" = --list-hosts ] && exec "$REPLAY" "\$@"; done
while [ ! -e "$tmp/go" ]; do sleep 0.1; done
exec "$REPLAY" "\$@"
WRAP
chmod +x "$tmp/replay-later"
"$DUMP" --relayd "$live_url" --session s1 --host client-host --out "$tmp/dump" --verbose \
  >"$tmp/dump.log" 2>&1 &
dump=$!
pids+=("$dump")
sleep 0.5  # connected and listing: s1 does not exist yet
# Small sub-buffers and several rounds: many packets per stream.
"$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s s1 -H client-host -R "$tmp/replay-later" \
  -b 16k:4 -w "$tmp/w1" "$tmp/set" --loop 20 --speed 50 >"$tmp/replay1.log" 2>&1 &
pids+=($!)
wait_for "$tmp/dump.log" "attached to session 's1'" 1 30
# No data stream at attach: whatever streams it gets come later.
sleep 1
! grep -q "stream added: .*/rp_" "$tmp/dump.log" ||
  fail "data streams existed before the replayer ran"
touch "$tmp/go"
wait_for "$tmp/dump.log" "stream added: .*/rp_" 1 30
wait "$dump" || { cat "$tmp/dump.log"; fail "waitpath-relayd-dump failed"; }
cat "$tmp/dump.log"
grep -q "session ended" "$tmp/dump.log" || fail "the session's end was not seen"
relayd_trace=$(dirname "$(find "$tmp/relay-a" -name metadata | head -1)")
dump_trace=$(dirname "$(find "$tmp/dump" -name metadata | head -1)")
[ -n "$relayd_trace" ] && [ -n "$dump_trace" ] || fail "no trace written"
babeltrace2 "$relayd_trace" >"$tmp/relayd.txt"
babeltrace2 "$dump_trace" >"$tmp/dump.txt"
n=$(wc -l <"$tmp/relayd.txt")
[ "$n" -gt 10000 ] || fail "the relayd's trace has only $n events"
cmp -s "$tmp/relayd.txt" "$tmp/dump.txt" ||
  { diff "$tmp/relayd.txt" "$tmp/dump.txt" | head; fail "the dumped trace differs from the relayd's"
  }
echo "oracle: $n events, the same as the relayd's files"

# --- 2. nothing listening -----------------------------------------------------------------
start=$(date +%s%N)
if "$DUMP" --relayd net://127.0.0.1:$((base + 5)) --session s1 --out "$tmp/x" \
  2>"$tmp/none.err"; then
  fail "connecting to nothing succeeded"
fi
ms=$((($(date +%s%N) - start) / 1000000))
cat "$tmp/none.err"
[ "$(wc -l <"$tmp/none.err")" -eq 1 ] || fail "expected one line"
grep -q "cannot connect to the relayd's live port" "$tmp/none.err" || fail "unclear error"
[ "$ms" -lt 2000 ] || fail "took $ms ms"

# --- 3. a session already viewed, then 4. the relayd killed mid-stream -------------------
"$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s s2 -H server-host -R "$REPLAY" \
  -w "$tmp/w2" "$tmp/set" --forever >"$tmp/replay2.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -e "$tmp/w2/server-host/ready" ] && break; sleep 0.1; done
babeltrace2 --input-format=lttng-live "$live_url/host/server-host/s2" >/dev/null 2>&1 &
bt=$!
pids+=("$bt")
sleep 2
if "$DUMP" --relayd "$live_url" --session s2 --out "$tmp/dump2" 2>"$tmp/viewed.err"; then
  fail "attached to a session another viewer holds"
fi
cat "$tmp/viewed.err"
[ "$(wc -l <"$tmp/viewed.err")" -eq 1 ] || fail "expected one line"
grep -q "already has a viewer" "$tmp/viewed.err" || fail "unclear error"
kill -TERM "$bt"
wait "$bt" || true
sleep 1
# Stopped by Ctrl-C, the client detaches: the next viewer attaches at once.
"$DUMP" --relayd "$live_url" --session s2 --out "$tmp/dump2" --verbose >"$tmp/dump1.log" 2>&1 &
dump=$!
pids+=("$dump")
wait_for "$tmp/dump1.log" "stream added: .*/rp_" 1 30
kill -INT "$dump"
wait "$dump" ||
  { cat "$tmp/dump1.log"; fail "waitpath-relayd-dump did not stop cleanly on SIGINT"; }
"$DUMP" --relayd "$live_url" --session s2 --out "$tmp/dump2" --timeout-ms 3000 --verbose \
  >"$tmp/dump2.log" 2>&1 &
dump=$!
pids+=("$dump")
wait_for "$tmp/dump2.log" "stream added: .*/rp_" 1 30
sleep 2
kill -KILL "$relayd"
start=$(date +%s%N)
if wait "$dump"; then
  fail "the client ended well although its relayd was killed"
fi
ms=$((($(date +%s%N) - start) / 1000000))
cat "$tmp/dump2.log"
tail -1 "$tmp/dump2.log" | grep -Eq "closed the connection|lost the relayd" || fail "unclear error"
[ "$ms" -lt 5000 ] || fail "took $ms ms to notice"
echo "relayd killed: noticed in $ms ms"
echo PASS
