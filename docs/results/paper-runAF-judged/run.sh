#!/usr/bin/env bash
# Run AF (2026-11-26, Intel host): run Y's 19 judged seq/pipe/tpool rows (SKIP=mapreduce)
# with pinned workers spinning up to 1 ms before sleeping on a queue and program streams
# of at least 64 elements per busy core beyond the first (build of 65d95c1), run Y's
# host checks and a fresh calibration (run Y's script); then `--from` the saved folder
# with `--modeler segmented` at this host's caches and again with the default modeler.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAF-judged}
SKIP=mapreduce bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do
  [[ $t == mapreduce* ]] && continue
  ONLY+=(--only "$t")
done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler segmented --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
