# Sourced by the live tests and bench/soak_live.sh: a private work directory, a private
# lttng-relayd on ports of its own, and a cleanup that ends every process they started (by
# pid) and gives tools/replay/replay-hosts.sh the time to stop its session daemons and
# remove its own work directory.
#
#   live_setup NAME PORT_BASE   tmp, pids, base, relayd_url, live_url; cleanup on exit
#   start_relayd TAG            a relayd on $base.. writing under $tmp/relay-TAG; $relayd
#   wait_for FILE PATTERN COUNT TIMEOUT_S

live_setup() {
  tmp=$(mktemp -d "/tmp/waitpath-$1.XXXXXX")
  pids=()
  trap live_cleanup EXIT
  # Ports of our own, away from the defaults (5342-5344): a block of 8 from PORT_BASE on that
  # nobody listens on, held for the test's life by a lock on its file. The lab (tests/vmlab/lab.py)
  # takes its blocks the same way, so tests run at once never share one.
  mkdir -p /tmp/waitpath-ports
  base=$(($2 + ($$ % 200) * 8))
  local tries
  for tries in $(seq 1000); do
    exec {port_lock}>"/tmp/waitpath-ports/$base.lock"
    if flock -n "$port_lock" && ! ss -ltnH | grep -qE ":($base|$((base + 1))|$((base + 2)))\s"; then
      break
    fi
    exec {port_lock}>&-
    base=$((base + 8))
    [ "$tries" -lt 1000 ] || { echo "live_setup: no free port block from $2" >&2; exit 1; }
  done
  relayd_url=net://127.0.0.1:$base:$((base + 1))
  live_url=net://127.0.0.1:$((base + 2))
}

live_cleanup() {
  local p running
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 200); do
    running=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
    [ $running -eq 1 ] || break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  # WAITPATH_KEEP_TMP=1 keeps the work directory (logs, relayd output) to look into a failure.
  if [ "${WAITPATH_KEEP_TMP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}

start_relayd() {
  lttng-relayd -C tcp://127.0.0.1:$base -D tcp://127.0.0.1:$((base + 1)) \
    -L tcp://127.0.0.1:$((base + 2)) \
    -o "$tmp/relay-$1" >"$tmp/relayd-$1.log" 2>&1 &
  relayd=$!
  pids+=("$relayd")
  sleep 1
}

wait_for() {
  for _ in $(seq $((10 * $4))); do
    [ "$(grep -c -- "$2" "$1" || true)" -ge "$3" ] && return 0
    sleep 0.1
  done
  echo "FAIL: waited $4 s for $3 x '$2' in $1:"
  cat "$1"
  return 1
}
