#!/bin/bash
# The span example traced for real: a private lttng-sessiond (own mount and UTS namespaces)
# records waitpath-span-example's waitpath_span:* events with the vtid/vpid contexts, as
# `configs/lttng/waitpath-session.sh --spans` configures them; waitpath must decode every span
# with its ids, thread and handoff (docs/requests.md). The kernel tracer is not needed: without
# kernel events each span's path is its threads' own time (the engine knows nothing else).
#
# Then the same live: a private lttng-relayd, a live session, `waitpath live --json` writes a
# span record for each span as it ends.
#
# usage: test_span_example.sh WAITPATH SPAN_EXAMPLE
# Exit 77 (skipped) when LTTng or namespaces are not available.
set -u

waitpath=$1 example=$2
requests=20

skip() {
  echo "SKIP: $*"
  exit 77
}

if [ -z "${WAITPATH_SPAN_TEST_IN_NS:-}" ]; then
  for tool in lttng-sessiond lttng unshare mount jq; do
    command -v "$tool" >/dev/null || skip "$tool not found (apt-get install lttng-tools jq)"
  done
  [ "$(id -u)" -eq 0 ] ||
    skip "needs root (private mount and UTS namespaces for the session daemon)"
  unshare -m -u true 2>/dev/null || skip "cannot create mount/UTS namespaces here"
  exec unshare -m -u --propagation private env WAITPATH_SPAN_TEST_IN_NS=1 "$0" "$@"
fi

