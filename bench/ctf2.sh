#!/usr/bin/env bash
# The native decoder's CPU time on CTF 2 beside CTF 1.8: one run of tests/lttng216/ust_fields.c
# recorded by LTTng 2.16 into a CTF 2 and a CTF 1.8 session at once (the same events; the sid
# chroot of tests/lttng216/sid-chroot.sh, root), then `waitpath stats --json` on each, runs
# alternating (CTF 2, CTF 1.8, …) so that a busy period of this shared machine hits both;
# prints min/median/max CPU (user+sys) per format, the ns per event, and the median of the
# pair-by-pair ratios CTF 2 / CTF 1.8. The events are user-space ones the analysis does not use:
# each is still walked field by field (strings, sequences) to find the next.
# Usage: bench/ctf2.sh [RUNS] [ITERATIONS]   (default 9 runs, 40000 iterations: 340,000 events)
# Environment: WAITPATH (default build/app/waitpath), BENCH_WORK (default a fresh /var/tmp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-9} ITERATIONS=${2:-40000}
WAITPATH=${WAITPATH:-build/app/waitpath}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }
work=${BENCH_WORK:-$(mktemp -d /var/tmp/waitpath-ctf2.XXXXXX)}
[ -n "${BENCH_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

[ -d "$work/ctf2" ] || tests/lttng216/record-ust.sh "$work" --iterations "$ITERATIONS" >/dev/null
events=$((2 * (ITERATIONS * 4 + (ITERATIONS + 3) / 4)))
trace() { dirname "$(find "$work/$1" -name metadata | head -1)"; }
ctf2=$(trace ctf2) ctf18=$(trace ctf18)

# CPU seconds (user+sys) of `waitpath stats --json DIR`, the mean of 10 back to back (one is
# a few tens of ms: below the clock's resolution).
measure() {
  /usr/bin/time -f "%U %S" -o "$work/time" sh -c \
    'for i in 1 2 3 4 5 6 7 8 9 10; do "$0" stats --json "$1" >/dev/null 2>&1; done' \
    "$WAITPATH" "$1"
  awk '{printf "%.4f\n", ($1 + $2) / 10}' "$work/time"
}
a=() b=() r=()
for _ in $(seq "$RUNS"); do
  x=$(measure "$ctf2")
  y=$(measure "$ctf18")
  a+=("$x") b+=("$y") r+=("$(awk -v x="$x" -v y="$y" \
    'BEGIN { printf "%.3f", (y > 0 ? x / y : 0) }')")
done
stats() {
  printf '%s\n' "$@" | sort -g |
    awk '{v[NR] = $1} END {printf "%s %s %s\n", v[1], v[int((NR + 1) / 2)], v[NR]}'
}
per_event() { awk -v s="$1" -v n="$events" 'BEGIN { printf "%.0f", s * 1e9 / n }'; }
read -r amin amed amax <<<"$(stats "${a[@]}")"
read -r bmin bmed bmax <<<"$(stats "${b[@]}")"
read -r _ rmed _ <<<"$(stats "${r[@]}")"
echo "$events events, $RUNS runs each, CPU s min/median/max:"
echo "  CTF 2    $amin $amed $amax  ($(per_event "$amed") ns/event)"
echo "  CTF 1.8  $bmin $bmed $bmax  ($(per_event "$bmed") ns/event)"
echo "  CTF 2 / CTF 1.8, median of pairs: $rmed"
