#!/usr/bin/env bash
# All of waitpath's benchmarks in one run: throughput against babeltrace2, the engine alone,
# memory, CPU use of the reader threads, callgrind instruction counts and a profile.
# Prints a table, writes bench/results/bench.json (and bench/results/bench.md, the same table
# in Markdown). Usage: bench/run.sh [--quick] [--keep]
#   --quick  smaller traces and fewer repetitions (< 2 min instead of < ~10 min)
#   --keep   keep the generated traces (printed path) instead of deleting them
# Environment: BUILD_DIR (default build-bench; configured and built here if needed),
# BENCH_WORK (where traces are generated, default a fresh directory under /var/tmp),
# WAITPATH_SHARED_TRACES (default ../shared/traces; many-threads is skipped if absent).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-bench}

# Tools the benchmarks need beyond scripts/setup.sh's (valgrind for instruction counts,
# GNU time for peak RSS); installed only if missing.
need=()
command -v valgrind >/dev/null || need+=(valgrind)
[ -x /usr/bin/time ] || need+=(time)
command -v perf >/dev/null || need+=(linux-perf)
if ((${#need[@]})); then
  echo "bench: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" \
    >/dev/null
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
         -DWAITPATH_WERROR="${WAITPATH_WERROR:-ON}" &&
       cmake --build "$BUILD_DIR" -j"$(nproc)" \
         --target waitpath waitpath-gen waitpath-replay waitpath_engine_bench; } >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "bench: build failed" >&2
  exit 1
fi
python3 bench/run.py --build "$BUILD_DIR" "$@"
# Several hosts read once against the two-pass analysis (docs/bench.md, "in one read").
if [[ " $* " == *" --quick "* ]]; then
  WAITPATH=$BUILD_DIR/app/waitpath GEN=$BUILD_DIR/tools/gen/waitpath-gen bench/one_pass.sh 3 1s
else
  WAITPATH=$BUILD_DIR/app/waitpath GEN=$BUILD_DIR/tools/gen/waitpath-gen bench/one_pass.sh 5
fi
# Live latency and scale need real LTTng daemons in namespaces (root); not in --quick.
if [[ " $* " != *" --quick "* ]]; then
  if [ "$(id -u)" -eq 0 ] && command -v lttng-relayd >/dev/null && command -v unshare \
    >/dev/null; then
    echo; echo "== live targets: latency (live timer 200 ms) and CPU per event, native reader" \
      "and babeltrace2 in turn"
    W=$BUILD_DIR/app/waitpath GEN=$BUILD_DIR/tools/gen/waitpath-gen \
      REPLAY=$BUILD_DIR/tools/replay/waitpath-replay \
      bench/live_targets.sh 3 8
    echo; echo "== live scale"
    W=$BUILD_DIR/app/waitpath GEN=$BUILD_DIR/tools/gen/waitpath-gen \
      REPLAY=$BUILD_DIR/tools/replay/waitpath-replay \
      bench/live_scale.sh 8
  else
    echo "bench: live latency and scale skipped (they need root and lttng-tools)"
  fi
fi
