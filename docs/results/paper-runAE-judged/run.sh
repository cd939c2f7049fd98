#!/usr/bin/env bash
# Run AE (2026-11-26, Intel host): run Y's 31 judged rows with the gated stream driver and
# the queued loaded unit tests (build of the commit that brought them), run Y's host
# checks and a fresh calibration (run Y's script). `--save` keeps every row's
# measurements, so the folder is validated again with `--from` afterwards: the default
# modeler, and `--modeler segmented` at this host's caches.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAE-judged}
bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
ONLY=()
while IFS= read -r t; do ONLY+=(--only "$t"); done < <(grep -o "'[^']*'" docs/results/paper-runY-judged/run.sh | tr -d "'")
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler segmented --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/again-default.json" 2> /dev/null
