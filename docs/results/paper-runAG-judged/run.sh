#!/usr/bin/env bash
# Run AG (2026-11-26, Intel host): the 31 judged rows (run Y's terms, MapReduce
# included) with the build of 34d649a — spinning pinned workers and the tail floor —
# run Y's host checks and a fresh calibration, then the saved folder validated again
# with `--from`: the default modeler and `--modeler segmented` at this host's caches.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAG-judged}
bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler segmented --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
