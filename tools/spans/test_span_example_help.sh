#!/bin/sh
# waitpath-span-example --help prints its usage and runs nothing (it ran the example with 0
# requests, printing "span-example: 0 requests"); a mistyped argument is refused with exit 2.
set -u
example=$1
out=$("$example" --help) || { echo "FAIL: --help exited $?"; exit 1; }
first=$(printf '%s\n' "$out" | head -n 1)
[ "$first" = "usage: waitpath-span-example [REQUESTS] [--jaeger]" ] ||
  { echo "FAIL: --help printed: $out"; exit 1; }
for bad in --jeager 0 -5 12x; do
  "$example" "$bad" >/dev/null 2>&1
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: '$bad' exited $rc, not 2"; exit 1; }
done
echo "PASS"
