#!/usr/bin/env bash
# Paired A/B of the quick suite's wall time: build A, then build B, alternating, ROUNDS
# rounds, same host, one after the other (nothing else of ours running).
# Usage: bash docs/results/quick-speed/run.sh A_BIN B_BIN OUT [ROUNDS]
set -euo pipefail
A=$1 B=$2 OUT=$3 ROUNDS=${4:-2}
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
    if (( r % 2 )); then order="A B"; else order="B A"; fi
    for w in $order; do
        bin=$A; [[ $w == B ]] && bin=$B
        start=$(date -u +%H:%M:%S)
        /usr/bin/time -f "%e" -o "$OUT/$w-$r.wall" "$bin" validate --json > "$OUT/$w-$r.json" 2> "$OUT/$w-$r.err"
        echo "round $r build $w start $start wall $(cat "$OUT/$w-$r.wall") s" | tee -a "$OUT/log.txt"
    done
done
