#!/usr/bin/env bash
# Run AR (2026-11-27, AMD EPYC guest): the four rows of two threads of `inc` (three of
# them run AQ's misses) with the build that checks the host right before and after each
# design of two threads and, with --wait-quiet, waits for a quiet host before measuring
# one (the calibration stored by run AQ).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAR-gate}
mkdir -p "$OUT"
date -u +%H:%M:%S > "$OUT/started.txt"
"$PC" validate --suite paper --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' \
  --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  --wait-quiet 120 --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
date -u +%H:%M:%S > "$OUT/finished.txt"
