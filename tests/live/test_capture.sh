#!/usr/bin/env bash
# Just-in-time capture with real daemons (a private lttng-relayd, a namespaced lttng-sessiond
# replaying a generated host as UST events, docs/capture.md): a database writer whose 40th
# disk write takes 80 ms gives exactly one capture, cut from the relayd's stored files
# (--capture-traces), and again from the packets waitpath keeps itself (its ring, without
# --capture-traces); babeltrace2 reads it; `waitpath analyze` of the capture gives the live
# answer again; the capture is counted in waitpath_captures_total.
# With `rotate`: the relayd rotates every stream's file at 64 KiB and keeps 40 of them
# (--tracefile-size/--tracefile-count, as production sessions and the demo do), the wait comes
# after several rotations, and the capture is cut from the rotated files; both decoders read
# the relayd's rotated output the same.
# usage: test_capture.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY SOURCE_DIR [rotate]
set -euo pipefail
W=$1 GEN=$2 REPLAY=$3 SRC=$4 MODE=${5:-}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces for the per-host session daemons)"
for t in lttng-relayd lttng-sessiond lttng unshare python3 babeltrace2; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/live/daemons.sh
. "$SRC/tests/live/daemons.sh"
if [ "$MODE" = rotate ]; then
  live_setup capture-rotate-test 17640
  # ~2,000 writes and a busy neighbour before the slow one: a few MB of events per CPU. The
  # host ends 0.2 s after the wait, so the capture is cut when live stops, from what the relayd
  # stored: cut while running, the window's last sub-buffers (16 KiB here) were at times not
  # stored yet (docs/capture.md, "Limits").
  before=2000 noise=9000 buffers=(-b 16K:4 -f 64K:40)
else
  live_setup capture-test 17600
  before=40 noise=4000 buffers=()
fi

cat >"$tmp/slow-disk.toml" <<TOML
name = "slow-disk"
seed = 3
duration = "$((before * 2 + 1500))ms"
watch = ["writer"]
[[hosts]]
name = "db"
cpus = 2
  [[hosts.tasks]]
  name = "writer"
  comm = "db-writer"
  start = "1ms"
  script = ["repeat $before", "compute 1ms", "disk 200us", "end", "disk 80ms 65536 write",
            "repeat 40", "compute 1ms", "disk 200us", "end"]
  [[hosts.tasks]]
  name = "noise"
  comm = "noise"
  start = "1ms"
  script = ["repeat $noise", "compute 200us", "sleep 100us", "end"]
TOML
"$GEN" -q --scenario "$tmp/slow-disk.toml" --out "$tmp/g" >/dev/null
mkdir -p "$tmp/set"
cp -r "$tmp/g/db" "$tmp/set/"

