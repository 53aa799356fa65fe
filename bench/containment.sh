#!/usr/bin/env bash
# Cost of containment (docs/reading.md, "Hostile input"): `waitpath stats` and `analyze` with
# each recorded host's babeltrace2 graph in a child process (the default) against in the
# reader thread (WAITPATH_READER=thread), interleaved, median wall and CPU (user+sys) of REPS.
# Generates a 1-host and a 4-host scale trace (3.6 M and 2 M events) unless TRACEs are given.
# Usage: bench/containment.sh [REPS] [TRACE...]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-7}; shift || true
WAITPATH=${WAITPATH:-build/app/waitpath}
GEN=${GEN:-build/tools/gen/waitpath-gen}
traces=("$@")
tmp=""
if ((${#traces[@]} == 0)); then
  tmp=$(mktemp -d /var/tmp/waitpath-containment-XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  "$GEN" --scenario tools/gen/scenarios/scale.toml --out "$tmp/one" --set scale.hosts=1 \
    --set duration=4s --set scale.event_rate=1000000 >/dev/null
  "$GEN" --scenario tools/gen/scenarios/scale.toml --out "$tmp/four" --set scale.hosts=4 \
    --set duration=2s --set scale.event_rate=1000000 >/dev/null
  traces=("$tmp/one" "$tmp/four")
  [ -d ../shared/traces/many-threads ] && traces+=(../shared/traces/many-threads)
fi
printf "%-34s %12s %12s %12s %12s %8s\n" run "thread wall" "child wall" "thread cpu" "child cpu" \
  "cpu +%"
for t in "${traces[@]}"; do
  for cmd in stats analyze; do
    for _ in $(seq "$REPS"); do
      for mode in thread process; do
        WAITPATH_READER=$mode /usr/bin/time -f "$mode %e %U %S" "$WAITPATH" "$cmd" "$t" 2>&1 \
          >/dev/null | tail -1
      done
    done | python3 -c '
import statistics, sys
d = {}
for line in sys.stdin:
    m, e, u, s = line.split()
    d.setdefault(m, []).append((float(e), float(u) + float(s)))
med = lambda m, i: statistics.median(x[i] for x in d[m])
print("%-34s %12.3f %12.3f %12.3f %12.3f %+7.1f%%" % (sys.argv[1], med("thread", 0),
      med("process", 0), med("thread", 1), med("process", 1),
      100 * (med("process", 1) / med("thread", 1) - 1)))' "$cmd $(basename "$t")"
  done
done
echo "(median of $REPS interleaved runs; $(nproc) cores)"
