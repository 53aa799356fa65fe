#!/usr/bin/env bash
# A cached Debian sid chroot with LTTng 2.16 (lttng-tools, lttng-ust) and babeltrace2 2.1:
# the first LTTng that writes CTF 2 (JSON metadata) by default, and the babeltrace2 that
# reads it, neither of which Debian 12 ships. Tests record reference traces with it and use
# its babeltrace2 as the oracle (docs/reading.md, "Which LTTng, which format").
#
#   sid-chroot.sh build [--refresh]  make the chroot if needed (--refresh: apt-get upgrade it
#                                    in place); prints the versions line
#   sid-chroot.sh run CMD...         runs CMD in the chroot (builds it first if needed)
#   sid-chroot.sh versions           prints "lttng-tools X babeltrace2 Y lttng-ust Z"
#
# The chroot is ${WAITPATH_SID_ROOT:-/var/tmp/waitpath-sid}. ROOT/.waitpath-sid-stamp records
# the package list it was made from and the installed versions; while it matches this
# script's list, `build` and `versions` only read it. The mirror is the host apt's
# (WAITPATH_SID_MIRROR overrides it).
#
# `run` gives each call its own mount namespace (unshare -m), so its mounts are invisible to
# the host and to concurrent calls and vanish with it: proc, sys, dev, dev/pts, private tmpfs
# on dev/shm (lttng-ust's shared memory), run (a root sessiond's /var/run/lttng) and tmp, and
# the host directories in WAITPATH_SID_BIND="dir1 dir2" at the same paths (read-only those in
# WAITPATH_SID_BIND_RO). CMD runs from the current directory when it exists inside (else /),
# in a clean environment (PATH, HOME, LANG, TERM; add more with `run env X=Y CMD`). When CMD
# ends, processes it left in the chroot are killed by pid and everything is unmounted, even on
# failure; run exits with CMD's status.
#
# Exits 77 (skip) with a one-line reason when not root, when debootstrap, chroot, unshare or
# flock is missing, or when the Debian mirror cannot be reached.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
# What the chroot must hold; its hash is the stamp's key (editing comments rebuilds nothing).
pkgs=(lttng-tools babeltrace2 liblttng-ust-dev gcc libc6-dev pkg-config procps)
key=$(printf 'sid %s\n' "${pkgs[*]}" | sha256sum | cut -c1-16)
apt_opts=(-o Acquire::Check-Valid-Until=false -o Dpkg::Use-Pty=0 -q -y)
chroot_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "sid-chroot: $*" >&2; }
die() { echo "sid-chroot: $*" >&2; exit 1; }

