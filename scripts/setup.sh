#!/usr/bin/env bash
# Installs every Debian package waitpath needs (only what is missing) and builds it, showing the
# build's progress. Idempotent and quiet when everything is already there.
# Usage: scripts/setup.sh [BUILD_DIR]  (WAITPATH_JOBS=N: build jobs, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

# What the built programs need to run: the libraries they link (the .deb's Depends: lists them,
# computed from the binaries) and the tools they start. `apt-get install ./waitpath_*.deb`
# installs the libraries by itself; lttng-tools is only recommended (live, tail --relayd, demo).
RUNTIME_PACKAGES=(
  libbabeltrace2-0                                # all trace reading (with its CTF plugins)
  libre2-9 libfmt9 libtomlplusplus3               # --watch regexes; formatting; --config
  libprometheus-cpp-core1.0 libcivetweb1         # the metrics endpoint (served by civetweb)
  liblttng-ust1                                   # waitpath-replay (the demo's replayer)
  libnats3.4                                      # live --shard: the bus (docs/scale.md)
  lttng-tools                                     # relay/session daemons: live, demo
  util-linux procps                               # the demo's namespaces (unshare, setpriv)
)

# What building and testing need on top.
DEVELOPMENT_PACKAGES=(
  build-essential cmake pkg-config                # toolchain
  ccache                                          # a clone's build reuses earlier builds' objects
  libbabeltrace2-dev babeltrace2                  # headers; the CLI for cross-checks
  liblttng-ust-dev                                # the UST replayer's tracepoint provider
  libconcurrentqueue-dev                          # moodycamel lock-free queues (header-only)
  prometheus-cpp-dev libcivetweb-dev prometheus   # metrics; promtool and a real server
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev  # JSON, CLI, formatting, config
  libre2-dev                                      # --watch regexes: linear-time matching
  libgtest-dev googletest                         # tests
  libnats-dev nats-server                         # the bus's client; a real server for tests
  help2man dpkg-dev fakeroot                      # man pages from --help; the .deb (cpack)
  systemd man-db                                  # package test: systemd-analyze, man
  linux-perf iproute2 python3                     # real kernel traces, netns hosts
  debootstrap qemu-system-x86 socat netcat-openbsd  # the VM lab: LTTng's kernel tracer in guests
  clang-format                                    # the 100-column format check
  tmux                                            # the terminal view test (capture-pane)
  chromium                                        # the timeline viewer in a real browser (headless)
)

missing=()
for p in "${RUNTIME_PACKAGES[@]}" "${DEVELOPMENT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
build_failed() {
  tail -n 60 "$log"
  echo "setup: build failed (last lines of its log above)" >&2
  exit 1
}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DWAITPATH_WERROR="${WAITPATH_WERROR:-ON}" \
  >"$log" 2>&1 || build_failed

# Progress: the build's percentage and what it is building, on one line rewritten on a terminal,
# a line per 10 % otherwise (CI logs); nothing when everything is up to date.
start=$SECONDS
progress() {
  shown=-10 working=""
  while IFS= read -r line; do
    [[ $line =~ ^\[\ *([0-9]+)%\]\ (Building|Linking|Generating|Man\ page)\ (.*) ]] || continue
    pct=${BASH_REMATCH[1]} what=${BASH_REMATCH[2]} target=${BASH_REMATCH[3]}
    working=1
    if [ -t 1 ]; then
      target=${target##* }
      printf '\rsetup: building %3d%% %-60.60s' "$pct" "$what ${target##*/}"
    elif ((pct >= shown + 10)); then
      shown=$((pct / 10 * 10))
      echo "setup: building $pct%"
    fi
  done
  if [ -n "$working" ] && [ -t 1 ]; then printf '\r%-80s\r' ""; fi
}
# (pipefail: the pipeline fails when the build does)
cmake --build "$BUILD_DIR" -j"${WAITPATH_JOBS:-$(nproc)}" 2>&1 | tee -a "$log" | progress ||
  build_failed
grep -qE '^\[ *[0-9]+%\] (Building|Linking)' "$log" &&
  echo "setup: built in $((SECONDS - start)) s ($BUILD_DIR)"
exit 0
