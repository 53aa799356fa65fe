#!/usr/bin/env bash
# Installs every Debian package waitpath needs (only what is missing) and builds it.
# Idempotent and quiet when everything is already there. Usage: scripts/setup.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

PACKAGES=(
  build-essential cmake pkg-config                # toolchain
  libbabeltrace2-dev babeltrace2                  # all trace reading; the CLI for cross-checks
  lttng-tools liblttng-ust-dev                    # real relay/session daemons, UST replayer
  libconcurrentqueue-dev                          # moodycamel lock-free queues
  prometheus-cpp-dev prometheus                   # metrics endpoint; promtool and a real server
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev  # JSON, CLI, formatting, config
  libre2-dev                                      # --watch regexes: linear-time matching
  libgtest-dev googletest                         # tests
  linux-perf iproute2 python3 procps util-linux   # real kernel traces, netns hosts, demo namespaces
  debootstrap qemu-system-x86 socat netcat-openbsd  # the VM lab: LTTng's kernel tracer in guests
  clang-format                                    # the 100-column format check
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAITPATH_WERROR="${WAITPATH_WERROR:-ON}" >"$log" 2>&1 ||
   ! cmake --build "$BUILD_DIR" -j"$(nproc)" >>"$log" 2>&1; then
  tail -n 60 "$log"
  echo "setup: build failed (full log above)" >&2
  exit 1
fi
