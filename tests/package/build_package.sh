#!/bin/bash
# Builds the .deb of an already built tree with CPack into OUT_DIR (the fixture of the package
# tests: test_package.sh and test_package_demo.sh install it).
# usage: build_package.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1 out=$2
rm -rf "$out"
mkdir -p "$out"
# CPack installs the build tree into a staging directory, strips the binaries and computes
# Depends with dpkg-shlibdeps.
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log"
  echo "FAIL: cpack -G DEB failed"
  exit 1
fi
rm -rf "$out/_CPack_Packages"
debs=("$out"/waitpath_*.deb)
[ -f "${debs[0]}" ] || {
  cat "$out/cpack.log"
  echo "FAIL: no waitpath_*.deb in $out"
  exit 1
}
echo "built ${debs[0]} ($(du -h "${debs[0]}" | cut -f1))"
dpkg-deb --info "${debs[0]}"
