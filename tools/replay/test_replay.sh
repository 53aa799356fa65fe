#!/bin/bash
# End-to-end test of waitpath-replay with real LTTng daemons: replays a generated trace and a
# perf fixture through a private lttng-sessiond (own mount and UTS namespace, so that the UST
# trace carries the original hostname), then requires that `waitpath stats` counts the same
# events per kind (nothing discarded) and `waitpath analyze` gives identical task records (and
# span records, for a generated scenario with application spans).
#
# usage: test_replay.sh WAITPATH WAITPATH_GEN WAITPATH_REPLAY REPO
# Exit 77 (skipped) when LTTng or namespaces are not available.
set -u

waitpath=$1 gen=$2 replay=$3 repo=$4

skip() {
  echo "SKIP: $*"
  exit 77
}

if [ -z "${WAITPATH_REPLAY_TEST_IN_NS:-}" ]; then
  for tool in lttng-sessiond lttng unshare mount jq; do
    command -v "$tool" >/dev/null || skip "$tool not found (apt-get install lttng-tools jq)"
  done
  [ "$(id -u)" -eq 0 ] ||
    skip "needs root (private mount and UTS namespaces for the session daemon)"
  unshare -m -u true 2>/dev/null || skip "cannot create mount/UTS namespaces here"
  # Mounts and the hostname change stay inside the namespace and vanish with it.
  exec unshare -m -u --propagation private env WAITPATH_REPLAY_TEST_IN_NS=1 "$0" "$@"
fi

work=$(mktemp -d /tmp/waitpath-replay-test.XXXXXX)
sessiond_pid=""
cleanup() {
  if [ -n "$sessiond_pid" ] && kill -0 "$sessiond_pid" 2>/dev/null; then
    kill "$sessiond_pid"
    for _ in $(seq 50); do
      kill -0 "$sessiond_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$sessiond_pid" 2>/dev/null && kill -9 "$sessiond_pid"
  fi
  umount /dev/shm 2>/dev/null
  umount /var/run/lttng 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
  echo "FAIL: $*"
  exit 1
}

# A private run directory (sockets, the daemon's pid file) and a private /dev/shm (lttng-ust's
# registration wait page and ring buffers): other session daemons on the machine are not seen.
mkdir -p "$work/run" "$work/home" /var/run/lttng
mount --bind "$work/run" /var/run/lttng || skip "cannot bind-mount /var/run/lttng"
mount -t tmpfs tmpfs /dev/shm || skip "cannot mount a private /dev/shm"
export LTTNG_HOME="$work/home"

lttng-sessiond -d --no-kernel || fail "lttng-sessiond did not start"
sessiond_pid=$(cat "$work/run/lttng-sessiond.pid" 2>/dev/null)
[ -n "$sessiond_pid" ] || fail "no pid file from lttng-sessiond in $work/run"

"$gen" --scenario "$repo/tools/gen/scenarios/fork-chain.toml" --out "$work/gen" >/dev/null ||
  fail "waitpath-gen failed"

# record NAME TRACE REPLAY_ARGS...: replays TRACE into $work/out-NAME.
record() {
  local name=$1 trace=$2
  shift 2
  local host
  host=$("$waitpath" stats --json "$trace" | jq -r .host) || fail "$name: cannot read $trace"
  # The session's trace environment takes the daemon's hostname at session creation.
  hostname "$host" || fail "cannot set the hostname"
  lttng create "rp-$name" --output="$work/out-$name" >/dev/null || fail "$name: lttng create"
  # Blocking channel: with --asap the replayer outruns the consumer daemon; it waits for room
  # instead of discarding (LTTNG_UST_ALLOW_BLOCKING below).
  lttng enable-channel -u --subbuf-size 4M --num-subbuf 8 --blocking-timeout=inf rp >/dev/null ||
    fail "$name: enable-channel"
  lttng enable-event -u -c rp 'waitpath_replay:*' >/dev/null || fail "$name: enable-event"
  lttng start >/dev/null || fail "$name: start"
  LTTNG_UST_ALLOW_BLOCKING=1 "$replay" "$@" "$trace" 2>"$work/$name.replay.log" ||
    fail "$name: waitpath-replay failed: $(cat "$work/$name.replay.log")"
  cat "$work/$name.replay.log"
  lttng stop >/dev/null || fail "$name: stop"
  lttng destroy >/dev/null || fail "$name: destroy"
}

