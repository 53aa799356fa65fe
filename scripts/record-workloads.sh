#!/usr/bin/env bash
# Records the programs of tools/workloads/ system-wide with perf, converts each
# recording to CTF and writes, next to each trace, an expect file stating what the
# analysis must find (schema: docs/workloads.md).
#
#   scripts/record-workloads.sh [--bin DIR] [--build-dir DIR] [OUTDIR] [WORKLOAD...]
#
#   OUTDIR      default: build-wl/traces (tests/fixtures/perf holds the committed set)
#   WORKLOAD    rpc forkchain sleeper mutex pipe contention diskwrite (default: all)
#   --bin DIR   take the wl-* programs from DIR instead of building them
#   --build-dir DIR   where to build them (default: build-wl/standalone)
#   --fill-idle auto|none|CPU[,CPU...]   keep these CPUs out of their idle task
#               while recording (wl-idle-fill, SCHED_IDLE), because perf loses
#               every sample taken in idle on some CPUs of some kernels; "auto"
#               (default) probes which CPUs lose them (docs/workloads.md)
#
# Writes OUTDIR/<workload>/ (CTF: metadata + perf_stream_<cpu>) and
# OUTDIR/<workload>.expect.json. Needs root (system-wide tracepoints), perf,
# babeltrace2, python3, and cmake + a C compiler unless --bin is given.
set -euo pipefail

