#!/usr/bin/env bash
# `validate --block-revisit alone` (the default: a block point that stands out is
# measured again alone) against `--block-revisit visit` (measured again with its program
# and the other blocks at that size), both under the default protocol and statistic, on
# the four rows whose worst points a lone revisit set in run BE. Back to back with the
# order alternating row by row, ROUNDS times over; one overhead calibration (made first)
# for all.
# Usage: bash docs/results/block-revisit-ab/run.sh BINARY OUT [ROUNDS [FIRST]]   (from the
# root; FIRST, the number of the first round, 1 by default, sets which setting goes
# first on each row: an even FIRST flips the order of an odd one; ROWS in the
# environment, one configuration per line, replaces the four rows)
set -u
B=${1:-target/release/perfcompose}
OUT=${2:-docs/results/block-revisit-ab}
ROUNDS=${3:-1}
FIRST=${4:-1}
mkdir -p "$OUT/alone" "$OUT/visit"
date -u +%H:%M:%S > "$OUT/start.txt"
uptime > "$OUT/load.txt"
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-before.txt" 2>&1
"$B" bench --overhead --calibration "$OUT/calibration.json" > "$OUT/overhead.txt" 2>&1
ROWS=${ROWS:-'tpool(2, seq(qsort, inc))
tpool(2, qsort)
pipe(inc, nop)
seq(inc, inc)'}
i=0
for r in $(seq "$FIRST" $((FIRST + ROUNDS - 1))); do
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    i=$((i+1))
    if [ $(((i + r) % 2)) -eq 1 ]; then order="visit alone"; else order="alone visit"; fi
    for s in $order; do
      echo "$(date -u +%H:%M:%S) row $i $s $row" >> "$OUT/log.txt"
      "$B" validate --suite paper --block-revisit "$s" --only "$row" \
        --calibration "$OUT/calibration.json" --save "$OUT/$s/row$i" < /dev/null \
        > "$OUT/$s/row$i.stdout.txt" 2> "$OUT/$s/row$i.stderr.txt"
      echo "rc=$?" >> "$OUT/$s/row$i.stdout.txt"
    done
  done <<< "$ROWS"
done
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-after.txt" 2>&1
date -u +%H:%M:%S > "$OUT/end.txt"
