#!/bin/sh
# ctest wrapper of the VM lab tests: opt-in (WAITPATH_VMLAB=1), see docs/lab.md.
#   run_test.sh [--extra] PYTHON3 test_lab.py WAITPATH TEST
# --extra: a case that only WAITPATH_VMLAB=all runs (the 2.16 guests recording CTF 1.8, the
# whole services table): CI runs the cases users meet by default, in its time budget.
extra=0
if [ "${1:-}" = --extra ]; then
  extra=1
  shift
fi
case "${WAITPATH_VMLAB:-0}" in
  all) ;;
  1)
    if [ $extra = 1 ]; then
      echo "SKIP: a variant of another lab case; WAITPATH_VMLAB=all runs it (docs/lab.md)"
      exit 77
    fi
    ;;
  *)
    echo "SKIP: the VM lab runs QEMU guests for minutes; set WAITPATH_VMLAB=1 (docs/lab.md)"
    exit 77
    ;;
esac
exec "$@"
