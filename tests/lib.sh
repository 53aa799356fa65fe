# Sourced by the shell tests: one-line skip (exit 77) and failure (exit 1), and the check that
# the tests starting LTTng session daemons in namespaces share.

skip() {
  echo "SKIP: $*"
  exit 77
}

fail() {
  echo "FAIL: $*"
  exit 1
}

# Root, lttng-tools, jq and mount/UTS/PID namespaces (the demo's per-host daemons), or skip.
need_lttng_namespaces() {
  local tool
  for tool in lttng lttng-sessiond lttng-relayd unshare jq; do
    command -v "$tool" >/dev/null || skip "$tool not found (apt-get install lttng-tools jq)"
  done
  [ "$(id -u)" -eq 0 ] || skip "needs root (one session daemon per host in private namespaces)"
  unshare -m -u -p --fork --mount-proc true 2>/dev/null ||
    skip "cannot create mount/UTS/PID namespaces here"
}

# A work directory ($work) removed on exit, and a demo run in the background ($demo_pid, set by
# the caller) stopped then if a check failed half way (its own shutdown is what is under test).
demo_workdir() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  demo_pid=""
  trap demo_cleanup EXIT
}

demo_cleanup() {
  if [ -n "$demo_pid" ] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid"
    wait "$demo_pid"
  fi
  rm -rf "$work"
}
