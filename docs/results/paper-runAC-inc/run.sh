#!/usr/bin/env bash
# Run AC (2026-11-26 04:09–04:29 UTC, Intel host, build of 0239bfb): the six rows of `inc`
# and `nop` alone that run AB missed, live, with run AB's calibration. Nothing else ran.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAC-inc}
mkdir -p "$OUT"
{ date -u +%FT%TZ; uptime; } > "$OUT/started.txt"
"$PC" validate --suite paper --only 'seq(inc, inc)' --only 'seq(inc, nop)' --only 'pipe(inc, inc)' \
  --only 'pipe(inc, nop)' --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  --calibration docs/results/paper-runAB-judged/overhead-calibration.json \
  --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ echo "rc=$?"; date -u +%FT%TZ; } > "$OUT/finished.txt"
