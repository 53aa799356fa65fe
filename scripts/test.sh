#!/usr/bin/env bash
# Sets up (packages + build) and runs the whole test suite. `.ci/run` calls this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
cd build
# The recording test runs perf on this machine (root, real kernel): on by default here.
export WAITPATH_RECORD_TESTS=${WAITPATH_RECORD_TESTS:-1}
# The VM lab (docs/lab.md) boots QEMU guests with LTTng's kernel tracer: on by default here
# (its guest image is cached under /var/tmp/waitpath-vmlab; the first build takes ~20 min).
export WAITPATH_VMLAB=${WAITPATH_VMLAB:-1}
# The bounded mutation run under AddressSanitizer and UBSan (label fuzz; its sanitizer build
# is incremental in build/fuzz-asan): on by default here.
export WAITPATH_FUZZ=${WAITPATH_FUZZ:-1}
ctest --output-on-failure --timeout 600 -j"$(nproc)"
