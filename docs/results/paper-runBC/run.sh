#!/usr/bin/env bash
# Run BC (2026-11-28, AMD EPYC guest at about half its usual speed): the first twelve
# judged rows (seq, tpool of qsort, pipe of single blocks) with build dbf8fa7 (the host
# check times the host's speed around every design; `--wait-quiet 60` also waits while
# the blocks alone run more than 1.10x slower than their median over the suite's checks
# so far), run Y's host checks and a fresh calibration (run Y's script with ONLY_TERMS);
# then the saved folder composed again by default and with `--co-running`.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBC}
TERMS=(
  'seq(qsort, nop)' 'seq(qsort, inc)' 'seq(inc, qsort)' 'seq(inc, inc)' 'seq(inc, nop)'
  'tpool(1, qsort)' 'tpool(2, qsort)'
  'pipe(qsort, nop)' 'pipe(qsort, inc)' 'pipe(inc, qsort)' 'pipe(inc, inc)' 'pipe(inc, nop)'
)
ONLY_TERMS=$(printf '%s\n' "${TERMS[@]}") VALIDATE_ARGS="--wait-quiet 60" \
  bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
ONLY=()
for t in "${TERMS[@]}"; do ONLY+=(--only "$t"); done
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --co-running --json > "$OUT/co-running.json" 2> /dev/null
