#!/bin/sh
# ctest wrapper of the VM lab tests: opt-in (WAITPATH_VMLAB=1), see docs/lab.md.
#   run_test.sh PYTHON3 test_lab.py WAITPATH TEST
if [ "${WAITPATH_VMLAB:-0}" != 1 ]; then
  echo "SKIP: the VM lab runs QEMU guests for minutes; set WAITPATH_VMLAB=1 (docs/lab.md)"
  exit 77
fi
exec "$@"
