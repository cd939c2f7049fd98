#!/usr/bin/env bash
# A/B: the stage rig's group of elements (default: a quarter of L2) against one element.
set -u
PC=/tmp/pc-G/perfcompose
OUT=/tmp/gexp
mkdir -p $OUT
for round in 1 2 3; do
  for g in 1 0; do
    d=$OUT/r$round-g$g
    start=$(date -u +%H:%M:%S)
    if [ $g = 1 ]; then
      PERFCOMPOSE_STAGE_GROUP=1 $PC validate --suite paper --only 'pipe(inc, inc)' --save $d --json > $d.json 2> $d.err
    else
      $PC validate --suite paper --only 'pipe(inc, inc)' --save $d --json > $d.json 2> $d.err
    fi
    echo "round $round group $g $start-$(date -u +%H:%M:%S) rc=$?" >> $OUT/log
  done
done
echo done >> $OUT/log
