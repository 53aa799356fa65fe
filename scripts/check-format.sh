#!/usr/bin/env bash
# Checks that every C++ source git tracks is formatted by the repository's .clang-format (Google
# style, 100 columns); prints the offending files. Exit 77 (skip) without clang-format or git.
# kmod/ is kernel C in the kernel's style: not checked.
# Fix with: git ls-files '*.cc' '*.h' | xargs clang-format -i
set -uo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "SKIP: clang-format is not installed"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cc' '*.h' ':!kmod/')
if ((${#bad[@]})); then
  echo "not formatted (clang-format -i FILE): ${bad[*]}"
  exit 1
fi
echo "format: all $(git ls-files '*.cc' '*.h' ':!kmod/' | wc -l) C++ sources formatted"
