#!/bin/sh
# Prints a Module.symvers for the symbols that the installed lttng-modules export (their CRCs
# read from the modules' __kcrctab sections), so that modpost versions our references to them
# as it did for lttng-modules' own probes (whose build tree DKMS has removed).
#   lttng-symvers.sh /lib/modules/KVER [MODULE...]
# MODULE: the lttng modules to read (default lttng-tracer, the one the probes link against).
# Prints nothing when none is found or readelf is missing: modpost then warns and leaves
# those symbols unversioned (the kernel loads the probe all the same, with a warning).
dir=${1:?usage: lttng-symvers.sh /lib/modules/KVER [MODULE...]}
shift
[ $# -gt 0 ] || set -- lttng-tracer
command -v readelf >/dev/null || exit 0
for m in "$@"; do
  ko=$(find "$dir" -name "$m.ko" 2>/dev/null | head -1)
  [ -n "$ko" ] || continue
  # One pass: the sections (index, name, file offset), the __kcrctab* contents as words, the
  # __crc_ symbols (section index, offset in it).
  {
    readelf -SW "$ko" | sed -n 's/^ *\[ *\([0-9]*\)\] \([^ ]*\) *[A-Z_]* *[0-9a-f]* \([0-9a-f]*\) \([0-9a-f]*\) .*/S \1 \2 \3 \4/p'
    readelf -sW "$ko" | awk '$8 ~ /^__crc_/ {print "C", $7, $2, substr($8, 7)}'
  } >"${TMPDIR:-/tmp}/lttng-symvers.$$"
  for sec in $(awk '$1 == "S" && $3 ~ /^__kcrctab/ {print $2 ":" $4 ":" $5}' "${TMPDIR:-/tmp}/lttng-symvers.$$"); do
    idx=${sec%%:*} rest=${sec#*:}
    od -An -v -tx4 -w4 -j $((0x${rest%%:*})) -N $((0x${rest#*:})) "$ko" |
      awk -v idx="$idx" '{printf "W %s %x %s\n", idx, (NR - 1) * 4, $1}'
  done >>"${TMPDIR:-/tmp}/lttng-symvers.$$"
  awk -v ko="${ko%.ko}" '
    $1 == "S" { name[$2] = $3 }
    $1 == "W" { word[$2 " " $3] = $4 }
    $1 == "C" { csec[$4] = $2; coff[$4] = $3 }
    END {
      for (s in csec) {
        off = coff[s]; sub(/^0+/, "", off); if (off == "") off = "0"
        k = csec[s] " " off
        if (!(k in word)) continue
        type = name[csec[s]] ~ /_gpl$/ ? "EXPORT_SYMBOL_GPL" : "EXPORT_SYMBOL"
        printf "0x%s\t%s\t%s\t%s\t\n", word[k], s, ko, type
      }
    }' "${TMPDIR:-/tmp}/lttng-symvers.$$" | sort -k2
  rm -f "${TMPDIR:-/tmp}/lttng-symvers.$$"
done
