#!/usr/bin/env bash
# The bounded mutation run of CI (docs/reading.md, "Hostile input"): tools/fuzz/fuzz.py with
# `waitpath` built with AddressSanitizer and UndefinedBehaviorSanitizer (build_sanitized.sh, the
# ctest fixture fuzz_asan): N damaged copies of the shared traces and the fixtures, `stats` and
# `analyze` on each, as many cases at once as there are cores; fails on any crash, hang or
# runaway memory.
# Opt-in like the VM lab (scripts/test.sh turns it on): skips (77) unless WAITPATH_FUZZ=1.
# Usage: run_fuzz_ci.sh SOURCE_DIR BUILD_DIR [N] [BUDGET_S] [fuzz.py options, e.g. --decoder native]
set -euo pipefail
if [ "${WAITPATH_FUZZ:-0}" != 1 ]; then
  echo "fuzz: skipped (set WAITPATH_FUZZ=1)"
  exit 77
fi
src=$1 bin=$2 n=${3:-200} budget=${4:-300}
# The sanitizer build is the ctest fixture fuzz_asan's (build_sanitized.sh), made before.
if [ ! -x "$bin/app/waitpath" ]; then
  echo "fuzz: no sanitizer build in $bin (tests/fuzz/build_sanitized.sh makes it)" >&2
  exit 1
fi
exec python3 "$src/tools/fuzz/fuzz.py" --waitpath "$bin/app/waitpath" -n "$n" --budget "$budget" \
  --jobs "$(nproc)" --timeout 30 --seed "${WAITPATH_FUZZ_SEED:-1}" \
  --json "$bin/fuzz-results${5:+-native}.json" "${@:5}"
