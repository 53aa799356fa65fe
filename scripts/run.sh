#!/usr/bin/env bash
# Sets up and runs waitpath. With no arguments it runs on the embedded default: the bundled
# sample traces. With arguments, they are passed to `waitpath` as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
if (($#)); then
  exec build/app/waitpath "$@"
fi
exec build/app/waitpath stats tests/fixtures/perf
