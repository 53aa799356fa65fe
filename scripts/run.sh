#!/usr/bin/env bash
# Sets up and runs waitpath. With no arguments it runs the main job on its embedded default:
# `waitpath demo` (a generated three-host system replayed live through a private LTTng relay
# daemon, analysed continuously, tailed here, metrics on 127.0.0.1:9464; Ctrl-C stops it all).
# With arguments, they are passed to `waitpath` as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
if (($#)); then
  exec build/app/waitpath "$@"
fi
exec build/app/waitpath demo
