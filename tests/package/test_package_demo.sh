#!/bin/bash
# `waitpath demo` from the installed package: the .deb unpacked into a directory (its libraries
# and lttng-tools from this machine), run as PREFIX/bin/waitpath demo. It must find its tools
# next to it (PREFIX/bin/waitpath-gen, waitpath-replay) and its files in PREFIX/share/waitpath,
# not in the source tree, and produce waits of at least two hosts.
#
# usage: test_package_demo.sh DEB_DIR
# Exit 77 (skipped) without root, lttng-tools, namespaces or jq, as the demo's own test.
set -uo pipefail
deb_dir=$1

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
need_lttng_namespaces

debs=("$deb_dir"/waitpath_*.deb)
[ -f "${debs[0]}" ] || fail "no package in $deb_dir (the package-build test makes it)"
demo_workdir waitpath-package-demo
prefix=$work/root/usr
dpkg-deb -x "${debs[0]}" "$work/root" || fail "dpkg-deb -x failed"

unset TMPDIR
"$prefix/bin/waitpath" demo --duration 12s --no-metrics --json --pid-file "$work/pids" \
  >"$work/out" 2>"$work/err" &
demo_pid=$!
# While it runs: the replayers are the package's, and so is the hosts script (found as the
# scenario demo.toml is, in PREFIX/share/waitpath before the source tree).
for _ in $(seq 300); do
  grep -q "^replay " "$work/pids" 2>/dev/null && break
  kill -0 "$demo_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q "^replay " "$work/pids" 2>/dev/null || fail "the demo did not start: $(tail -3 "$work/err")"
pid=$(awk '/^replay / { print $NF; exit }' "$work/pids")
# The pid is written once the replayer is forked: it may not have exec'd yet (still bash).
for _ in $(seq 50); do
  exe=$(readlink "/proc/$pid/exe")
  [ "$exe" = "$prefix/bin/waitpath-replay" ] && break
  sleep 0.1
done
[ "$exe" = "$prefix/bin/waitpath-replay" ] ||
  fail "the demo runs waitpath-replay from $exe, not from the package ($prefix/bin)"
# grep exits 2 for a process gone during its scan, even with a match, and under pipefail that
# failed `grep -l … | grep -q .` whenever another test's process ended meanwhile (seen with
# tests running beside this one): the matches decide, not grep's status.
running=$(grep -lsF "$prefix/share/waitpath/replay-hosts.sh" /proc/[0-9]*/cmdline || true)
[ -n "$running" ] || fail "no replay-hosts.sh of the package ($prefix/share/waitpath) runs"
echo "ok: waitpath-replay and replay-hosts.sh from the package"
timeout 60 tail --pid="$demo_pid" -f /dev/null
wait "$demo_pid"
status=$?
demo_pid=""
cat "$work/err"
[ $status -eq 0 ] || fail "waitpath demo: exit status $status"
hosts=$(jq -r 'select(.type == "wait") | .host' "$work/out" | sort -u | grep -c .)
[ "$hosts" -ge 2 ] || fail "wait records of $hosts hosts (at least 2 expected)"
echo "PASS: waitpath demo from the package: wait records of $hosts hosts"
