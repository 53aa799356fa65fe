#!/usr/bin/env bash
# The relayd mutation run of CI (docs/live.md, "What a relayd, a trace and a metrics client can
# make waitpath do"): tests/fuzz/relayd_fuzz.cc built with AddressSanitizer and
# UndefinedBehaviorSanitizer (build_sanitized.sh, the ctest fixture fuzz_asan) runs N cases, each
# one reply of a scripted relayd serving the rpc fixture damaged, within BUDGET_S seconds; fails
# on a crash, a hang past the stop, an error that is not one printable line, or runaway memory.
# Opt-in like fuzz-mutations (scripts/test.sh turns it on): skips (77) unless WAITPATH_FUZZ=1.
# Usage: run_relayd_fuzz_ci.sh SOURCE_DIR BUILD_DIR [N] [BUDGET_S]
set -euo pipefail
if [ "${WAITPATH_FUZZ:-0}" != 1 ]; then
  echo "relayd fuzz: skipped (set WAITPATH_FUZZ=1)"
  exit 77
fi
src=$1 bin=$2 n=${3:-300} budget=${4:-75}
# The sanitizer build is the ctest fixture fuzz_asan's (build_sanitized.sh), made before.
if [ ! -x "$bin/tests/waitpath_relayd_fuzz" ]; then
  echo "relayd fuzz: no sanitizer build in $bin (tests/fuzz/build_sanitized.sh makes it)" >&2
  exit 1
fi
# UBSan aborts (its own exit would skip the driver's line naming the case).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:abort_on_error=1}
exec "$bin/tests/waitpath_relayd_fuzz" --cases "$n" --budget "$budget" \
  --seed "${WAITPATH_FUZZ_SEED:-1}"