# ---- inside the private mount namespace (re-executed through unshare -m) -------------------
# __ns ROOT BIND CMD...: mounts, runs CMD chrooted, cleans up. Not for direct use.
ns_main() {
  root=$1
  local bind=$2 d rc
  shift 2
  mounted=()
  trap ns_cleanup EXIT
  # Make INT/TERM run the EXIT trap (bash skips it on a fatal signal otherwise).
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ns_mount -t proc proc "$root/proc"
  ns_mount -t sysfs sysfs "$root/sys"
  # A plain bind of /dev has no submounts: pts is bound on its own, and shm gets a fresh
  # tmpfs so that lttng-ust's shm files (and a sessiond's wait shm) stay apart from the host's.
  ns_mount --bind /dev "$root/dev"
  ns_mount --bind /dev/pts "$root/dev/pts"
  ns_mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
  # Private run and tmp: a sessiond's sockets and pid files neither outlive the call nor clash
  # with a concurrent call's.
  ns_mount -t tmpfs -o mode=755,nosuid,nodev run "$root/run"
  mkdir -m 1777 "$root/run/lock"
  ns_mount -t tmpfs -o mode=1777,nosuid,nodev tmp "$root/tmp"
  for d in $bind; do
    # A leading "ro:" (from WAITPATH_SID_BIND_RO) makes the view read-only.
    local ro=
    [ "${d#ro:}" = "$d" ] || { ro=1; d=${d#ro:}; }
    [ -d "$d" ] || die "WAITPATH_SID_BIND: $d is not a directory"
    d=$(readlink -f "$d")
    ns_mount --bind "$d" "$root$d"
    [ -z "$ro" ] || mount -o remount,bind,ro "$root$d"
  done
  # The name resolution of the host (apt in the chroot reaches the same mirror).
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # In the background so that a signal to this shell is handled at once (bash defers traps
  # while a foreground child runs): the EXIT trap then stops CMD and unmounts. `0<&0` keeps
  # stdin (an asynchronous command would get /dev/null); fd 8 is the cache lock, not CMD's.
  # shellcheck disable=SC2016  # (the $1 and $@ are the chroot's sh's)
  env -i PATH="$chroot_path" HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    DEBIAN_FRONTEND=noninteractive \
    chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' sh "$PWD" "$@" \
    0<&0 8>&- &
  rc=0
  wait $! || rc=$?
  exit "$rc"
}

ns_mount() {  # ns_mount MOUNT-ARGS... DEST
  local dest=${*: -1}
  mkdir -p "$dest"
  mount "$@"
  mounted+=("$dest")
}

# Processes still running chrooted in this namespace (daemons CMD forgot to stop).
ns_leftovers() {
  local me p
  me=$(readlink /proc/$$/ns/mnt)
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$me" ] || continue
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] || continue
    echo "${p#/proc/}"
  done
}

ns_cleanup() {
  local pids i
  mapfile -t pids < <(ns_leftovers)
  if [ ${#pids[@]} -gt 0 ]; then
    log "killing processes left in the chroot: ${pids[*]}"
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for i in $(seq 50); do
      mapfile -t pids < <(ns_leftovers)
      [ ${#pids[@]} -eq 0 ] && break
      sleep 0.1
    done
    if [ ${#pids[@]} -gt 0 ]; then kill -KILL "${pids[@]}" 2>/dev/null || true; sleep 0.2; fi
  fi
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null || true
  done
}

if [ "${1:-}" = __ns ]; then
  shift
  ns_main "$@"
fi

# ---- the cache ---------------------------------------------------------------------------
usage() { echo "usage: sid-chroot.sh build [--refresh] | run CMD... | versions" >&2; exit 2; }
[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
  build) [ $# -eq 0 ] || [ "$*" = --refresh ] || usage ;;
  run) [ $# -ge 1 ] || usage ;;
  versions) [ $# -eq 0 ] || usage ;;
  *) usage ;;
esac

[ "$(id -u)" -eq 0 ] || skip "the sid chroot needs root (debootstrap, chroot, mounts)"
for t in debootstrap chroot unshare flock mount; do
  command -v "$t" >/dev/null || skip "$t not installed (apt-get install debootstrap util-linux)"
done

root=${WAITPATH_SID_ROOT:-/var/tmp/waitpath-sid}
mkdir -p "$(dirname "$root")"
root=$(readlink -f "$root")
stamp=$root/.waitpath-sid-stamp

# Shared while reading or running, exclusive while building: a refresh never changes the
# chroot under a running call.
exec 8>"$root.lock"
flock -s 8

stamp_ok() { [ -f "$stamp" ] && grep -qx "key=$key" "$stamp"; }
stamp_get() { sed -n "s/^$1=//p" "$stamp"; }
versions_line() {
  echo "lttng-tools $(stamp_get lttng-tools) babeltrace2 $(stamp_get babeltrace2)" \
    "lttng-ust $(stamp_get lttng-ust)"
}

# `$self __ns` in a new mount namespace with private propagation (nothing leaks to the host).
in_ns() {  # in_ns ROOT BIND CMD...
  unshare -m --propagation private -- bash "$self" __ns "$@"
}

mirror() {
  local m=${WAITPATH_SID_MIRROR:-}
  # The host's Debian mirror (deb822 or one-line sources), as apt on the host uses it.
  [ -n "$m" ] || m=$(sed -n 's/^URIs: *\(\S*debian\/*\)$/\1/p' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$m" ] || m=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' \
    /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$m" ] || m=http://deb.debian.org/debian
  echo "$m"
}

# apt-get update + install (+ upgrade with --refresh) in TARGET, then the version checks and
# the stamp.
install_pkgs() {  # install_pkgs TARGET LOG [upgrade]
  local target=$1 logf=$2 upgrade=${3:-} script v_tools v_bt2 v_ust
  script="apt-get ${apt_opts[*]} update"
  [ -z "$upgrade" ] || script+=" && apt-get ${apt_opts[*]} upgrade"
  script+=" && apt-get ${apt_opts[*]} --no-install-recommends install ${pkgs[*]}"
  script+=" && apt-get clean"
  in_ns "$target" "" /bin/sh -c "$script" >>"$logf" 2>&1 ||
    { if grep -qE 'Could not (resolve|connect)|Failed to fetch|Temporary failure' "$logf"; then
        skip "the Debian mirror cannot be reached from the chroot (see $logf)"
      fi
      tail -25 "$logf" >&2
      die "package install failed (log above)"; }
  # shellcheck disable=SC2016  # dpkg-query's format, not the shell's
  v_tools=$(chroot "$target" dpkg-query -W -f '${Version}' lttng-tools)
  # shellcheck disable=SC2016
  v_bt2=$(chroot "$target" dpkg-query -W -f '${Version}' babeltrace2)
  # shellcheck disable=SC2016
  v_ust=$(chroot "$target" dpkg-query -W -f '${Version}' liblttng-ust-dev)
  # The point of the chroot is CTF 2: LTTng 2.15+ writes it, babeltrace2 2.1+ reads it.
  dpkg --compare-versions "$v_tools" ge 2.15 ||
    die "sid has lttng-tools $v_tools; CTF 2 needs 2.15 or later"
  dpkg --compare-versions "$v_bt2" ge 2.1 ||
    die "sid has babeltrace2 $v_bt2; CTF 2 needs 2.1 or later"
  printf 'key=%s\npackages=%s\nmirror=%s\nbuilt=%s\nlttng-tools=%s\nbabeltrace2=%s\n%s\n' \
    "$key" "${pkgs[*]}" "$(mirror)" "$(date -u +%FT%TZ)" "$v_tools" "$v_bt2" \
    "lttng-ust=$v_ust" >"$target/.waitpath-sid-stamp.tmp"
  mv "$target/.waitpath-sid-stamp.tmp" "$target/.waitpath-sid-stamp"
}

build() {  # build [refresh]
  local refresh=${1:-} t0 m work logf
  t0=$(date +%s)
  m=$(mirror)
  # Left by a build that was killed (none can be running: we hold the exclusive lock).
  rm -rf --one-file-system "$root".build.*
  if [ -x "$root/usr/bin/apt-get" ] && [ -f "$root/.waitpath-sid-debootstrapped" ]; then
    # A complete chroot whose package list changed, or --refresh: update it in place.
    log "refreshing $root from $m"
    logf=$root/.waitpath-sid-apt.log
    : >"$logf"
    install_pkgs "$root" "$logf" ${refresh:+upgrade}
  else
    work=$(mktemp -d "$root.build.XXXXXX")
    trap 'rm -rf --one-file-system "$work"' EXIT
    logf=$work.log
    log "debootstrap sid from $m into $root (log: $logf)"
    if ! nice -n 15 debootstrap --variant=minbase sid "$work" "$m" >"$logf" 2>&1; then
      if grep -qE 'Failed getting release file|Couldn.t download|unable to resolve' "$logf"; then
        skip "the Debian mirror $m cannot be reached (see $logf)"
      fi
      tail -20 "$logf" >&2
      die "debootstrap failed (log above)"
    fi
    # No daemon may start inside the chroot when a package is configured (lttng-tools ships
    # an lttng-sessiond service).
    printf '#!/bin/sh\nexit 101\n' >"$work/usr/sbin/policy-rc.d"
    chmod +x "$work/usr/sbin/policy-rc.d"
    touch "$work/.waitpath-sid-debootstrapped"
    log "installing ${pkgs[*]}"
    install_pkgs "$work" "$logf"
    rm -rf --one-file-system "$root"
    mv "$work" "$root"
    mv "$logf" "$root/.waitpath-sid-apt.log"
    trap - EXIT
  fi
  log "ready in $(($(date +%s) - t0)) s: $(versions_line)"
}

ensure_built() {  # ensure_built [refresh]
  if [ -n "${1:-}" ] || ! stamp_ok; then
    flock -x 8  # (converting the shared lock; another builder may go first)
    if [ -n "${1:-}" ] || ! stamp_ok; then build "${1:-}"; fi
    flock -s 8
  fi
}

case $cmd in
  build)
    ensure_built ${1:+refresh}
    versions_line
    ;;
  versions)
    ensure_built
    versions_line
    ;;
  run)
    ensure_built
    # exec: the caller's pid is the namespace's shell, so signalling it stops CMD and unmounts.
    binds=${WAITPATH_SID_BIND:-}
    for d in ${WAITPATH_SID_BIND_RO:-}; do binds+=" ro:$d"; done
    exec unshare -m --propagation private -- bash "$self" __ns "$root" "$binds" "$@"
    ;;
esac
