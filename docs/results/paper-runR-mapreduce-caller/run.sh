#!/usr/bin/env bash
# Run R: the MapReduce rows of the paper suite after the caller-maps change (the thread
# that calls a pinned MapReduce maps too and takes over tasks no helper has started).
# Recalibrates first (the job overhead changed), then validates only the MapReduce terms.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runR-mapreduce-caller}
mkdir -p "$OUT"
date -u +%H:%M:%S > "$OUT/started.txt"; cat /proc/loadavg >> "$OUT/started.txt"
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
only=()
for t in 1 2 4; do
  only+=(--only "mapreduce(map, reduce_pairwise, nodes=1, threads=$t, keys=x, per_key=768)")
  only+=(--only "mapreduce(map, reduce_per_key, nodes=1, threads=$t, keys=768, per_key=x)")
done
"$PC" validate --suite paper "${only[@]}" --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
date -u +%H:%M:%S > "$OUT/finished.txt"; cat /proc/loadavg >> "$OUT/finished.txt"