work=$(mktemp -d /tmp/waitpath-span-test.XXXXXX)
sessiond_pid="" relayd_pid="" live_pid=""
cleanup() {
  for p in $live_pid $relayd_pid; do kill "$p" 2>/dev/null; done
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

mkdir -p "$work/run" "$work/home" /var/run/lttng
mount --bind "$work/run" /var/run/lttng || skip "cannot bind-mount /var/run/lttng"
mount -t tmpfs tmpfs /dev/shm || skip "cannot mount a private /dev/shm"
export LTTNG_HOME="$work/home"
hostname spanhost || fail "cannot set the hostname"

lttng-sessiond -d --no-kernel || fail "lttng-sessiond did not start"
sessiond_pid=$(cat "$work/run/lttng-sessiond.pid" 2>/dev/null)
[ -n "$sessiond_pid" ] || fail "no pid file from lttng-sessiond in $work/run"

# record NAME EXAMPLE_ARGS...: the example's spans into $work/NAME.
record() {
  local name=$1
  shift
  lttng create "$name" --output="$work/$name" >/dev/null || fail "$name: lttng create"
  lttng enable-channel --userspace --buffers-uid --subbuf-size=256K --num-subbuf=4 \
    waitpath_spans >/dev/null || fail "$name: enable-channel"
  lttng enable-event --userspace --channel=waitpath_spans 'waitpath_span:*,jaeger_ust:*' \
    >/dev/null || fail "$name: enable-event"
  lttng add-context --userspace --channel=waitpath_spans --type=vtid --type=vpid >/dev/null ||
    fail "$name: add-context"
  lttng start >/dev/null || fail "$name: start"
  "$example" "$@" >"$work/$name.log" 2>&1 ||
    fail "$name: the example failed: $(cat "$work/$name.log")"
  lttng stop >/dev/null || fail "$name: stop"
  lttng destroy >/dev/null || fail "$name: destroy"
}

record trace "$requests"
record jaeger "$requests" --jaeger

kinds=$("$waitpath" stats --json "$work/trace" | jq -c '.kinds')
want_begin=$((2 * requests)) want_handoff=$requests
[ "$(jq '.span_begin' <<<"$kinds")" = "$want_begin" ] &&
  [ "$(jq '.span_end' <<<"$kinds")" = "$want_begin" ] &&
  [ "$(jq '.span_handoff' <<<"$kinds")" = "$want_handoff" ] ||
  fail "stats: expected $want_begin begins and ends, $want_handoff handoffs: $kinds"

# No kernel events: analyze says so (exit 1) but still resolves every span.
"$waitpath" analyze --json "$work/trace" >"$work/analyze.jsonl" 2>"$work/analyze.err"
jq -c 'select(.type == "span")' "$work/analyze.jsonl" >"$work/spans.jsonl"
[ "$(wc -l <"$work/spans.jsonl")" -eq "$want_begin" ] ||
  fail "expected $want_begin span records: $(head -c 2000 "$work/analyze.jsonl")" \
    "$(cat "$work/analyze.err")"
pid=$(jq -r 'select(.name == "GET /cart") | .pid' "$work/spans.jsonl" | sort -u)
[ "$(wc -l <<<"$pid")" -eq 1 ] || fail "one process expected: $pid"
jq -e -s --argjson n "$requests" '
  (map(select(.name == "GET /cart")) | length == $n
     and all(.handoffs == 1 and .end_tid != .tid and .parent == null
             and (.trace_id | startswith("4bf92f3577b34da6a3ce929d0e0e47"))
             and ([.breakdown_ns[]] | add) == .duration_ns)) and
  (map(select(.name == "db query")) | length == $n
     and all(.parent != null and .duration_ns >= 1000000))' "$work/spans.jsonl" >/dev/null ||
  fail "span records do not say what the example did: $(head -c 3000 "$work/spans.jsonl")"
# Each db query is a child of its request and ran in the thread that took the request over.
jq -e -s '
  (map(select(.name == "GET /cart") | {key: .span_id, value: .end_tid}) | from_entries) as $worker
  | map(select(.name == "db query")) | all($worker[.parent] == .tid)' "$work/spans.jsonl" \
  >/dev/null || fail "db query spans are not their requests' children in the worker"
jq -e 'select(.type == "span_input") | .ended == 40 and .unmatched_ends == 0' \
  "$work/analyze.jsonl" >/dev/null || fail "span_input: $(grep span_input "$work/analyze.jsonl")"
echo "ok: $requests requests traced with lttng-ust: $kinds"

# jaeger_ust:start_span/end_span: the same spans, without parents or handoffs; a request ends
# in the worker, which ran the db query.
jkinds=$("$waitpath" stats --json "$work/jaeger" | jq -c '.kinds')
[ "$(jq '.span_begin' <<<"$jkinds")" = "$want_begin" ] &&
  [ "$(jq '.span_end' <<<"$jkinds")" = "$want_begin" ] &&
  [ "$(jq '.span_handoff // 0' <<<"$jkinds")" = 0 ] || fail "jaeger stats: $jkinds"
"$waitpath" analyze --json "$work/jaeger" 2>/dev/null | jq -c 'select(.type == "span")' \
  >"$work/jaeger.jsonl"
jq -e -s --argjson n "$requests" '
  (map(select(.name == "GET /cart")) | length == $n
     and all(.handoffs == 0 and .end_tid != .tid and .parent == null
             and (.trace_id | startswith("4bf92f3577b34da6a3ce929d0e0e47"))
             and ([.breakdown_ns[]] | add) == .duration_ns)) and
  (map(select(.name == "db query")) | length == $n and all(.parent == null))' \
  "$work/jaeger.jsonl" >/dev/null ||
  fail "jaeger span records: $(head -c 3000 "$work/jaeger.jsonl")"
echo "ok: the same with jaeger_ust events: $jkinds"

# Live: the session streams to a private relayd, `waitpath live` follows it.
base=$((17000 + ($$ % 200) * 8))
lttng-relayd -C tcp://127.0.0.1:$base -D tcp://127.0.0.1:$((base + 1)) \
  -L tcp://127.0.0.1:$((base + 2)) -o "$work/relay" >"$work/relayd.log" 2>&1 &
relayd_pid=$!
sleep 1
"$waitpath" live --relayd "net://127.0.0.1:$((base + 2))" --all --json >"$work/live.jsonl" \
  2>"$work/live.err" &
live_pid=$!
lttng create live-spans --live=200000 --set-url="net://127.0.0.1:$base:$((base + 1))" \
  >/dev/null || fail "live: lttng create"
lttng enable-channel --userspace --buffers-uid --subbuf-size=256K --num-subbuf=4 \
  waitpath_spans >/dev/null || fail "live: enable-channel"
lttng enable-event --userspace --channel=waitpath_spans 'waitpath_span:*' >/dev/null ||
  fail "live: enable-event"
lttng add-context --userspace --channel=waitpath_spans --type=vtid --type=vpid >/dev/null ||
  fail "live: add-context"
lttng start >/dev/null || fail "live: start"
sleep 2  # attached before the spans
"$example" "$requests" >"$work/live-example.log" 2>&1 || fail "live: the example failed"
lttng stop >/dev/null || fail "live: stop"
lttng destroy >/dev/null || fail "live: destroy"
for _ in $(seq 300); do
  [ "$(grep -c '"type":"span"' "$work/live.jsonl")" -ge "$want_begin" ] && break
  sleep 0.1
done
kill -INT "$live_pid"
for _ in $(seq 100); do
  kill -0 "$live_pid" 2>/dev/null || break
  sleep 0.1
done
live_pid=""
got=$(grep -c '"type":"span"' "$work/live.jsonl")
[ "$got" -eq "$want_begin" ] ||
  fail "live: $got span records, expected $want_begin: $(cat "$work/live.err")" \
    "$(head -c 2000 "$work/live.jsonl")"
jq -e -s --argjson n "$requests" 'map(select(.type == "span" and .name == "GET /cart"
  and .handoffs == 1)) | length == $n' "$work/live.jsonl" >/dev/null ||
  fail "live: span records differ from the example's: $(head -c 2000 "$work/live.jsonl")"
echo "ok: live: $got span records from the relayd"

