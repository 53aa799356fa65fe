#!/usr/bin/env bash
# Sets up and runs waitpath. With no arguments it runs on the embedded default: the bundled
# sample traces. With arguments, they are passed to `waitpath` as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
if (($#)); then
  exec build/app/waitpath "$@"
fi
# Embedded default: the bundled real traces, one workload at a time.
for w in rpc forkchain mutex diskwrite; do
  echo "== $w: $(python3 -c "import json; print(json.load(open('tests/fixtures/perf/$w.expect.json'))['description'])")"
  build/app/waitpath analyze --watch 'comm=wl-(?!idle).*' --top 4 "tests/fixtures/perf/$w"
  echo
done
