#!/usr/bin/env bash
# Sets up (packages + build) and runs the whole test suite. `.ci/run` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
ctest --output-on-failure --timeout 600 -j"$(nproc)"