die() { echo "record-workloads: $*" >&2; exit 1; }
note() { echo "record-workloads: $*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
spec="$repo/tools/workloads/workloads.json"
helper="$repo/tools/workloads/wl_expect.py"
bin=""
build_dir="$repo/build-wl/standalone"
outdir=""
fill_idle=auto
workloads=()

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) [[ $# -ge 2 ]] || die "--bin needs a directory"; bin=$2; shift 2 ;;
    --build-dir) [[ $# -ge 2 ]] || die "--build-dir needs a directory"; build_dir=$2; shift 2 ;;
    --fill-idle)
      [[ $# -ge 2 ]] || die "--fill-idle needs auto, none or a CPU list"; fill_idle=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) if [[ -z "$outdir" ]]; then outdir=$1; else workloads+=("$1"); fi; shift ;;
  esac
done
outdir=${outdir:-$repo/build-wl/traces}

for tool in perf babeltrace2 python3; do
  command -v "$tool" >/dev/null ||
    die "'$tool' not found in PATH (Debian: linux-perf, babeltrace2, python3)"
done
[[ $(id -u) -eq 0 ]] || die "system-wide tracepoints need root; run with sudo"
[[ -f "$spec" && -f "$helper" ]] || die "missing $spec or $helper"

known=$(python3 "$helper" list --spec "$spec")
if [[ ${#workloads[@]} -eq 0 ]]; then
  read -r -a workloads <<<"$known"
fi
for wl in "${workloads[@]}"; do
  [[ " $known " == *" $wl "* ]] || die "unknown workload '$wl' (known: $known)"
done

if [[ -z "$bin" ]]; then
  command -v cmake >/dev/null ||
    die "cmake not found; build the programs yourself and pass --bin DIR"
  # Configure tools/workloads on its own: recording must not depend on the
  # analysis' build dependencies.
  cmake -S "$repo/tools/workloads" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null \
    || die "cmake configure of tools/workloads into $build_dir failed"
  cmake --build "$build_dir" --target workloads -j"$(nproc)" >/dev/null \
    || die "building the workloads in $build_dir failed (run: cmake --build $build_dir)"
  bin=$build_dir
fi
bin=$(cd "$bin" && pwd) || die "--bin directory '$bin' does not exist"

tmp=$(mktemp -d /var/tmp/record-workloads.XXXXXX)
filler_pids=()
cleanup() {
  for pid in "${filler_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Scheduling, interrupt, timer, network, block and IPI events (docs/workloads.md).
# Some exist in tracefs but cannot be enabled for sampling (irq_vectors:irq_work_exit
# on kernel 6.18 with perf 6.1: "No permission to enable ... event"), so the list is
# tried once and what perf names is dropped; an _entry/_exit pair is kept or dropped
# together so that interrupt nesting stays balanced for the analysis.
candidates=(
  sched:sched_switch sched:sched_waking sched:sched_wakeup_new
  sched:sched_process_fork sched:sched_process_exit sched:sched_process_free
  task:task_rename
  irq:irq_handler_entry irq:irq_handler_exit irq:softirq_entry irq:softirq_exit
  timer:hrtimer_expire_entry timer:hrtimer_expire_exit
  net:net_dev_queue net:netif_receive_skb
  block:block_rq_issue block:block_rq_complete
  irq_vectors:call_function_single_entry irq_vectors:call_function_single_exit
  irq_vectors:call_function_entry irq_vectors:call_function_exit
  irq_vectors:reschedule_entry irq_vectors:reschedule_exit
  irq_vectors:local_timer_entry irq_vectors:local_timer_exit
  irq_vectors:irq_work_entry irq_vectors:irq_work_exit
)
tracefs=/sys/kernel/tracing
[[ -d $tracefs/events ]] || tracefs=/sys/kernel/debug/tracing
probe() { perf record -q -a -e "$1" -o "$tmp/probe.data" -- true >"$tmp/probe.log" 2>&1; }
drop=()
for ev in "${candidates[@]}"; do  # unknown tracepoints: cheap to see in tracefs
  [[ ! -d $tracefs/events || -d $tracefs/events/${ev/://} ]] || drop+=("$ev")
done
events=()
for attempt in $(seq 1 ${#candidates[@]}); do
  for ev in "${drop[@]}"; do
    case "$ev" in
      *_entry) drop+=("${ev%_entry}_exit") ;;
      *_exit) drop+=("${ev%_exit}_entry") ;;
    esac
  done
  events=()
  for ev in "${candidates[@]}"; do [[ " ${drop[*]} " == *" $ev "* ]] || events+=("$ev"); done
  probe "$(IFS=,; echo "${events[*]}")" && break
  named=$(grep -o 'enable [a-z0-9_]*:[a-z0-9_]* event' "$tmp/probe.log" | head -n 1 |
    cut -d' ' -f2) || true
  if [[ -z "$named" || " ${drop[*]} " == *" $named "* ]]; then
    die "perf cannot record the event list: $(head -n 2 "$tmp/probe.log" | tr '\n' ' ')"
  fi
  drop+=("$named")
done
rm -f "$tmp/probe.data" "$tmp/probe.data.old"
[[ ${#drop[@]} -eq 0 ]] ||
  note "skipping events this kernel/perf cannot record: $(printf '%s\n' "${drop[@]}" | sort -u |
  tr '\n' ' ')"
[[ " ${events[*]} " == *" sched:sched_switch "* ]] ||
  die "cannot record sched:sched_switch; is perf usable here?"
event_list=$(IFS=,; echo "${events[*]}")

# Which CPUs lose their idle-task samples: they are seen switching to idle
# (next_pid=0, recorded from the previous task) but record nothing as pid 0.
if [[ $fill_idle == auto ]]; then
  perf record -q -a -e sched:sched_switch -o "$tmp/idle.data" -- sleep 0.3 >/dev/null 2>&1 \
    || die "perf record -a -e sched:sched_switch failed; is perf usable here?"
  # perf script prints "TID [CPU] prev_comm=... next_pid=N ..." whatever the -F order.
  fill_idle=$(perf script -i "$tmp/idle.data" -F tid,cpu,trace 2>/dev/null | awk '
    { cpu = $2; gsub(/[^0-9]/, "", cpu); cpu += 0 }
    $1 == 0 { idle[cpu] = 1 }
    / next_pid=0 / { toidle[cpu] = 1 }
    END { for (c in toidle) if (!(c in idle)) { printf "%s%s", sep, c; sep = "," } }')
  rm -f "$tmp/idle.data" "$tmp/idle.data.old"
  fill_idle=${fill_idle:-none}
fi
if [[ $fill_idle != none ]]; then
  [[ $fill_idle =~ ^[0-9]+(,[0-9]+)*$ ]] ||
    die "--fill-idle wants auto, none or CPUs like 1,3; got '$fill_idle'"
  [[ -x "$bin/wl-idle-fill" ]] || die "program $bin/wl-idle-fill not found (build it, or fix --bin)"
  note "perf loses idle samples on CPU(s) $fill_idle here: keeping them busy with wl-idle-fill" \
    "(SCHED_IDLE)"
  for cpu in ${fill_idle//,/ }; do
    "$bin/wl-idle-fill" --cpu "$cpu" --max-ms 600000 &
    filler_pids+=($!)
  done
  sleep 0.1  # let the fillers settle on their CPUs before the first recording
  for pid in "${filler_pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || die "wl-idle-fill (pid $pid) exited at once; see its error above"
  done
fi

mkdir -p "$outdir"
for wl in "${workloads[@]}"; do
  read -r -a cmd <<<"$(python3 "$helper" command --spec "$spec" --workload "$wl")"
  [[ -x "$bin/${cmd[0]}" ]] || die "program $bin/${cmd[0]} not found (build it, or fix --bin)"
  trace="$outdir/$wl"
  rm -rf "$trace" "$outdir/$wl.expect.json"

  # The programs write scratch files (wl-diskwrite) into the current directory's
  # neighbour /var/tmp by default; run them from the temp dir regardless.
  (cd "$tmp" && perf record -q -a -e "$event_list" -o "$tmp/perf.data" -- \
      "$bin/${cmd[0]}" "${cmd[@]:1}" >"$tmp/$wl.out" 2>"$tmp/$wl.err") \
    || die "$wl: recording failed: $(tail -n 3 "$tmp/$wl.err" | tr '\n' ' ')"
  perf data convert --to-ctf "$trace" -i "$tmp/perf.data" >"$tmp/convert.log" 2>&1 \
    || die "$wl: perf data convert --to-ctf failed: $(tail -n 2 "$tmp/convert.log" | tr '\n' ' ')"
  rm -f "$tmp/perf.data" "$tmp/perf.data.old"

  # waitpath reads streams itself, but note whether babeltrace2's muxer accepts
  # the trace: it rejects traces whose streams go back in time.
  muxer_ok=1
  babeltrace2 "$trace" -o dummy >/dev/null 2>"$tmp/bt.err" || muxer_ok=0
  [[ $muxer_ok -eq 1 ]] || note "$wl: babeltrace2's muxer rejects the trace; counting without it"

  python3 "$helper" write --spec "$spec" --workload "$wl" --trace "$trace" \
    --muxer-ok "$muxer_ok" --program-output "$tmp/$wl.out" --idle-filled "$fill_idle" \
    --events "$event_list" --output "$outdir/$wl.expect.json" \
    || die "$wl: writing $outdir/$wl.expect.json failed"
  echo "$wl: $(du -sk "$trace" | cut -f1) KiB, $(python3 \
    -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' \
    "$outdir/$wl.expect.json") events -> $trace"
done
