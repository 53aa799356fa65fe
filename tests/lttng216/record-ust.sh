#!/usr/bin/env bash
# Records the LTTng 2.16 reference traces of tests/fixtures/lttng216/: ust_fields.c (one event
# class per field type family) traced by lttng-tools/lttng-ust 2.16 in the sid chroot
# (sid-chroot.sh), into two sessions at once from one run of the program, so both traces
# hold the very same events (same payloads, same order per stream; timestamps a few hundred
# ns apart, as each session's buffer reads the clock itself): the default format (CTF 2) in
# OUTDIR/ctf2 and `--trace-format=ctf-1.8` in OUTDIR/ctf18.
#
#   record-ust.sh OUTDIR [--fixtures DIR] [--iterations N] [--per-channel]
#
# --per-channel records with one ring buffer for the whole channel (`lttng enable-channel
# --buffer-allocation=per-channel`, LTTng 2.14+): one stream whose packets carry every CPU's
# events, each packet's cpu_id saying which CPU wrote it; the fixtures are then named
# ust-perchannel-ctf2 and ust-perchannel-ctf18.
# --fixtures DIR also copies each trace, flattened to one directory (metadata, the stream
# files, index/, without lttng's ust/uid/0/64-bit nesting), to DIR/ust-ctf2 and DIR/ust-ctf18.
# The session is local (lttng create --output); a root lttng-sessiond --no-kernel runs in the
# chroot for the recording only (in the call's private /run), and is stopped by pid.
# Exits 77 (skip) when the chroot cannot be built (see sid-chroot.sh).
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# The session's settings: one per-UID channel, 512 KiB per CPU (nothing is lost) in small
# sub-buffers (several packets per stream; little padding on disk), and the contexts the
# fixtures must carry.
channel=chan
subbuf=(--subbuf-size=16K --num-subbuf=32)
contexts=(-t vpid -t vtid -t procname)

# ---- inside the chroot ---------------------------------------------------------------------
if [ "${1:-}" = --in-chroot ]; then
  out=$2 iterations=$3 allocation=$4
  # The client's .lttngrc and the daemon's home stay in the call's private /tmp.
  export LTTNG_HOME=/tmp/lttng-home
  mkdir -p "$LTTNG_HOME" /tmp/ust_fields
  gcc -O2 -Wall -Wextra -I"$here" -o /tmp/ust_fields/ust_fields "$here/ust_fields.c" \
    -llttng-ust -ldl -lpthread
  lttng-sessiond --no-kernel 2>/tmp/sessiond.log &
  sessiond=$!
  trap 'kill "$sessiond" 2>/dev/null; wait "$sessiond" 2>/dev/null || true' EXIT
  # -n: never spawn a daemon of its own, just ask whether ours answers.
  for _ in $(seq 100); do lttng -n list >/dev/null 2>&1 && break; sleep 0.1; done
  lttng -n list >/dev/null || { cat /tmp/sessiond.log >&2; exit 1; }
  for fmt in ctf2 ctf18; do
    s=waitpath-$fmt
    args=()
    [ "$fmt" = ctf18 ] && args=(--trace-format=ctf-1.8)
    lttng -n create "$s" --output="$out/$fmt" "${args[@]}"
    lttng -n enable-channel -u -s "$s" "${subbuf[@]}" --buffer-allocation="$allocation" \
      "$channel"
    lttng -n add-context -u -s "$s" -c "$channel" "${contexts[@]}"
    lttng -n enable-event -u -s "$s" -c "$channel" 'ust_fields:*'
    lttng -n start "$s"
  done
  lttng -n list
  echo "+ ust_fields $iterations"
  /tmp/ust_fields/ust_fields "$iterations"
  for fmt in ctf2 ctf18; do lttng -n stop "waitpath-$fmt"; lttng -n destroy "waitpath-$fmt"; done
  # Each trace must hold every event, none discarded: 4 per iteration and thread, plus a
  # blob event every 4th iteration.
  want=$((2 * (iterations * 4 + (iterations + 3) / 4)))
  for fmt in ctf2 ctf18; do
    got=$(babeltrace2 "$out/$fmt" 2>/tmp/bt2.err | wc -l)
    if [ "$got" -ne "$want" ] || grep -qi 'discarded' /tmp/bt2.err; then
      cat /tmp/bt2.err >&2
      echo "record-ust: $fmt: $got events, want $want" >&2
      exit 1
    fi
    echo "$fmt: $got events"
  done
  exit 0
fi

# ---- on the host ---------------------------------------------------------------------------
usage() {
  echo "usage: record-ust.sh OUTDIR [--fixtures DIR] [--iterations N] [--per-channel]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
out=$1
shift
fixtures='' iterations=300 allocation=per-cpu prefix=ust
while [ $# -gt 0 ]; do
  case $1 in
    --per-channel) allocation=per-channel prefix=ust-perchannel; shift ;;
    --fixtures) [ $# -ge 2 ] || usage; fixtures=$2; shift 2 ;;
    --iterations) [ $# -ge 2 ] || usage; iterations=$2; shift 2 ;;
    *) usage ;;
  esac
done
mkdir -p "$out"
out=$(readlink -f "$out")
# lttng refuses nothing but would mix a previous recording's files with the new ones.
rm -rf "$out/ctf2" "$out/ctf18"
# Builds the chroot if needed; 77 when it cannot, which we pass on.
rc=0
WAITPATH_SID_BIND="$here $out" "$here/sid-chroot.sh" run \
  bash "$here/record-ust.sh" --in-chroot "$out" "$iterations" "$allocation" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

if [ -n "$fixtures" ]; then
  for fmt in ctf2 ctf18; do
    # lttng-tools writes OUT/ust/uid/UID/64-bit/{metadata,chan_N,index/}: exactly one here.
    meta=$(find "$out/$fmt" -name metadata -type f)
    [ "$(echo "$meta" | wc -l)" -eq 1 ] ||
      { echo "record-ust: not one trace in $out/$fmt" >&2; exit 1; }
    rm -rf "${fixtures:?}/$prefix-$fmt"
    mkdir -p "$fixtures"
    cp -r "$(dirname "$meta")" "$fixtures/$prefix-$fmt"
    # lttng-consumerd writes 0660 files; fixtures are readable by all, like the others.
    chmod -R u=rwX,go=rX "$fixtures/$prefix-$fmt"
    echo "$fixtures/$prefix-$fmt: $(du -sk "$fixtures/$prefix-$fmt" | cut -f1) KiB"
  done
fi
