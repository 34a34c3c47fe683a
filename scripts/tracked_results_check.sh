#!/usr/bin/env bash
# Fails when a file under benches/results/ is tracked by git.
#
# Raw benchmark output (logs, JSON reports, Nsight dumps, call scripts) is not
# kept in the repository: the scripts under benches/ write it to $OUT or to a
# git-ignored folder, and BENCHMARKS.md keeps the figures with their command,
# machine and date. This check keeps the folder out of the index.
#
# Usage: scripts/tracked_results_check.sh   (from anywhere inside the checkout)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tracked=$(git ls-files -- benches/results)
if [ -n "$tracked" ]; then
  count=$(printf '%s\n' "$tracked" | wc -l)
  echo "tracked_results_check: $count file(s) under benches/results/ are tracked; raw output stays out of git" >&2
  printf '%s\n' "$tracked" | head -20 | sed 's/^/  /' >&2
  echo "keep the figures in BENCHMARKS.md (command, machine, date) and run: git rm -r --cached benches/results" >&2
  exit 1
fi
echo "tracked_results_check: nothing tracked under benches/results/"
