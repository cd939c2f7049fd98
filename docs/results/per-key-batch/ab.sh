#!/usr/bin/env bash
# A/B of the small per-key MapReduce rows (one and two threads): build A (the warm per-key
# test's batch sized from a probe) against build B (the keys one of the job's threads
# reduces: 768 for one thread, 384 for two), ROUNDS rounds, order alternating,
# `--measure minimum`, the row's sizes of the paper suite on the small image.
# Usage: bash docs/results/per-key-batch/ab.sh A_BIN B_BIN OUT [ROUNDS]   (from the root)
set -euo pipefail
A=$1 B=$2 OUT=$3 ROUNDS=${4:-4}
mkdir -p "$OUT"
for threads in 2 1; do
    T="mapreduce(map, reduce_per_key, nodes=1, threads=$threads, keys=768, per_key=x)"
    for r in $(seq 1 "$ROUNDS"); do
        if (( r % 2 )); then order="A B"; else order="B A"; fi
        for w in $order; do
            bin=$A; [[ $w == B ]] && bin=$B
            d="$OUT/t$threads-$w-$r"
            "$bin" validate --term "$T" --sizes 4,8,16,32,48,64 --image small --measure minimum \
                --save "$d" --json > "$d.json" 2> "$d.err"
            # coefficient error, time error, measured / predicted at x = 4 … 64
            python3 scripts/validation-table.py "$d" | grep '^| `mapreduce' \
                | awk -F'|' -v t="threads $threads round $r build $w:" '{print t, $4, $5, $6}' \
                | tee -a "$OUT/log.txt"
        done
    done
done
