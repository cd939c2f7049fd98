#!/usr/bin/env bash
cd /work/main
B=target/release/perfcompose
date -u +%H:%M:%S > /tmp/runM.start
uptime > /tmp/runM.load
$B bench --overhead > /tmp/runM-overhead.txt 2>&1
$B validate --suite paper --protocol sandwich --save docs/results/paper-runM-sandwich \
  --only 'seq(qsort, inc)' --only 'seq(inc, inc)' --only 'seq(inc, nop)' \
  --only 'tpool(2, qsort)' --only 'pipe(qsort, inc)' --only 'pipe(inc, inc)' --only 'pipe(inc, nop)' \
  --only 'pipe(tpool(1, qsort), tpool(1, inc))' --only 'tpool(1, pipe(qsort, inc))' \
  --only 'tpool(2, seq(inc, inc))' --only 'tpool(2, seq(inc, nop))' \
  --only 'mapreduce(map, reduce_pairwise, nodes=1, threads=1, keys=x, per_key=768)' \
  --only 'mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)' \
  > /tmp/runM-stdout.txt 2> /tmp/runM-stderr.txt
echo "rc=$?" >> /tmp/runM-stdout.txt
date -u +%H:%M:%S > /tmp/runM.end
