#!/bin/bash
# The man pages help2man makes from each command's --help and packaging/man/*.h2m
# (cmake/Packaging.cmake): waitpath(1)'s description said twice (its own and --help's line),
# EXIT STATUS without 141 and only on waitpath(1), no EXAMPLES on the commands' pages, and an
# option whose description help2man read as part of its name (tail's --max-lag).
#
# usage: test_man_pages.sh MAN_DIR
set -uo pipefail
man_dir=$1
fail() { echo "FAIL: $*"; exit 1; }
render() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$man_dir/$1.1.gz" 2>/dev/null; }
section() { render "$1" | awk -v s="$2" '/^[A-Z]/ { on = ($0 == s) } on'; }

description=$(section waitpath DESCRIPTION)
grep -q "tells why programs wait" <<<"$description" || fail "waitpath(1) has lost its description"
grep -q "Active-path analysis" <<<"$description" && fail "waitpath(1) says its description twice"
grep -q "Attach to an LTTng relay daemon" <<<"$(section waitpath-live DESCRIPTION)" &&
  fail "waitpath-live(1) says its description twice"
for page in waitpath waitpath-stats waitpath-analyze waitpath-sync waitpath-live waitpath-tail \
  waitpath-demo; do
  [ -e "$man_dir/$page.1.gz" ] || fail "no $page(1)"
  exit_status=$(section "$page" "EXIT STATUS")
  for code in 0 1 2 141; do
    grep -qE "^ +$code +" <<<"$exit_status" || fail "$page(1): EXIT STATUS without $code"
  done
  section "$page" EXAMPLES | grep -q "waitpath" || fail "$page(1): no EXAMPLES"
  # Every option is followed by its description (indented further), never by the next option.
  section "$page" OPTIONS | awk -v page="$page" '
    /^       -/ {
      if (tag) { print page ": " tag " has no description"; bad = 1 }
      # A short tag has its description on its own line, at the description column.
      tag = (substr($0, 14, 1) == " " && substr($0, 15, 1) != " ") ? "" : $0
      next
    }
    /^              [^ ]/ { tag = ""; next }
    END { if (tag) { print page ": " tag " has no description"; bad = 1 } exit bad }' ||
    fail "$page(1): an option without its description"
done
echo "PASS"
