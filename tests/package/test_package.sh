#!/bin/bash
# Installs the built .deb into a fresh root and runs it there. The root holds only the files of
# the package and of the packages its Depends: pull in, recursively (taken from this machine's
# installed packages, as apt would install them), so a library missing from Depends: makes the
# binaries fail to start here. In that root (chroot):
#  - the package's fields: Depends computed from the binaries' libraries, Recommends lttng-tools;
#  - every file the issue asks for: binaries, the demo's files, configs/, man pages, bash
#    completion, the systemd unit, /etc/waitpath/waitpath.toml (a conffile);
#  - waitpath --version, waitpath-gen --help, waitpath-replay --help;
#  - waitpath analyze on a recorded trace (the shared bug446190 if present, and the repository's
#    perf rpc fixture): same report as the build tree's binary;
#  - systemd-analyze verify on the installed unit, and security --offline: exposure <= 2.0;
#  - the man pages render; bash completion completes subcommands and flags.
#
# usage: test_package.sh DEB_DIR BUILD_WAITPATH SOURCE_DIR SHARED_TRACES
# Exit 77 (skipped) only without systemd-analyze or a way to chroot (root or user namespaces).
set -uo pipefail
deb_dir=$1 build_waitpath=$2 src=$3 shared=$4

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

command -v systemd-analyze >/dev/null || skip "systemd-analyze not found (apt-get install systemd)"
if [ "$(id -u)" -eq 0 ]; then
  in_root() { chroot "$root" "$@"; }
elif unshare -r true 2>/dev/null; then
  in_root() { unshare -r chroot "$root" "$@"; }
else
  skip "cannot chroot (not root, no user namespaces)"
fi

