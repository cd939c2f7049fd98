#!/usr/bin/env bash
# Run N: the rows that missed in run M, each under the rounds and the sandwich protocol
# back to back (order alternating row by row), paper grid and sampling.
# Usage: bash run.sh BINARY   (from the repository's root)
set -u
B=${1:-target/release/perfcompose}
OUT=docs/results/paper-runN-rounds
date -u +%H:%M:%S > $OUT/start.txt
uptime > $OUT/load.txt
$B bench --overhead > $OUT/overhead.txt 2>&1
i=0
for row in 'tpool(2, qsort)' 'tpool(2, seq(inc, inc))' 'pipe(inc, inc)' 'seq(inc, nop)' \
           'mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)'; do
  i=$((i+1))
  if [ $((i % 2)) -eq 1 ]; then order="rounds sandwich"; else order="sandwich rounds"; fi
  for p in $order; do
    echo "$(date -u +%H:%M:%S) row $i $p $row" >> $OUT/log.txt
    $B validate --suite paper --protocol $p --only "$row" --save $OUT/$p/row$i \
      > $OUT/$p/row$i.stdout.txt 2> $OUT/$p/row$i.stderr.txt
    echo "rc=$?" >> $OUT/$p/row$i.stdout.txt
  done
done
date -u +%H:%M:%S > $OUT/end.txt
