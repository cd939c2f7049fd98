#!/usr/bin/env bash
# Does the time per key of a warm per-key reduction at small x depend on how many keys a
# repetition gathers and reduces? `bench reduce_per_key --warm --siblings 1` (as
# `validate` times `reduce_per_key_warm_par2`) with the batch sized from a probe (the
# default) and fixed at 384 (the keys one of a job's two threads reduces per image), 768
# (one pass over the keys) and 4,096, ROUNDS rounds, the order rotating each round.
# Usage: bash docs/results/per-key-batch/run.sh BIN OUT [ROUNDS]   (from the root)
set -eu
PC=$1
OUT=$2
ROUNDS=${3:-3}
mkdir -p "$OUT"
BATCHES=(default 384 768 4096)
date -u +%H:%M:%S > "$OUT/start.txt"
"$PC" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-before.txt" 2>&1
for r in $(seq 1 "$ROUNDS"); do
  for k in 0 1 2 3; do
    b=${BATCHES[$(((k + r) % 4))]}
    extra=()
    [ "$b" != default ] && extra=(--batch "$b")
    echo "$(date -u +%H:%M:%S) round $r batch $b" >> "$OUT/log.txt"
    "$PC" bench reduce_per_key --warm --siblings 1 --sizes 2,3,4,6,8,16 --reps 15 \
      ${extra[@]+"${extra[@]}"} --json > "$OUT/r$r-b$b.json"
  done
done
"$PC" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-after.txt" 2>&1
date -u +%H:%M:%S > "$OUT/end.txt"
