#!/usr/bin/env bash
# A/B of the caller-maps MapReduce against the previous runtime (482f2b4), on the
# two-thread MapReduce rows of the paper suite, alternating old/new twice on one host.
# Usage: ab.sh OLD_BINARY NEW_BINARY [OUT]
# (build OLD_BINARY from 482f2b4: git stash / checkout, cargo build --release, copy).
set -euo pipefail
OLD=$1; NEW=$2; OUT=${3:-docs/results/mapreduce-caller-ab}
only=(--only "mapreduce(map, reduce_pairwise, nodes=1, threads=2, keys=x, per_key=768)"
      --only "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)")
for v in old new; do
  bin=$OLD; [ $v = new ] && bin=$NEW
  "$bin" bench --overhead --calibration "$OUT/calibration-$v.json" > "$OUT/overhead-$v.txt" 2>&1
done
for round in 1 2; do
  for v in old new; do
    bin=$OLD; [ $v = new ] && bin=$NEW
    d="$OUT/$v-$round"; mkdir -p "$d"
    { date -u +%H:%M:%S; cat /proc/loadavg; } > "$d/started.txt"
    "$bin" validate --suite paper "${only[@]}" --calibration "$OUT/calibration-$v.json" \
      --save "$d" > "$d/stdout.txt" 2> "$d/stderr.txt"
    { date -u +%H:%M:%S; cat /proc/loadavg; } > "$d/finished.txt"
  done
done
