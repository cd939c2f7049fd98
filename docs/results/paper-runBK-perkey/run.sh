#!/usr/bin/env bash
# Run BK (2026-11-29, 08:04–08:09 UTC, AMD EPYC guest): the per-key MapReduce of two
# threads on the paper grid, all three images, with the build of b4dd764 (the siblings of
# a per-key reduction's test gather as a job's threads do). docs/validation.md, that section.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runBK-perkey}
"$PC" validate --suite paper --only 'mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)' \
    --measure auto --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
