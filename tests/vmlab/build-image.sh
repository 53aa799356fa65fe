#!/usr/bin/env bash
# Builds (once) and caches the guest image of the VM lab (docs/lab.md): a Debian root with a
# stock kernel and the LTTng kernel tracer (lttng-modules via DKMS, patched where the kernel
# needs it), as an ext4 image made without loop mounts, plus its kernel and initrd.
#
#   build-image.sh [--suite bookworm|sid] [--print-dir] [--force]
#
# --suite bookworm (the default): Debian 12, lttng-modules and lttng-tools 2.13.
# --suite sid: Debian's development suite, LTTng 2.16 (CTF 2 by default; docs/lab.md,
#   "LTTng 2.16 guests").
# The cache directory is /var/tmp/waitpath-vmlab/image-HASH for bookworm and
# /var/tmp/waitpath-vmlab/sid/image-HASH for sid (WAITPATH_VMLAB_CACHE overrides
# /var/tmp/waitpath-vmlab), HASH covering this script (its package lists and patches are in
# it) and the suite: an image is rebuilt only when this file changes. Prints the cache
# directory on stdout when done. Exits 77 (skip) when debootstrap, chroot or mkfs.ext4 cannot
# run here.
set -euo pipefail

cache_root=${WAITPATH_VMLAB_CACHE:-/var/tmp/waitpath-vmlab}
force=0
suite=bookworm
while [ $# -gt 0 ]; do
  case $1 in
    --force) force=1 ;;
    --print-dir) ;;  # the default; kept for scripts that ask for it explicitly
    --suite) suite=${2:-}; shift ;;
    --suite=*) suite=${1#--suite=} ;;
    *) echo "build-image.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
case $suite in
  bookworm | sid) ;;
  *) echo "build-image.sh: --suite is bookworm or sid (got '$suite')" >&2; exit 2 ;;
esac
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "build-image: $*" >&2; }

self=$(readlink -f "${BASH_SOURCE[0]}")
if [ "$suite" = bookworm ]; then
  hash=$(sha256sum "$self" | cut -c1-16)
else
  # Each suite its own cache directory and key.
  cache_root=$cache_root/$suite
  hash=$( { echo "suite $suite"; cat "$self"; } | sha256sum | cut -c1-16)
fi
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
log "debootstrap $suite from $mirror into $root"
nice -n 15 debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
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
apt_opts=(-o Dpkg::Use-Pty=0)
# The development suite's Release file can read as expired against this machine's clock.
[ "$suite" = bookworm ] || apt_opts+=(-o Acquire::Check-Valid-Until=false)
apt_get() { in_root nice -n 15 apt-get -y -q "${apt_opts[@]}" --no-install-recommends "$@"; }
apt_get update >"$work/apt.log" 2>&1
# initramfs-tools, named: sid's kernel prefers dracut, whose host-only initrd made in a chroot
# has no ext4 module (the guest stops at "Failed to mount sysroot.mount"); initramfs-tools'
# (MODULES=most) boots, as bookworm's always did.
apt_get install linux-image-amd64 linux-headers-amd64 initramfs-tools lttng-tools babeltrace2 \
  iproute2 kmod socat procps gcc make libc6-dev dkms >>"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log" >&2; echo "build-image: package install failed" >&2; exit 1; }
kver=$(basename "$(ls -d "$root"/lib/modules/*/ | sort -V | tail -1)")
log "guest kernel $kver"

# lttng-modules last: unpacked, patched, then configured (DKMS builds it once, for the guest
# kernel, when the package is configured).
log "lttng-modules-dkms (unpack, patch, build for $kver)"
apt_get --download-only install lttng-modules-dkms >>"$work/apt.log" 2>&1
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
# and the local timer interrupt that waitpath reads): add them, each only when the kernel has
# its tracepoint header (lttng-modules' Kbuild builds it only then; Linux 7.2 has no
# asm/trace/exceptions.h, and DKMS fails on a listed module that was not built).
if ! grep -q 'lttng-probe-x86-irq-vectors' "$src/dkms.conf"; then
  for p in irq_vectors exceptions; do
    [ -f "$kh/arch/x86/include/asm/trace/$p.h" ] || continue
    printf '\nBUILT_MODULE_NAME[$i]="%s"\nBUILT_MODULE_LOCATION[$i]="src/probes/"\nDEST_MODULE_LOCATION[$i]="/extra/probes"\ni=$((i+1))\n' \
      "lttng-probe-x86-${p//_/-}" >>"$src/dkms.conf"
    patches+=("dkms.conf-x86-${p//_/-}")
  done
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
# Processes a package's scripts left running in the chroot (they keep /dev busy): named in
# the log, then ended by pid.
left=()
for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && left+=("${p#/proc/}")
done
if [ ${#left[@]} -gt 0 ]; then
  for p in "${left[@]}"; do log "ending pid $p left in the chroot: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"; done
  kill -TERM "${left[@]}" 2>/dev/null || true
  sleep 2
  kill -KILL "${left[@]}" 2>/dev/null || true
  sleep 0.5
fi
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
  umount "${mounted[i]}" || { log "umount ${mounted[i]} failed; detaching it (umount -l)"; umount -l "${mounted[i]}"; }
done
mounted=()

mkdir -p "$work/out"
cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$work/out/initrd.img"
# shellcheck disable=SC2016  # dpkg-query's format
tver=$(in_root dpkg-query -W -f '${Version}' lttng-tools)
used=$(du -sm "$root" | cut -f1)
# 2 GiB, or the root and 1 GiB free when it is bigger (the guests write their builds there).
size=$((used + 1024 > 2048 ? used + 1024 : 2048))
log "mkfs.ext4 -d (${size}M image, root ${used} MiB)"
nice -n 15 mkfs.ext4 -q -F -L waitpath-guest -d "$root" "$work/out/image.ext4" "${size}M"
t_total=$(($(date +%s) - t0))
cat >"$work/out/info.json" <<JSON
{"suite": "$suite", "kernel": "$kver", "lttng_modules": "$lver", "lttng_tools": "$tver",
 "patches": "${patches[*]:-}", "mirror": "$mirror",
 "build_seconds": $t_total, "debootstrap_seconds": $t_debootstrap, "packages_seconds": $t_packages,
 "root_mib": $used, "built": "$(date -u +%FT%TZ)"}
JSON
touch "$work/out/done"
rm -rf "$out"
mv "$work/out" "$out"
log "done in ${t_total} s (debootstrap ${t_debootstrap} s, packages+DKMS ${t_packages} s): $out"
echo "$out"
