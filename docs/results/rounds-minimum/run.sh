#!/usr/bin/env bash
# The `inc` rows of seq and pipe under `--protocol rounds` and the default
# `--protocol interleaved`, both with the default statistic (the minimum), back to back
# with the order alternating row by row, ROUNDS times over; one overhead calibration
# (made first) for all. Rounds was last compared under the median (run N, 2026-11-24);
# the minimum came after it.
# Usage: bash docs/results/rounds-minimum/run.sh BINARY OUT [ROUNDS [FIRST]]   (from the
# root; FIRST, the number of the first round, 1 by default, sets which protocol goes
# first on each row: an even FIRST flips the order of an odd one)
set -u
B=${1:-target/release/perfcompose}
OUT=${2:-docs/results/rounds-minimum}
ROUNDS=${3:-1}
FIRST=${4:-1}
mkdir -p "$OUT/rounds" "$OUT/interleaved"
date -u +%H:%M:%S > "$OUT/start.txt"
uptime > "$OUT/load.txt"
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-before.txt" 2>&1
"$B" bench --overhead --calibration "$OUT/calibration.json" > "$OUT/overhead.txt" 2>&1
i=0
for r in $(seq "$FIRST" $((FIRST + ROUNDS - 1))); do
  for row in 'seq(inc, inc)' 'seq(inc, nop)' 'pipe(inc, inc)' 'pipe(inc, nop)'; do
    i=$((i+1))
    if [ $(((i + r) % 2)) -eq 1 ]; then order="rounds interleaved"; else order="interleaved rounds"; fi
    for p in $order; do
      echo "$(date -u +%H:%M:%S) row $i $p $row" >> "$OUT/log.txt"
      "$B" validate --suite paper --protocol "$p" --only "$row" \
        --calibration "$OUT/calibration.json" --save "$OUT/$p/row$i" \
        > "$OUT/$p/row$i.stdout.txt" 2> "$OUT/$p/row$i.stderr.txt"
      echo "rc=$?" >> "$OUT/$p/row$i.stdout.txt"
    done
  done
done
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-after.txt" 2>&1
date -u +%H:%M:%S > "$OUT/end.txt"
