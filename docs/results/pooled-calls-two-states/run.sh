#!/usr/bin/env bash
# Side by side on a host whose cores switch between a fast and a slow state
# (examples/core_states): the blocks of a task pool timed on the timed thread only (OLD,
# the shipped build) against every thread's calls on the shared stream pooled (NEW, the
# shipped build plus docs/results/pool-pooled-calls/pooled-calls.patch). ROUNDS rounds,
# numbered from FIRST (default 1);
# in each, every row of ROWS (one term a line) runs under both builds, the order
# alternating row by row and round by round. `core_states 10` before each round records
# the cores' states. Each `validate --term` saves under OUT/<build>-<round>-<row>/.
# `python3 table.py OUT` prints the table. With PAPER=1 each row is the paper suite's
# (`validate --suite paper --only TERM`, its grid and sampling; SIZES unused), all under
# one overhead calibration made first (OUT/calibration.json).
set -euo pipefail
OLD=$1 NEW=$2 OUT=$3 ROUNDS=${ROUNDS:-2} FIRST=${FIRST:-1}
SIZES=${SIZES:-1024,2048,4096,8192,16384,65536}
STATES=$(dirname "$OLD")/examples/core_states
ROWS=${ROWS:-'tpool(2, qsort)
tpool(2, seq(qsort, inc))
tpool(2, seq(inc, inc))
tpool(2, seq(inc, nop))'}
mapfile -t TERMS <<< "$ROWS"
mkdir -p "$OUT"
CAL=()
if [ "${PAPER:-0}" = 1 ]; then
  "$OLD" bench --overhead --calibration "$OUT/calibration.json" > "$OUT/overhead.txt" 2>&1
  CAL=(--calibration "$OUT/calibration.json")
fi
for r in $(seq "$FIRST" $((FIRST + ROUNDS - 1))); do
  { date -u +%H:%M:%S; "$STATES" 10 100; } > "$OUT/states-$r.txt" 2>&1
  for i in "${!TERMS[@]}"; do
    t=${TERMS[$i]}
    row=$(echo "$t" | tr -c 'a-z0-9' '_' | sed 's/_*$//')
    order=(old new); [ $(((r + i) % 2)) = 0 ] && order=(new old)
    for b in "${order[@]}"; do
      pc=$OLD; [ "$b" = new ] && pc=$NEW
      dir="$OUT/$b-$r-$row"
      s=$(date +%s)
      if [ "${PAPER:-0}" = 1 ]; then what=(--suite paper --only "$t" "${CAL[@]}"); else what=(--term "$t" --sizes "$SIZES"); fi
      "$pc" validate "${what[@]}" --save "$dir" --json < /dev/null > "$dir.json" 2> "$dir.stderr.txt" || echo "rc=$?" >> "$dir.stderr.txt"
      echo "$(date -u +%H:%M:%S) round $r $b $t $(( $(date +%s) - s )) s" >> "$OUT/log.txt"
    done
  done
done
