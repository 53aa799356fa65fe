#!/bin/bash
# The systemd unit as shipped (configs/systemd/waitpath.service): every unit it is ordered
# after or wants exists on this Debian (it named lttng-relayd.service, which lttng-tools does
# not ship), and the exposure its comment states is what systemd-analyze says (it said "1.x
# (OK)" where systemd-analyze said 0.9 SAFE).
#
# usage: test_unit.sh UNIT_FILE
# Exit 77 (skipped) without systemd-analyze.
set -uo pipefail
unit=$(realpath "$1")
fail() { echo "FAIL: $*"; exit 1; }
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not found"; exit 77; }

for dep in $(sed -n 's/^\(After\|Wants\|Requires\|BindsTo\)=//p' "$unit"); do
  found=
  for dir in /usr/lib/systemd/system /lib/systemd/system /etc/systemd/system; do
    [ -e "$dir/$dep" ] && found=1
  done
  [ -n "$found" ] || fail "the unit names $dep, which no package of this system ships"
done

stated=$(sed -n 's/.*rates it \([0-9.]*\) \([A-Z]*\).*/\1 \2/p' "$unit")
[ -n "$stated" ] || fail "the unit's comment states no exposure"
measured=$(cd / && systemd-analyze security --offline=yes "$unit" 2>/dev/null |
  sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p')
[ "$stated" = "$measured" ] ||
  fail "the comment says '$stated', systemd-analyze security says '$measured'"
echo "PASS: $measured"
