#!/usr/bin/env bash
# Builds (once) and caches the guest image of the VM lab (docs/lab.md): a Debian 12 root
# with a stock kernel and the LTTng kernel tracer (lttng-modules via DKMS, patched where the
# kernel needs it), as an ext4 image made without loop mounts, plus its kernel and initrd.
#
#   build-image.sh [--print-dir] [--force]
#
# The cache directory is /var/tmp/waitpath-vmlab/image-HASH (WAITPATH_VMLAB_CACHE overrides
# the parent), HASH covering this script (its package list and patches are in it): the image
# is rebuilt only when this file changes. Prints the cache directory on stdout when done.
# Exits 77 (skip) when debootstrap, chroot or mkfs.ext4 cannot run here.
set -euo pipefail

cache_root=${WAITPATH_VMLAB_CACHE:-/var/tmp/waitpath-vmlab}
force=0
for a in "$@"; do
  case $a in
    --force) force=1 ;;
    --print-dir) ;;  # the default; kept for scripts that ask for it explicitly
    *) echo "build-image.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "build-image: $*" >&2; }

self=$(readlink -f "${BASH_SOURCE[0]}")
hash=$(sha256sum "$self" | cut -c1-16)
out=$cache_root/image-$hash
if [ "$force" -eq 0 ] && [ -f "$out/done" ]; then
  echo "$out"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || skip "building the guest image needs root (debootstrap, chroot)"
for t in debootstrap chroot mkfs.ext4 sha256sum; do
  command -v "$t" >/dev/null || skip "$t not installed (apt-get install debootstrap e2fsprogs)"
done

# The host's Debian mirror (deb822 or one-line sources), as apt on the host uses it.
mirror=$(sed -n 's/^URIs: *\(\S*debian\/*\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

mkdir -p "$cache_root"
# One builder at a time per image.
exec 9>"$cache_root/image-$hash.lock"
flock 9
if [ "$force" -eq 0 ] && [ -f "$out/done" ]; then echo "$out"; exit 0; fi

work=$(mktemp -d "$cache_root/build-$hash.XXXXXX")
root=$work/root
mounted=()
cleanup() {
  local m
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mnt() {  # mnt TYPE_OR_--bind SRC DEST
  mkdir -p "$3"
  if [ "$1" = --bind ]; then mount --bind "$2" "$3"; else mount -t "$1" "$2" "$3"; fi
  mounted+=("$3")
}
in_root() { LC_ALL=C DEBIAN_FRONTEND=noninteractive chroot "$root" "$@"; }

t0=$(date +%s)
log "debootstrap bookworm from $mirror into $root"
nice -n 15 debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; echo "build-image: debootstrap failed" >&2; exit 1; }
t_debootstrap=$(($(date +%s) - t0))

mnt proc proc "$root/proc"
mnt sysfs sysfs "$root/sys"
mnt --bind /dev "$root/dev"
# No daemon starts inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

log "packages (kernel, headers, lttng-tools, babeltrace2, tools, compilers)"
apt_get() { in_root nice -n 15 apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "$@"; }
apt_get update >"$work/apt.log" 2>&1
apt_get install linux-image-amd64 linux-headers-amd64 lttng-tools babeltrace2 iproute2 kmod \
  socat procps gcc make libc6-dev dkms >>"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log" >&2; echo "build-image: package install failed" >&2; exit 1; }
kver=$(basename "$(ls -d "$root"/lib/modules/*/ | sort -V | tail -1)")
log "guest kernel $kver"

# lttng-modules last: unpacked, patched, then configured (DKMS builds it once, for the guest
# kernel, when the package is configured).
log "lttng-modules-dkms (unpack, patch, build for $kver)"
in_root apt-get -q -o Dpkg::Use-Pty=0 --download-only -y --no-install-recommends install lttng-modules-dkms \
  >>"$work/apt.log" 2>&1
