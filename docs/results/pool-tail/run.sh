#!/usr/bin/env bash
# The four `tpool(2, ·)` rows of `qsort` after program streams got their tail floor (at
# least 64 elements per busy core beyond the first; build of d1ddf2a), 2026-11-26
# 10:34–10:45 UTC, Intel host, nothing else running, the stored calibration of run AE.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/pool-tail}
"$PC" validate --suite paper --only 'tpool(2, qsort)' --only 'tpool(2, seq(inc, qsort))' \
  --only 'tpool(2, seq(qsort, inc))' --only 'tpool(2, seq(qsort, nop))' \
  --save "$OUT" --json > "$OUT/report.json" 2> "$OUT/stderr.txt"
