#!/usr/bin/env bash
# Fails when a file under benches/results/ is tracked by git.
#
# Raw benchmark output (logs, JSON reports, Nsight dumps, call scripts) is not
# kept in the repository: the scripts under benches/ write it to $OUT or to a
# git-ignored folder, and BENCHMARKS.md keeps the figures with their command,
# machine and date. This check keeps the folder out of the index.
#
# Usage: scripts/tracked_results_check.sh [--self-test]
#   (from anywhere inside the checkout; --self-test plants a file in a
#   scratch repository and expects the check to fail, then to pass)
set -euo pipefail

# check DIR: 0 when nothing under DIR/benches/results is tracked, 1 otherwise.
check() {
  local tracked count
  tracked=$(git -C "$1" ls-files -- benches/results)
  if [ -n "$tracked" ]; then
    count=$(printf '%s\n' "$tracked" | wc -l)
    echo "tracked_results_check: $count file(s) under benches/results/ are tracked; raw output stays out of git" >&2
    printf '%s\n' "$tracked" | head -20 | sed 's/^/  /' >&2
    echo "keep the figures in BENCHMARKS.md (command, machine, date) and run: git rm -r --cached benches/results" >&2
    return 1
  fi
  echo "tracked_results_check: nothing tracked under benches/results/"
}

self_test() {
  local dir
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  git -C "$dir" init -q
  check "$dir" >/dev/null || { echo "self-test: an empty repository failed the check" >&2; return 1; }
  mkdir -p "$dir/benches/results"
  echo planted >"$dir/benches/results/x.txt"
  printf '/benches/results/\n' >"$dir/.gitignore"
  git -C "$dir" add -f benches/results/x.txt
  if check "$dir" 2>/dev/null; then
    echo "self-test: a planted benches/results/x.txt passed the check" >&2
    return 1
  fi
  git -C "$dir" rm -q --cached benches/results/x.txt
  check "$dir" >/dev/null || { echo "self-test: the check failed after the file was unstaged" >&2; return 1; }
  echo "tracked_results_check: self-test passed (planted file refused, clean index accepted)"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
else
  check "$(git rev-parse --show-toplevel)"
fi