start_relayd a
metrics=127.0.0.1:$((base + 3))
# capture SESSION [--capture-traces DIR]: one replay of the host, one capture checked.
capture() {
  local session=$1
  shift
  rm -rf "$tmp/captures"
  "$W" live --relayd "$live_url" --session "$session" --json --watch comm=db-writer \
    --min-wait 50ms --metrics "$metrics" \
    --capture-dir "$tmp/captures" --capture-min-wait 50ms --capture-margin 20ms \
    "$@" >"$tmp/live.out" 2>"$tmp/live.err" &
  l=$!
  pids+=("$l")
  bash "$SRC/tools/replay/replay-hosts.sh" -r "$relayd_url" -s "$session" -R "$REPLAY" \
    ${buffers[@]+"${buffers[@]}"} "$tmp/set" --start-delay-ms 4000 --speed 0.2 \
    >"$tmp/replay.log" 2>&1 &
  pids+=($!)
  # Cut while running: the host's events went 0.5 s past the wait's window (it runs 1.2 s).
  if [ "$MODE" = rotate ]; then
    wait_for "$tmp/live.err" "session ended" 1 120
    kill -INT "$l"
  fi
  wait_for "$tmp/live.err" "captured " 1 90
  if [ "$MODE" = rotate ]; then
    written=$(grep -c "^waitpath: captured " "$tmp/live.err")  # live has stopped: no /metrics
  else
    written=$(python3 - "$metrics" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen("http://" + sys.argv[1] + "/metrics", timeout=5).read().decode()
print(sum(int(float(l.rsplit(" ", 1)[1])) for l in body.splitlines()
          if l.startswith('waitpath_captures_total{outcome="written"}')))
PY
    )
  fi
  [ "$written" -eq 1 ] ||
    { echo "FAIL: waitpath_captures_total{outcome=\"written\"} is $written, want 1"; exit 1; }
  wait_for "$tmp/live.err" "session ended" 1 90
  kill -INT "$l" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$l" 2>/dev/null || break; sleep 0.1; done
  wait "$l" || { echo "FAIL: waitpath live exited $?"; cat "$tmp/live.err"; exit 1; }

  [ "$(grep -c '"type":"wait"' "$tmp/live.out")" -eq 1 ] ||
    { echo "FAIL: want one wait record:"; cat "$tmp/live.out" "$tmp/live.err"; exit 1; }
  mapfile -t made < <(find "$tmp/captures" -mindepth 1 -maxdepth 1 -type d)
  [ "${#made[@]}" -eq 1 ] ||
    { echo "FAIL: want one capture, got ${#made[@]}:"; ls -la "$tmp/captures"
      cat "$tmp/live.err"; exit 1; }
  capture=${made[0]}
  grep -q "captured $capture" "$tmp/live.err" ||
    { echo "FAIL: the capture is not said"; cat "$tmp/live.err"; exit 1; }
  if [ "$MODE" = rotate ]; then
    # The relayd did rotate and overwrite: it holds fewer events than were replayed.
    kept=$(babeltrace2 "$tmp/relay-a" | wc -l)
    sent=$(sed -n 's/.*: \([0-9]*\) events in.*/\1/p' "$tmp/replay.log")
    [ "$kept" -lt "$sent" ] ||
      { echo "FAIL: the relayd kept all $sent events: no rotation"; exit 1; }
    echo "the relayd kept $kept of $sent events in its rotated files"
    # The native decoder reads a stream rotated over several files as one, as babeltrace2 does.
    "$W" analyze --json --decoder auto "$tmp/relay-a" >"$tmp/native.json" 2>"$tmp/native.err"
    "$W" analyze --json --decoder babeltrace2 "$tmp/relay-a" >"$tmp/bt.json" 2>/dev/null
    ! grep -q "read with babeltrace2" "$tmp/native.err" ||
      { echo "FAIL: rotated files not read natively:"; cat "$tmp/native.err"; exit 1; }
    cmp -s "$tmp/native.json" "$tmp/bt.json" ||
      { echo "FAIL: the decoders disagree on the rotated trace"; diff "$tmp/native.json" \
      "$tmp/bt.json" | head; exit 1; }
    diff <("$W" stats --decoder native "$tmp/relay-a" 2>&1) \
      <("$W" stats --decoder babeltrace2 "$tmp/relay-a" 2>&1) ||
      { echo "FAIL: the decoders' stats disagree on the rotated trace"; exit 1; }
  fi
  for trace in $(find "$capture" -name metadata -printf '%h\n'); do
    babeltrace2 "$trace" >/dev/null || { echo "FAIL: babeltrace2 cannot read $trace"; exit 1; }
  done
  "$W" analyze --json --watch comm=db-writer --min-wait 50ms "$capture" >"$tmp/again.out" \
    2>"$tmp/again.err" ||
    { echo "FAIL: analyze of the capture:"; cat "$tmp/again.err"; exit 1; }
  python3 - "$tmp/live.out" "$tmp/again.out" "$capture/wait.json" "$capture/timeline.json" <<'PY'
import json, sys
live = [json.loads(l) for l in open(sys.argv[1]) if '"type":"wait"' in l][0]
again = [json.loads(l) for l in open(sys.argv[2]) if '"type":"wait"' in l]
info = json.load(open(sys.argv[3]))
timeline = json.load(open(sys.argv[4]))
assert info["wait"] == live, ("wait.json", info["wait"], live)
assert len(again) == 1, again
for k in ("host", "tid", "comm", "start_ns", "end_ns", "cause", "breakdown_ns"):
    assert again[0][k] == live[k], (k, again[0][k], live[k])
assert live["cause"] == "disk", live
assert any(e.get("cat") == "wait" for e in timeline["traceEvents"]), "no wait in the timeline"
print("capture reproduces the live wait:", live["duration_ns"], "ns,", live["cause"])
PY
}
echo "1. cut from the relayd's files"
capture slowdisk --capture-traces "$tmp/relay-a"
if [ "$MODE" = rotate ]; then echo "OK"; exit 0; fi
echo "2. cut from waitpath's ring of recent packets"
capture slowdisk-ring --capture-ring-mb 8
grep -q "host db (session slowdisk-ring): capture ring: [1-9][0-9]* packets" "$tmp/live.err" ||
  { echo "FAIL: the ring's figures are not said:"; cat "$tmp/live.err"; exit 1; }
echo "OK"
