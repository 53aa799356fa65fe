#!/bin/sh
# Prints a Module.symvers for the symbols that the installed lttng-modules export, so that
# modpost knows them (and versions our references to them) as it did for lttng-modules' own
# probes, whose build tree DKMS has removed.
#   lttng-symvers.sh /lib/modules/KVER [MODULE...]
# MODULE: the lttng modules to read (default lttng-tracer, the one the probes link against),
# as installed: MODULE.ko, or compressed (.ko.xz, .ko.zst, .ko.gz: DKMS 3 compresses them).
# With CONFIG_MODVERSIONS each symbol's CRC is read from the module's __kcrctab sections (the
# __crc_ symbols); without it (Debian's kernels from 7.x) the exports are the __ksymtab_
# symbols, with CRC 0 as the kernel's own Module.symvers then has, GPL-only when their
# __kflagstab byte (the __flags_ symbols) or their __ksymtab_gpl section says so.
# Prints nothing when none is found or readelf is missing: modpost then fails on the probe's
# references (or, with KBUILD_MODPOST_WARN, warns).
dir=${1:?usage: lttng-symvers.sh /lib/modules/KVER [MODULE...]}
shift
[ $# -gt 0 ] || set -- lttng-tracer
command -v readelf >/dev/null || exit 0
work=$(mktemp -d "${TMPDIR:-/tmp}/lttng-symvers.XXXXXX") || exit 0
trap 'rm -rf "$work"' EXIT
for m in "$@"; do
  found=$(find "$dir" \( -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" \
    -o -name "$m.ko.gz" \) 2>/dev/null | head -1)
  [ -n "$found" ] || continue
  ko=$found
  case $found in
    *.ko.xz) ko=$work/$m.ko; xz -dc "$found" >"$ko" 2>/dev/null || continue ;;
    *.ko.zst) ko=$work/$m.ko; zstd -qdc "$found" >"$ko" 2>/dev/null || continue ;;
    *.ko.gz) ko=$work/$m.ko; gzip -dc "$found" >"$ko" 2>/dev/null || continue ;;
  esac
  # Named, as modpost names them, by the installed module's path without its suffix.
  name=${found%.gz}
  name=${name%.zst}
  name=${name%.xz}
  name=${name%.ko}
  # One pass: the sections (S index name offset size), the contents of the __kcrctab* and
  # __kflagstab sections (W index offset value: 4-byte words, 1-byte flags), the symbols that
  # matter (C section offset name for __crc_, K section name for __ksymtab_, F section offset
  # name for __flags_).
  {
    readelf -SW "$ko" |
      sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) *[A-Z_]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\) .*/S \1 \2 \3 \4/p'  # noqa: line-length
    readelf -sW "$ko" | awk '
      $8 ~ /^__crc_/ { print "C", $7, $2, substr($8, 7) }
      $8 ~ /^__ksymtab_/ { print "K", $7, substr($8, 11) }
      $8 ~ /^__flags_/ { print "F", $7, $2, substr($8, 9) }'
  } >"$work/elf"
  for sec in $(awk '$1 == "S" && $3 ~ /^__kcrctab/ {print $2 ":" $4 ":" $5}' "$work/elf"); do
    idx=${sec%%:*} rest=${sec#*:}
    od -An -v -tx4 -w4 -j $((0x${rest%%:*})) -N $((0x${rest#*:})) "$ko" |
      awk -v idx="$idx" '{printf "W %s %x %s\n", idx, (NR - 1) * 4, $1}'
  done >>"$work/elf"
  for sec in $(awk '$1 == "S" && $3 == "__kflagstab" {print $2 ":" $4 ":" $5}' "$work/elf"); do
    idx=${sec%%:*} rest=${sec#*:}
    od -An -v -tx1 -w1 -j $((0x${rest%%:*})) -N $((0x${rest#*:})) "$ko" |
      awk -v idx="$idx" '{printf "W %s %x %s\n", idx, NR - 1, $1}'
  done >>"$work/elf"
  awk -v ko="$name" '
    function key(sec, off) { sub(/^0+/, "", off); return sec " " (off == "" ? "0" : off) }
    $1 == "S" { secname[$2] = $3 }
    $1 == "W" { word[$2 " " $3] = $4 }
    $1 == "C" { csec[$4] = $2; coff[$4] = $3 }
    $1 == "K" && $3 != "strings" { ksec[$3] = $2 }
    $1 == "F" { fsec[$4] = $2; foff[$4] = $3 }
    END {
      for (s in csec) {
        k = key(csec[s], coff[s])
        if (!(k in word)) continue
        type = secname[csec[s]] ~ /_gpl$/ ? "EXPORT_SYMBOL_GPL" : "EXPORT_SYMBOL"
        printf "0x%s\t%s\t%s\t%s\t\n", word[k], s, ko, type
        versioned++
      }
      if (versioned > 0) exit
      for (s in ksec) {
        gpl = secname[ksec[s]] ~ /_gpl$/
        if (s in fsec) {
          k = key(fsec[s], foff[s])
          if (k in word) gpl = index("13579bdf", substr(word[k], 2, 1)) > 0  # bit 0: GPL only
        }
        printf "0x00000000\t%s\t%s\t%s\t\n", s, ko, gpl ? "EXPORT_SYMBOL_GPL" : "EXPORT_SYMBOL"
      }
    }' "$work/elf" | sort -k2
done
