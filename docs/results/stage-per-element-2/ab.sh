#!/usr/bin/env bash
# A/B: the stage rig handing on one element at a time (B) against its groups (A), on the
# pipelines of `inc`, in turn: `bash ab.sh A_BIN B_BIN OUT ROUNDS "TERM;TERM..."`.
set -u
A=$1; B=$2; OUT=$3; ROUNDS=${4:-2}; TERMS=${5:-"pipe(inc, inc);pipe(inc, nop)"}
mkdir -p "$OUT"
IFS=';' read -ra T <<< "$TERMS"
for round in $(seq 1 "$ROUNDS"); do
  for term in "${T[@]}"; do
    slug=$(echo "$term" | tr -cd 'a-z0-9')
    for v in A B; do
      bin=$A; [ $v = B ] && bin=$B
      d=$OUT/r$round-$slug-$v
      start=$(date -u +%H:%M:%S)
      "$bin" validate --suite paper --only "$term" --save "$d" --json > "$d.json" 2> "$d.err"
      rc=$?
      echo "round $round $term $v $start-$(date -u +%H:%M:%S) rc=$rc $(python3 -c "import json,sys; r=json.load(open('$d.json'))['rows'][0]; print('time_error %.1f%%' % (100*r['time_error']))" 2>/dev/null)" >> "$OUT/log.txt"
    done
  done
done
echo done >> "$OUT/log.txt"
