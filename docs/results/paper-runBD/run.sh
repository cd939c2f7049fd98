#!/usr/bin/env bash
# Run BD (2026-11-28, AMD EPYC guest at about half its usual speed): run BC's twelve
# judged rows (seq, tpool of qsort, pipe of single blocks) under `--protocol rounds`
# (the program and its blocks in shuffled rounds, so that the host's fast and slow
# spells reach both), with the speed gate as in run BC (`--wait-quiet 60`); run Y's
# host checks and a fresh calibration first (run Y's script with ONLY_TERMS).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBD}
TERMS=(
  'seq(qsort, nop)' 'seq(qsort, inc)' 'seq(inc, qsort)' 'seq(inc, inc)' 'seq(inc, nop)'
  'tpool(1, qsort)' 'tpool(2, qsort)'
  'pipe(qsort, nop)' 'pipe(qsort, inc)' 'pipe(inc, qsort)' 'pipe(inc, inc)' 'pipe(inc, nop)'
)
ONLY_TERMS=$(printf '%s\n' "${TERMS[@]}") VALIDATE_ARGS="--protocol rounds --wait-quiet 60" \
  bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
