#!/usr/bin/env bash
# Run O: five rows with two threads, under the rounds protocol, the workers pinned (the
# default since 2026-11-24) and not pinned (--no-pin) back to back, order alternating
# row by row; pipeline stages timed as stages (NAME_stageI_of_...). Each setting with its
# own overhead calibration, measured the same way.
# Usage: bash run.sh BINARY   (from the repository's root)
set -u
B=${1:-target/release/perfcompose}
OUT=docs/results/paper-runO-pinning
mkdir -p $OUT/pinned $OUT/free
date -u +%H:%M:%S > $OUT/start.txt
uptime > $OUT/load.txt
$B bench --overhead --calibration $OUT/pinned/calibration.json > $OUT/pinned/overhead.txt 2>&1
$B bench --overhead --no-pin --calibration $OUT/free/calibration.json > $OUT/free/overhead.txt 2>&1
i=0
for row in 'pipe(inc, inc)' 'tpool(2, qsort)' 'pipe(inc, nop)' 'tpool(2, seq(inc, inc))' \
           'pipe(qsort, inc)'; do
  i=$((i+1))
  if [ $((i % 2)) -eq 1 ]; then order="pinned free"; else order="free pinned"; fi
  for p in $order; do
    flag=""; [ $p = free ] && flag="--no-pin"
    echo "$(date -u +%H:%M:%S) row $i $p $row" >> $OUT/log.txt
    $B validate --suite paper --protocol rounds $flag --calibration $OUT/$p/calibration.json \
      --only "$row" --save $OUT/$p/row$i > $OUT/$p/row$i.stdout.txt 2> $OUT/$p/row$i.stderr.txt
    echo "rc=$?" >> $OUT/$p/row$i.stdout.txt
  done
done
date -u +%H:%M:%S > $OUT/end.txt
