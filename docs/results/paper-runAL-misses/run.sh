#!/usr/bin/env bash
# Run AL (2026-11-27, AMD EPYC host): run AK's three misses and the two task pools of
# `seq(inc, ·)` again, live, with the build whose segmented modeler lets Schwarz's score
# decide alone near a known cache (4a69918). Host checks and a fresh calibration first,
# as in run Y; then the rows validated again from the folder with one model per block.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAL-misses}
EX=$(dirname "$PC")/examples
TERMS=(
  'seq(inc, nop)' 'pipe(inc, inc)' 'tpool(2, seq(inc, nop))' 'tpool(2, seq(inc, inc))'
  'mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)'
)
ONLY=()
for t in "${TERMS[@]}"; do ONLY+=(--only "$t"); done
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper "${ONLY[@]}" --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --json > "$OUT/segmented.json" 2> /dev/null
"$PC" validate --suite paper "${ONLY[@]}" --from "$OUT" --modeler perfcompose --json > "$OUT/one-model.json" 2> /dev/null
