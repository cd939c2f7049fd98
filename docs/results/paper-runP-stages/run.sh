#!/usr/bin/env bash
# Run P: what the loaded unit tests change. Four rows of the paper suite under the rounds
# protocol, workers pinned (the default), each with its blocks timed as the design loads
# them (stages next to the other stages, `_stageI_of_...`; pool workers next to a sibling,
# `_parN`) and with every block timed alone (--unloaded), back to back, order
# alternating by row; one overhead calibration for both.
# Usage: bash run.sh BINARY   (from the repository's root)
set -u
B=${1:-target/release/perfcompose}
OUT=docs/results/paper-runP-stages
mkdir -p $OUT/loaded $OUT/alone
date -u +%H:%M:%S > $OUT/start.txt
uptime > $OUT/load.txt
$B bench --overhead --calibration $OUT/calibration.json > $OUT/overhead.txt 2>&1
i=0
for row in 'pipe(inc, inc)' 'pipe(qsort, inc)' 'pipe(inc, nop)' 'tpool(2, qsort)'; do
  i=$((i+1))
  if [ $((i % 2)) -eq 1 ]; then order="loaded alone"; else order="alone loaded"; fi
  for p in $order; do
    flag=""; [ $p = alone ] && flag="--unloaded"
    echo "$(date -u +%H:%M:%S) row $i $p $row" >> $OUT/log.txt
    $B validate --suite paper --protocol rounds $flag --calibration $OUT/calibration.json \
      --only "$row" --save $OUT/$p/row$i > $OUT/$p/row$i.stdout.txt 2> $OUT/$p/row$i.stderr.txt
    echo "rc=$?" >> $OUT/$p/row$i.stdout.txt
  done
done
date -u +%H:%M:%S > $OUT/end.txt
