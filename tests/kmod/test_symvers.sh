#!/usr/bin/env bash
# kmod/lttng-symvers.sh on modules as the two kinds of kernel install them, made here with the
# host's assembler (no lttng-modules build needed): the symbol table and sections are what
# the kernel's export macros emit.
#  1. CONFIG_MODVERSIONS (Debian 12's 6.1): __crc_ symbols in __kcrctab{,_gpl}, read as CRCs;
#     an uncompressed .ko.
#  2. Without it (Debian sid's 7.x, DKMS 3 compressing to .ko.xz): __ksymtab_ symbols, CRC 0,
#     GPL-only when the symbol's __kflagstab byte has bit 0. Before, nothing was printed and
#     the probe module did not link (docs/lab.md, "The probe module against lttng-modules 2.16").
# usage: test_symvers.sh SOURCE_DIR
set -euo pipefail
SRC=$1
# shellcheck source=tests/lib.sh
. "$SRC/tests/lib.sh"
for t in as readelf xz; do command -v "$t" >/dev/null || skip "$t not installed"; done
tmp=$(mktemp -d /tmp/waitpath-symvers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/v/updates/dkms" "$tmp/n/updates/dkms"
as -o "$tmp/v/updates/dkms/lttng-tracer.ko" <<'ASM'
	.section "__ksymtab_gpl","a"
__ksymtab_lttng_gpl_one: .long 0, 0, 0
	.section "__ksymtab","a"
__ksymtab_lttng_plain: .long 0, 0, 0
	.section "__kcrctab_gpl","a"
__crc_lttng_gpl_one: .long 0x12345678
	.section "__kcrctab","a"
__crc_lttng_plain: .long 0x9abcdef0
ASM
as -o "$tmp/n/updates/dkms/lttng-tracer.ko" <<'ASM'
	.section "__ksymtab","a"
__ksymtab_lttng_kernel_probe_register: .long 0, 0, 0
__ksymtab_lttng_plain: .long 0, 0, 0
	.section "__kflagstab","a"
__flags_lttng_kernel_probe_register: .byte 1
__flags_lttng_plain: .byte 0
ASM
xz "$tmp/n/updates/dkms/lttng-tracer.ko"

line() { printf '%s\t%s\t%s\t%s\t' "$@"; }  # a Module.symvers line: crc symbol module type
got=$(sh "$SRC/kmod/lttng-symvers.sh" "$tmp/v")
m=$tmp/v/updates/dkms/lttng-tracer
want=$(line 0x12345678 lttng_gpl_one "$m" EXPORT_SYMBOL_GPL; echo
  line 0x9abcdef0 lttng_plain "$m" EXPORT_SYMBOL)
[ "$got" = "$want" ] || fail "with CRCs: got
$got
want
$want"

got=$(sh "$SRC/kmod/lttng-symvers.sh" "$tmp/n")
m=$tmp/n/updates/dkms/lttng-tracer
want=$(line 0x00000000 lttng_kernel_probe_register "$m" EXPORT_SYMBOL_GPL; echo
  line 0x00000000 lttng_plain "$m" EXPORT_SYMBOL)
[ "$got" = "$want" ] || fail "without CRCs, .ko.xz: got
$got
want
$want"

# No module: nothing, and no error (modpost then names what is missing).
[ -z "$(sh "$SRC/kmod/lttng-symvers.sh" "$tmp/none")" ] || fail "output without a module"
echo PASS
