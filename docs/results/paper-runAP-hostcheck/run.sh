#!/usr/bin/env bash
# Run AP (2026-11-27, AMD EPYC guest): four rows of two threads of `inc` that missed in
# run AO, with the build that checks the host before and after the suite and adds no
# wake-up for an array calibration without knots (the calibration stored by run AO).
# Arguments after PC and OUT go to `validate` (run AR: --wait-quiet 120).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAP-hostcheck}
mkdir -p "$OUT"
date -u +%H:%M:%S > "$OUT/started.txt"
"$PC" validate --suite paper --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' \
  --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  "${@:3}" --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
date -u +%H:%M:%S > "$OUT/finished.txt"
