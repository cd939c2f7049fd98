#!/usr/bin/env bash
# A/B of the small per-key MapReduce of two threads (the row runs AZ and BI missed at x = 4):
# build A against build B, ROUNDS rounds, order alternating, `--measure minimum`.
# Usage: bash docs/results/per-key-small/ab.sh A_BIN B_BIN OUT [ROUNDS]
set -euo pipefail
A=$1 B=$2 OUT=$3 ROUNDS=${4:-5}
T='mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)'
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
    if (( r % 2 )); then order="A B"; else order="B A"; fi
    for w in $order; do
        bin=$A; [[ $w == B ]] && bin=$B
        "$bin" validate --term "$T" --sizes 4,8,16,32,48,64 --image small --measure minimum \
            --save "$OUT/$w-$r" --json > "$OUT/$w-$r.json" 2> "$OUT/$w-$r.err"
        # coefficient error, time error, measured / predicted at x = 4 … 64
        python3 scripts/validation-table.py "$OUT/$w-$r" | grep '^| `mapreduce' \
            | awk -F'|' -v t="round $r build $w:" '{print t, $4, $5, $6}' | tee -a "$OUT/log.txt"
    done
done
