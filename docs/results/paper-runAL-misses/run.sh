#!/usr/bin/env bash
# Run AL (2026-11-27, AMD EPYC host): run AK's three misses and the two task pools of
# `seq(inc, ·)` again, live, with the build whose segmented modeler lets Schwarz's score
# decide alone near a known cache (4a69918). Run Y's host checks and a fresh calibration
# first (its script, with these terms); then the rows validated again from the folder
# with the default and with one model per block. (The run of 03:56 UTC had a copy of
# those lines without the host checks after it: no `host-after.txt`.)
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAL-misses}
TERMS=(
  'seq(inc, nop)' 'pipe(inc, inc)' 'tpool(2, seq(inc, nop))' 'tpool(2, seq(inc, inc))'
  'mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)'
)
ONLY=()
for t in "${TERMS[@]}"; do ONLY+=(--only "$t"); done
ONLY_TERMS=$(printf '%s\n' "${TERMS[@]}") bash docs/results/paper-runY-judged/run.sh "$PC" "$OUT"
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler perfcompose --json > "$OUT/one-model.json" 2> /dev/null
