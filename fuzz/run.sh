#!/usr/bin/env bash
# Runs each AFL target for SECONDS (default 720) one after another, at the
# lowest priority, and appends each run's figures (executions, paths,
# edges covered, crashes, hangs) from AFL's fuzzer_stats to results.md.
# Needs `cargo install cargo-afl`, `cargo afl config --build` and
# `AFL_OPT_LEVEL=1 cargo afl build --release --target x86_64-unknown-linux-gnu` (here, in fuzz/; the target keeps build scripts and proc macros uninstrumented), and seeds.sh run first.
# Usage: bash fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-720}
shift || true
targets=${*:-filter location_settings page_header metadata_plan reader}
export AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
for t in $targets; do
  rm -rf "out/$t"
  nice -n 19 cargo afl fuzz -i "out/seeds/$t" -o "out/$t" -V "$secs" -t 2000 -m none \
    "${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release/$t" > "out/$t.log" 2>&1 || true
  stats=out/$t/default/fuzzer_stats
  if [ -f "$stats" ]; then
    get() { awk -F: -v k="$1" '$1 ~ "^"k" *$" {gsub(/ /,"",$2); print $2}' "$stats"; }
    crashes=$(ls "out/$t/default/crashes" 2>/dev/null | grep -vc README || true)
    hangs=$(ls "out/$t/default/hangs" 2>/dev/null | grep -vc README || true)
    printf '| %s | %s | %s s | %s | %s | %s | %s | %s | %s |\n' "$t" "$(date -u +%FT%TZ)" "$(get run_time)" \
      "$(get execs_done)" "$(get corpus_count)" "$(get bitmap_cvg)" "$(get corpus_found)" "$crashes" "$hangs" >> results.md
  else
    echo "| $t | $(date -u +%FT%TZ) | did not start: see fuzz/out/$t.log | | | | | | |" >> results.md
  fi
done
