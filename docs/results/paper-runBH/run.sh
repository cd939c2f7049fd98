#!/usr/bin/env bash
# Run BH (2026-11-29, from 00:15 UTC, AMD EPYC guest): the 31 judged rows (run Y's
# script) under `--measure auto`, with the build of the commit that adds it (the host
# check samples the cores' speed states at both ends of every design); `core_states 10`
# before and after. Re-analysed afterwards under each fixed statistic with `--from`
# (docs/validation.md, run BH).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBH}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
"$EX/core_states" 10 > "$OUT/core-states-before.txt" 2>&1
VALIDATE_ARGS="--measure auto ${VALIDATE_ARGS:-}" bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
"$EX/core_states" 10 > "$OUT/core-states-after.txt" 2>&1
