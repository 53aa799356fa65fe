#!/usr/bin/env bash
# The reference decoding of a CTF 2 (or CTF 1.8) trace: babeltrace2 2.1 from the sid chroot
# (sid-chroot.sh; Debian 12's babeltrace2 2.0 cannot read CTF 2), as text on stdout.
#
#   bt2-oracle.sh TRACE_DIR [BABELTRACE2-OPTIONS...]
#   bt2-oracle.sh net://127.0.0.1:PORT/host/HOST/SESSION [BABELTRACE2-OPTIONS...]
#
# TRACE_DIR (a trace, or a directory holding traces) is bind-mounted read-only at the same
# path in the chroot. The default options print timestamps as clock cycles (the raw values
# of the event headers, not nanoseconds since the epoch converted with the clock's offset)
# and absolute values (no deltas), so that a test can compare field by field with its own
# decoding; options given after TRACE_DIR replace them. A net:// URL is read live through
# lttng-live (the relayd is reached on 127.0.0.1 since the chroot shares the host's network).
# The exact command is printed on stderr ("+ babeltrace2 ..."). Exits with babeltrace2's
# status, or 77 (skip) when the chroot cannot be built.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
usage="usage: bt2-oracle.sh TRACE_DIR|net://... [BABELTRACE2-OPTIONS...]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
src=$1
shift
opts=(--clock-cycles --no-delta)
[ $# -eq 0 ] || opts=("$@")

bind=
case $src in
  net://*) opts=(--input-format=lttng-live "${opts[@]}") ;;
  *)
    [ -d "$src" ] || { echo "bt2-oracle: $src is not a directory" >&2; exit 2; }
    src=$(readlink -f "$src")
    bind=$src
    ;;
esac
echo "+ babeltrace2 ${opts[*]} $src" >&2
# The chroot is built (or found in the cache) first, so that its log never mixes with the
# oracle's output; 77 when it cannot be.
"$here/sid-chroot.sh" build >/dev/null
# A read-only view: the oracle must not change a fixture (babeltrace2 only reads anyway).
WAITPATH_SID_BIND='' WAITPATH_SID_BIND_RO=$bind \
  exec "$here/sid-chroot.sh" run babeltrace2 "${opts[@]}" "$src"
