#!/usr/bin/env bash
# Run AD (2026-11-26, Intel host, build of fad3ea5): run Y's judged rows without the
# MapReduce ones (those 12 passed in run AB; the 19 seq/pipe/tpool rows are what this host
# misses), with run Y's host checks and a fresh calibration (run Y's script, SKIP=mapreduce).
# `--save` writes the measurements after every row, and machine.json, so the folder is
# validated again with `--from`: `--modeler segmented` at this host's caches, and (after
# the run, build with WAKE_FLOOR = 0.05) the default modeler again.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAD-patterns}
SKIP=mapreduce bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do
  case $t in mapreduce*) ;; *) ONLY+=(--only "$t") ;; esac
done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler segmented --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
