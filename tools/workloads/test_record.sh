#!/usr/bin/env bash
# ctest "workloads-record": records one workload with scripts/record-workloads.sh
# into a temp dir and checks that a CTF trace and its expect file came out.
# Opt-in (needs root, perf, and about ten seconds): WAITPATH_RECORD_TESTS=1.
#   test_record.sh REPO_DIR BIN_DIR [WORKLOAD]
set -euo pipefail
if [[ "${WAITPATH_RECORD_TESTS:-0}" != 1 ]]; then
  echo "skipped: set WAITPATH_RECORD_TESTS=1 to record a real perf trace"
  exit 77
fi
repo=$1 bin=$2 wl=${3:-sleeper}
out=$(mktemp -d /var/tmp/wl-record-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$repo/scripts/record-workloads.sh" --bin "$bin" "$out" "$wl"
[[ -f "$out/$wl/metadata" ]] || { echo "FAIL: no $out/$wl/metadata"; exit 1; }
compgen -G "$out/$wl/perf_stream_*" >/dev/null ||
  { echo "FAIL: no perf_stream_* in $out/$wl"; exit 1; }
python3 "$repo/tools/workloads/wl_expect.py" check "$out" --full