deb=$(ls "$root"/var/cache/apt/archives/lttng-modules-dkms_*.deb)
in_root dpkg --unpack "/var/cache/apt/archives/$(basename "$deb")" >>"$work/apt.log" 2>&1
src=$(ls -d "$root"/usr/src/lttng-modules-*/ | tail -1)
src=${src%/}
lver=${src##*/lttng-modules-}
patches=()
# Linux added a `bool was_armed` argument to the hrtimer_start tracepoint (backported to
# 6.1.y); lttng-modules 2.13.9's probe still has the old prototype and fails with
# "conflicting types for 'trace_hrtimer_start'". Patch the probe only when the guest
# kernel's headers have the new argument.
kh=$(ls -d "$root"/usr/src/linux-headers-"${kver%-amd64}"-common 2>/dev/null || true)
if grep -qs 'was_armed' "$kh/include/trace/events/timer.h" &&
   ! grep -q 'was_armed' "$src/include/instrumentation/events/timer.h"; then
  sed -i -e 's/TP_PROTO(struct hrtimer \*hrtimer, enum hrtimer_mode mode),/TP_PROTO(struct hrtimer *hrtimer, enum hrtimer_mode mode, bool was_armed),/' \
    -e 's/TP_ARGS(hrtimer, mode),/TP_ARGS(hrtimer, mode, was_armed),/' \
    "$src/include/instrumentation/events/timer.h"
  grep -q 'bool was_armed' "$src/include/instrumentation/events/timer.h" ||
    { echo "build-image: could not patch hrtimer_start in lttng-modules $lver" >&2; exit 1; }
  patches+=(hrtimer_start-was_armed)
fi
# Debian's dkms.conf does not install the x86 IRQ vector and exception probes (the IPIs
# and the local timer interrupt that waitpath reads): add them.
if ! grep -q 'lttng-probe-x86-irq-vectors' "$src/dkms.conf"; then
  for p in lttng-probe-x86-irq-vectors lttng-probe-x86-exceptions; do
    printf '\nBUILT_MODULE_NAME[$i]="%s"\nBUILT_MODULE_LOCATION[$i]="src/probes/"\nDEST_MODULE_LOCATION[$i]="/extra/probes"\ni=$((i+1))\n' "$p" \
      >>"$src/dkms.conf"
  done
  patches+=(dkms.conf-x86-probes)
fi
in_root nice -n 15 dpkg --configure -a >>"$work/apt.log" 2>&1 || true
# The package's postinst builds for the newest kernel; make sure it is the guest's.
in_root nice -n 15 dkms install "lttng-modules/$lver" -k "$kver" >>"$work/apt.log" 2>&1 ||
  { grep -A3 -i 'error' "$root/var/lib/dkms/lttng-modules/$lver/build/make.log" 2>/dev/null | head -30 >&2
    echo "build-image: DKMS build of lttng-modules $lver for $kver failed" >&2; exit 1; }
for m in lttng-tracer lttng-probe-sched lttng-probe-x86-irq-vectors lttng-probe-timer; do
  in_root modinfo -k "$kver" "$m" >/dev/null 2>&1 || { echo "build-image: module $m missing for $kver" >&2; exit 1; }
done
t_packages=$(($(date +%s) - t0 - t_debootstrap))

# The lab's init (the per-boot part comes from the lab disk, see boot.sh / guest-init.sh).
cat >"$root/sbin/waitpath-lab-init" <<'INIT'
#!/bin/sh
# PID 1 of a lab guest: mounts the essentials and the lab disk (/dev/vdb, made per boot by
# the host), then runs its init.sh. Powers off when that returns.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /run /tmp /lab
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -o remount,rw /
if mount -t ext4 /dev/vdb /lab && [ -x /lab/init.sh ]; then
  /lab/init.sh
else
  echo "waitpath-lab-init: no lab disk (/dev/vdb with init.sh)"
fi
sync
echo o >/proc/sysrq-trigger
sleep 10
INIT
chmod +x "$root/sbin/waitpath-lab-init"
echo waitpath-guest >"$root/etc/hostname"
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf"
in_root apt-get clean
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}"; done
mounted=()

mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img"
log "mkfs.ext4 -d (2G image)"
nice -n 15 mkfs.ext4 -q -F -L waitpath-guest -d "$root" "$work/out/image.ext4" 2G
t_total=$(($(date +%s) - t0))
used=$(du -sm "$root" | cut -f1)
cat >"$work/out/info.json" <<JSON
{"kernel": "$kver", "lttng_modules": "$lver", "patches": "${patches[*]:-}", "mirror": "$mirror",
 "build_seconds": $t_total, "debootstrap_seconds": $t_debootstrap, "packages_seconds": $t_packages,
 "root_mib": $used, "built": "$(date -u +%FT%TZ)"}
JSON
touch "$work/out/done"
rm -rf "$out"
mv "$work/out" "$out"
log "done in ${t_total} s (debootstrap ${t_debootstrap} s, packages+DKMS ${t_packages} s): $out"
echo "$out"
