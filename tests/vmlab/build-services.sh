#!/usr/bin/env bash
# Builds (once) and caches the VM lab's *services layer* (docs/lab.md, section 7): the cached
# bookworm guest image (build-image.sh, unchanged) with Debian 12's PostgreSQL, nginx, Redis
# and their load generators installed in a chroot of a copy of it, plus a small ext4 disk
# holding PostgreSQL's cluster (a pgbench database), which the guests put under dm-delay.
#
#   build-services.sh [--force]
#
# The cache directory is /var/tmp/waitpath-vmlab/services-HASH (WAITPATH_VMLAB_CACHE
# overrides the parent), HASH covering this script and the base image's directory name (itself
# the hash of build-image.sh): the layer is rebuilt when either changes, the base never is.
# Prints the cache directory on stdout. A separate script, not an option of build-image.sh,
# because the base image's cache key is build-image.sh's own hash: editing it would rebuild
# the base (20 minutes in CI). Needs root and a loop device (the copy is mounted to install
# into it); exits 77 (skip) without them.
set -euo pipefail

cache_root=${WAITPATH_VMLAB_CACHE:-/var/tmp/waitpath-vmlab}
force=0
for a in "$@"; do
  case $a in
    --force) force=1 ;;
    *) echo "build-services.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "build-services: $*" >&2; }
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

[ "$(id -u)" -eq 0 ] || skip "building the services layer needs root (mount, chroot)"
rc=0
base=$(bash "$here/build-image.sh") || rc=$?
[ "$rc" -eq 0 ] || { [ "$rc" -eq 77 ] && skip "no base image"; exit "$rc"; }
# Its last line: when it builds the image, mkfs.ext4's "Creating regular file ..." comes first.
base=${base##*$'\n'}
hash=$( { basename "$base"; cat "$(readlink -f "${BASH_SOURCE[0]}")"; } | sha256sum | cut -c1-16)
out=$cache_root/services-$hash
if [ "$force" -eq 0 ] && [ -f "$out/done" ]; then
  echo "$out"
  exit 0
fi
for t in losetup mount chroot mkfs.ext4 resize2fs e2fsck; do
  command -v "$t" >/dev/null || skip "$t not installed"
done

exec 9>"$cache_root/services-$hash.lock"
flock 9
if [ "$force" -eq 0 ] && [ -f "$out/done" ]; then echo "$out"; exit 0; fi

t0=$(date +%s)
work=$(mktemp -d "$cache_root/build-services-$hash.XXXXXX")
root=$work/root
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
mnt() {  # mnt TYPE_OR_--bind_OR_-oloop SRC DEST
  mkdir -p "$3"
  case $1 in
    --bind) mount --bind "$2" "$3" ;;
    loop) mount -o loop "$2" "$3" ;;
    *) mount -t "$1" "$2" "$3" ;;
  esac
  mounted+=("$3")
}
in_root() { LC_ALL=C DEBIAN_FRONTEND=noninteractive chroot "$root" "$@"; }

# A copy of the base (sparse), grown by 1 GiB for the packages and what the guests write.
mkdir -p "$work/out"
cp --sparse=always "$base/image.ext4" "$work/out/image.ext4"
size=$(($(stat -c %s "$work/out/image.ext4") / 1048576 + 1024))
# -D rebuilds the directories: without it the kernel's first new entry in a directory made
# by mkfs.ext4 -d (/sbin) failed its checksum ("No space for directory leaf checksum") and the
# guest's init was not found.
e2fsck -f -y -D "$work/out/image.ext4" >/dev/null 2>&1 || true
resize2fs "$work/out/image.ext4" "${size}M" >/dev/null 2>&1
losetup -f >/dev/null 2>&1 || skip "no free loop device"
mnt loop "$work/out/image.ext4" "$root" || skip "cannot loop-mount the image copy"
mnt proc proc "$root/proc"
mnt sysfs sysfs "$root/sys"
mnt --bind /dev "$root/dev"
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

