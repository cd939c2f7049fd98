#!/usr/bin/env bash
# Run AH (2026-11-26, Intel host): the 31 judged rows with the build whose task pools
# time the blocks of their `seq` in that seq (`_seqI_of_A_then_B`, bench/replica.rs).
# The same commands as runs AE and AG (run Y's host checks, a fresh calibration, the saved
# folder validated again with `--from`: `segmented.json` with the segmented modeler, the
# default; `again-default.json` likewise; `one-model.json` with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAH-replica}
bash docs/results/paper-runAE-judged/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler perfcompose --json > "$OUT/one-model.json" 2> /dev/null
