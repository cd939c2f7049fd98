#!/usr/bin/env bash
# Paired A/B of measured values: the same unit tests and programs, old and new build alternating.
A=${A:-/tmp/pc-old/perfcompose} B=${B:-/tmp/pc-new/perfcompose}
OUT=$1; mkdir -p $OUT
for r in 1 2 3; do
  for w in A B; do
    bin=$A; [[ $w == B ]] && bin=$B
    $bin bench inc qsort --sizes 4096,65536 --json > $OUT/$w-$r-blocks.json 2>/dev/null
    $bin bench --term 'pipe(inc, nop)' --sizes 4096,65536 --json > $OUT/$w-$r-pipe.json 2>/dev/null
    $bin bench --term 'tpool(2, seq(inc, qsort))' --sizes 4096,65536 --json > $OUT/$w-$r-pool.json 2>/dev/null
    echo "$r $w $(date -u +%T)"
  done
done