log "packages (postgresql, nginx, redis, load generators) into a copy of $base"
apt_get() { in_root nice -n 15 apt-get -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "$@"; }
apt_get update >"$work/apt.log" 2>&1
# pgbench comes with postgresql-15; redis-benchmark with redis-tools; ab with apache2-utils;
# dmsetup drives dm-delay (the disk injection); python3 runs the web tier's small app.
apt_get install postgresql postgresql-contrib nginx-light redis-server redis-tools \
  apache2-utils curl dmsetup python3 >>"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log" >&2; echo "build-services: package install failed" >&2; exit 1; }
pgver=$(ls "$root/usr/lib/postgresql" | sort -V | tail -1)
t_packages=$(($(date +%s) - t0))

# PostgreSQL for the lab: reachable from the other guest, commits that reach the disk (the
# defaults, stated), no background work a short run would see as noise (autovacuum, a
# checkpoint), small buffers for a 1 GiB guest.
conf=/etc/postgresql/$pgver/main
cat >"$root$conf/conf.d/waitpath-lab.conf" <<EOF
listen_addresses = '*'
max_connections = 40
shared_buffers = 32MB
fsync = on
synchronous_commit = on
full_page_writes = on
autovacuum = off
checkpoint_timeout = 30min
max_wal_size = 1GB
EOF
echo "host all all 192.168.77.0/24 trust" >>"$root$conf/pg_hba.conf"
log "pgbench database (scale 1) in the cluster"
in_root pg_ctlcluster "$pgver" main start >>"$work/apt.log" 2>&1
in_root su postgres -c "createdb bench && pgbench -q -i -s 1 bench" >>"$work/apt.log" 2>&1 ||
  { tail -20 "$work/apt.log" >&2; echo "build-services: pgbench -i failed" >&2; exit 1; }
in_root pg_ctlcluster "$pgver" main stop >>"$work/apt.log" 2>&1
# The cluster's files go on their own disk (pgdata.ext4, /dev/vdc in the guest, under
# dm-delay): made from /var/lib/postgresql/VERSION, mounted back there.
du_pg=$(du -sm "$root/var/lib/postgresql/$pgver" | cut -f1)
mkfs.ext4 -q -F -L pgdata -d "$root/var/lib/postgresql/$pgver" "$work/out/pgdata.ext4" 512M
rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf"
in_root apt-get clean
vers=$(in_root dpkg-query -W -f '${Package}=${Version} ' postgresql-"$pgver" nginx-light \
  redis-server)
left=()
for p in /proc/[0-9]*; do
  [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && left+=("${p#/proc/}")
done
if [ ${#left[@]} -gt 0 ]; then
  for p in "${left[@]}"; do
    log "ending pid $p left in the chroot: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
  done
  kill -TERM "${left[@]}" 2>/dev/null || true
  sleep 2
  kill -KILL "${left[@]}" 2>/dev/null || true
fi
used=$(df -m --output=used "$root" | tail -1 | tr -d ' ')
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}"; done
mounted=()
e2fsck -f -n "$work/out/image.ext4" >"$work/fsck.log" 2>&1 ||
  { tail -20 "$work/fsck.log" >&2; echo "build-services: the image has errors" >&2; exit 1; }
cp "$base/vmlinuz" "$base/initrd.img" "$work/out/"
t_total=$(($(date +%s) - t0))
cat >"$work/out/info.json" <<JSON
{"suite": "bookworm", "layer": "services", "base": "$(basename "$base")",
 "kernel": $(sed -n 's/.*"kernel": *\("[^"]*"\).*/\1/p' "$base/info.json"),
 "lttng_modules": $(sed -n 's/.*"lttng_modules": *\("[^"]*"\).*/\1/p' "$base/info.json"),
 "lttng_tools": $(sed -n 's/.*"lttng_tools": *\("[^"]*"\).*/\1/p' "$base/info.json"),
 "postgresql": "$pgver", "packages": "${vers% }", "pgdata_mib": $du_pg,
 "build_seconds": $t_total, "packages_seconds": $t_packages, "used_mib": $used,
 "built": "$(date -u +%FT%TZ)"}
JSON
touch "$work/out/done"
rm -rf "$out"
mv "$work/out" "$out"
log "done in ${t_total} s (packages ${t_packages} s): $out"
echo "$out"