# replay_case NAME TRACE: records TRACE's replay into $work/out-NAME and compares.
replay_case() {
  local name=$1 trace=$2
  record "$name" "$trace" --asap
  local out="$work/out-$name"
  "$waitpath" stats --json "$trace" >"$work/$name.orig.stats" || fail "$name: stats on the original"
  "$waitpath" stats --json "$out" >"$work/$name.replay.stats" || fail "$name: stats on the replay"
  [ "$(wc -l <"$work/$name.replay.stats")" -eq 1 ] ||
    fail "$name: the replay is not one host: $(cat "$work/$name.replay.stats")"
  local want got
  want=$(jq -cS '{host, kinds, discarded, regressions}' "$work/$name.orig.stats")
  got=$(jq -cS '{host, kinds, discarded, regressions}' "$work/$name.replay.stats")
  # A discarded UST record shows up as fewer events of some kind and as `discarded`.
  [ "$want" = "$got" ] || fail "$name: stats differ (events lost or misread?)
  original: $want
  replayed: $got"
  jq -e '.dialect | startswith("replayed ")' "$work/$name.replay.stats" >/dev/null ||
    fail "$name: the replay's dialect does not say replayed"

  "$waitpath" analyze --json --top 1000 "$trace" | jq -cS . >"$work/$name.orig.analyze" ||
    fail "$name: analyze on the original"
  "$waitpath" analyze --json --top 1000 "$out" | jq -cS . >"$work/$name.replay.analyze" ||
    fail "$name: analyze on the replay"
  [ -s "$work/$name.orig.analyze" ] || fail "$name: no task records on the original"
  diff "$work/$name.orig.analyze" "$work/$name.replay.analyze" >"$work/$name.diff" ||
    fail "$name: analyze differs: $(head -c 2000 "$work/$name.diff")"
  # The replay dialect decoded natively (the default) and by babeltrace2: the same bytes.
  "$waitpath" analyze --json --top 1000 --decoder babeltrace2 "$out" | jq -cS . \
    >"$work/$name.replay.bt2.analyze" || fail "$name: analyze --decoder babeltrace2 on the replay"
  cmp -s "$work/$name.replay.analyze" "$work/$name.replay.bt2.analyze" ||
    fail "$name: analyze of the replay differs between the native decoder and babeltrace2"
  echo "ok: $name ($(jq -r .host "$work/$name.replay.stats")): $(jq -c .kinds \
    "$work/$name.replay.stats"), $(wc -l <"$work/$name.orig.analyze") identical task records"
}

replay_case gen "$work/gen"
replay_case perf-rpc "$repo/tests/fixtures/perf/rpc"

# Application spans: the generator writes them as the host's own UST trace (OUT/shop-ust), which
# the replayer merges into the host it replays; the replay must give the same span records
# (names, trace and parent ids, breakdowns) as the generated trace.
"$gen" --scenario "$repo/tools/gen/scenarios/requests.toml" --out "$work/requests" >/dev/null ||
  fail "waitpath-gen requests failed"
replay_case requests "$work/requests"
spans=$(jq -s '[.[] | select(.type == "span")] | length' "$work/requests.replay.analyze")
[ "$spans" -gt 0 ] || fail "requests: no span records in the replay's analysis"
jq -se '[.[] | select(.type == "span" and .parent != null)] | length > 0' \
  "$work/requests.replay.analyze" >/dev/null || fail "requests: no child span (parent ids lost?)"
echo "ok: requests: $spans span records"

# --loop: three rounds, each shifted past the previous one, so no timestamp regresses.
record loop "$work/gen" --asap --loop 3
want=$(jq -cS '{host, kinds: (.kinds | map_values(. * 3)), regressions}' "$work/gen.orig.stats")
got=$(jq -cS '{host, kinds, regressions}' <("$waitpath" stats --json "$work/out-loop"))
[ "$want" = "$got" ] || fail "loop: stats differ
  3 x original: $want
  replayed:     $got"
"$waitpath" analyze --json "$work/out-loop" >/dev/null || fail "loop: analyze failed"
echo "ok: loop: 3 rounds, no regression"

# SIGINT stops a paced replay promptly and cleanly.
"$replay" --forever --speed 0.01 "$work/gen" 2>"$work/signal.log" &
replay_pid=$!
sleep 1
kill -INT "$replay_pid"
for _ in $(seq 50); do
  kill -0 "$replay_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$replay_pid" 2>/dev/null; then
  kill -9 "$replay_pid"
  fail "signal: waitpath-replay still runs 5 s after SIGINT"
fi
wait "$replay_pid" || fail "signal: exit status $? after SIGINT: $(cat "$work/signal.log")"
grep -q "stopped by signal" "$work/signal.log" ||
  fail "signal: no summary: $(cat "$work/signal.log")"
echo "ok: signal"
echo PASS