debs=("$deb_dir"/waitpath_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || fail "no package in $deb_dir (the package-build test makes it)"

work=$(mktemp -d /tmp/waitpath-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"

# --- the package's fields -----------------------------------------------------------------------
field() { dpkg-deb --field "$deb" "$1"; }
depends=$(field Depends)
echo "Depends: $depends"
echo "Recommends: $(field Recommends)"
for lib in libbabeltrace2-0 libre2 libfmt libprometheus-cpp-core libcivetweb \
  libstdc++6 libc6; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
field Recommends | grep -qw lttng-tools || fail "Recommends lacks lttng-tools"
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles | grep -qx /etc/waitpath/waitpath.toml ||
  fail "/etc/waitpath/waitpath.toml is not a conffile"

# --- a root with the package's dependencies, and the package ----------------------------------
# This machine is merged-/usr (Debian 12): /bin, /lib... are links into /usr, there too.
for link in bin sbin lib lib32 lib64 libx32; do
  [ -L "/$link" ] && ln -s "$(readlink "/$link")" "$root/$link"
done
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64" "$root/tmp" \
  "$root/etc"

# The closure of Depends: (and Pre-Depends:), each alternative group by its first installed
# member; the packages must be installed on this machine (setup.sh installs the runtime set).
declare -A seen=()
queue=()
add_deps() {
  local group alt name
  IFS=',' read -ra groups <<<"$1"
  for group in "${groups[@]}"; do
    [ -n "${group// /}" ] || continue
    name=""
    IFS='|' read -ra alts <<<"$group"
    for alt in "${alts[@]}"; do
      alt=${alt%%(*}
      alt=${alt// /}
      alt=${alt%:any}
      if dpkg-query -W -f='${Status}' "$alt" 2>/dev/null | grep -q "install ok installed"; then
        name=$alt
        break
      fi
    done
    # Only a virtual package can be missing here (its provider is among the others, e.g.
    # debconf-2.0); a real one would be an uninstallable Depends of ours.
    [ -n "$name" ] || {
      echo "note: no installed package for '$group' (virtual?)"
      continue
    }
    [ -n "${seen[$name]:-}" ] || {
      seen[$name]=1
      queue+=("$name")
    }
  done
}
add_deps "$depends"
for ((i = 0; i < ${#queue[@]}; i++)); do
  add_deps "$(dpkg-query -W -f='${Depends}, ${Pre-Depends}' "${queue[$i]}")"
done
echo "root: ${#queue[@]} packages from Depends: ${queue[*]}"
for p in "${queue[@]}"; do dpkg -L "$p"; done |
  grep -v -e '^/usr/share/doc' -e '^/usr/share/man' -e '^/usr/share/locale' -e '^/usr/share/info' |
  sort -u | while read -r f; do
  # Files only (directories come with them); what a minimal image excluded is not there.
  if [ -L "$f" ] || [ -f "$f" ]; then echo "${f#/}"; fi
done >"$work/files"
tar -C / --no-recursion -cf - -T "$work/files" | tar -C "$root" --keep-directory-symlink -xf - ||
  fail "copying the dependencies into the root failed"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || [ -e "$root/lib/ld-linux.so.2" ] ||
  fail "no dynamic loader in the root (libc6 not pulled in?)"
grep -q "^/usr/bin/waitpath$" < <(dpkg-deb --contents "$deb" | awk '{print substr($6, 2)}') ||
  fail "the package has no /usr/bin/waitpath"
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x failed"
echo "root: $(du -sh "$root" | cut -f1)"

# --- the files --------------------------------------------------------------------------------
for f in usr/bin/waitpath usr/bin/waitpath-gen usr/bin/waitpath-replay \
  usr/share/waitpath/demo.toml usr/share/waitpath/replay-hosts.sh \
  usr/share/waitpath/configs/waitpath.toml usr/share/waitpath/configs/systemd/waitpath.service \
  usr/share/waitpath/configs/prometheus/waitpath.rules.yml \
  usr/share/waitpath/configs/grafana/waitpath.json \
  usr/share/waitpath/configs/lttng/waitpath-session.sh \
  usr/lib/systemd/system/waitpath.service etc/waitpath/waitpath.toml \
  usr/share/bash-completion/completions/waitpath usr/share/doc/waitpath/README.md \
  usr/share/man/man1/waitpath.1.gz; do
  [ -e "$root/$f" ] || fail "the package has no /$f"
done
for f in usr/bin/waitpath usr/bin/waitpath-gen usr/bin/waitpath-replay \
  usr/share/waitpath/replay-hosts.sh usr/share/waitpath/configs/lttng/waitpath-session.sh; do
  [ -x "$root/$f" ] || fail "/$f is not executable"
done
for sub in stats analyze sync live tail demo; do
  [ -e "$root/usr/share/man/man1/waitpath-$sub.1.gz" ] || fail "no man page waitpath-$sub(1)"
done
for page in "$root"/usr/share/man/man1/*.1.gz; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
  LC_ALL=C.UTF-8 MANWIDTH=100 man -l "$page" 2>/dev/null | grep -q "^SEE ALSO" ||
    fail "$(basename "$page") renders no SEE ALSO section"
done

# --- the binaries, from the root --------------------------------------------------------------
version=$(in_root /usr/bin/waitpath --version) || fail "waitpath --version failed in the root"
echo "waitpath --version: $version"
[ "$version" = "$("$build_waitpath" --version)" ] || fail "version differs from the build tree's"
in_root /usr/bin/waitpath-gen --help >/dev/null || fail "waitpath-gen --help failed in the root"
in_root /usr/bin/waitpath-replay --help >/dev/null ||
  fail "waitpath-replay --help failed in the root"

traces=("$src/tests/fixtures/perf/rpc")
if [ -d "$shared/bug446190" ]; then
  traces+=("$shared/bug446190")
else
  echo "note: $shared/bug446190 absent, only the repository's fixture"
fi
for trace in "${traces[@]}"; do
  name=$(basename "$trace")
  mkdir -p "$root/tmp/traces"
  cp -r "$trace" "$root/tmp/traces/$name"
  in_root /usr/bin/waitpath analyze --json "/tmp/traces/$name" >"$work/$name.installed.json" \
    2>"$work/$name.err" || {
    cat "$work/$name.err"
    fail "waitpath analyze $name failed in the root"
  }
  # The same trace at the same path for the build tree's binary: same report, byte for byte.
  mkdir -p /tmp/traces.$$ && cp -r "$trace" "/tmp/traces.$$/$name"
  "$build_waitpath" analyze --json "/tmp/traces.$$/$name" 2>/dev/null |
    sed "s|/tmp/traces.$$/|/tmp/traces/|g" >"$work/$name.build.json"
  rm -rf "/tmp/traces.$$"
  [ -s "$work/$name.installed.json" ] || fail "waitpath analyze $name printed nothing"
  cmp -s "$work/$name.installed.json" "$work/$name.build.json" ||
    fail "waitpath analyze $name: the installed binary's report differs from the build tree's"
  echo "waitpath analyze $name: $(wc -l <"$work/$name.installed.json") JSON lines, as the build's"
done

# --- the systemd unit ---------------------------------------------------------------------------
unit=$root/usr/lib/systemd/system/waitpath.service
# verify: loads the unit as in the root (ExecStart's binary must be there), with the units of
# the systemd package of this machine (targets it is ordered after, wanted by); its man: link is
# looked up in the root's man pages.
dpkg -L systemd | grep -E '^(/usr)?/lib/systemd/system/[^/]+$' | sed 's|^/||' >"$work/units"
tar -C / --no-recursion -cf - -T "$work/units" | tar -C "$root" --keep-directory-symlink -xf - ||
  fail "copying systemd's units into the root failed"
if ! MANPATH=$root/usr/share/man systemd-analyze verify --root="$root" "$unit" \
  >"$work/verify.log" 2>&1; then
  cat "$work/verify.log"
  fail "systemd-analyze verify failed on the installed unit"
fi
[ -s "$work/verify.log" ] && {
  cat "$work/verify.log"
  fail "systemd-analyze verify warned about the installed unit"
}
systemd-analyze security --offline=yes --root="$root" "$unit" >"$work/security.log" 2>&1
exposure=$(sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p' "$work/security.log")
[ -n "$exposure" ] || {
  cat "$work/security.log"
  fail "systemd-analyze security gave no exposure level"
}
echo "systemd-analyze security: exposure $exposure"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || {
  grep "✗" "$work/security.log"
  fail "exposure $exposure > 2.0"
}

# --- bash completion ----------------------------------------------------------------------------
complete_words() { # LINE...: what completing the last word of LINE offers
  # (the root's binaries answer --help, with this machine's libraries)
  PATH=$root/usr/bin:$PATH bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    _waitpath; printf "%s\n" "${COMPREPLY[@]}"' _ \
      "$root/usr/share/bash-completion/completions/waitpath" "$@"
}
complete_words waitpath an | grep -qx analyze || fail "completion: waitpath an -> no analyze"
complete_words waitpath analyze --wa | grep -qx -- --watch ||
  fail "completion: waitpath analyze --wa -> no --watch"
complete_words waitpath live --rel | grep -qx -- --relayd ||
  fail "completion: waitpath live --rel -> no --relayd"
complete_words waitpath-gen --sc | grep -qx -- --scenario ||
  fail "completion: waitpath-gen --sc -> no --scenario"
for name in waitpath-gen waitpath-replay; do
  [ -e "$root/usr/share/bash-completion/completions/$name" ] || fail "no completion for $name"
done
echo "PASS"
