#!/usr/bin/env bash
# The ctest fixture `fuzz_asan` of the CI mutation runs: builds, once for all of them, what they
# run under AddressSanitizer and UBSan (`waitpath`, `waitpath_relayd_fuzz`) on every core, so that
# the runs themselves build nothing and can go beside other tests (docs/testing.md).
# Opt-in like them: skips (77) unless WAITPATH_FUZZ=1.
#   build_sanitized.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
if [ "${WAITPATH_FUZZ:-0}" != 1 ]; then
  echo "fuzz: skipped (set WAITPATH_FUZZ=1)"
  exit 77
fi
src=$1 bin=$2
start=$(date +%s)
# shellcheck source=tests/fuzz/sanitizer_build.sh
. "$src/tests/fuzz/sanitizer_build.sh"
sanitizer_build "$src" "$bin" waitpath "$bin.build.log"
sanitizer_build "$src" "$bin" waitpath_relayd_fuzz "$bin.relayd-build.log"
echo "fuzz: sanitizer build ready in $(($(date +%s) - start)) s"
