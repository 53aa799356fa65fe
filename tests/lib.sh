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
