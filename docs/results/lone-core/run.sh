#!/usr/bin/env bash
# Lone unit tests timed on the calling thread, wherever the OS put it (build A, before
# the change), against on a thread pinned to the first core, where a pinned program of
# one thread runs its worker (build B): the one-thread `inc` rows, back to back with the
# order alternating row by row and flipped each round, ROUNDS times; one overhead
# calibration (build B's) for all. While each row runs, `ps` reads every half second on
# which core each of its threads is (`cores.txt` beside the row): the caller's thread
# (`perfcompose`), a pinned program's workers (`perfcompose-wor…`), B's timed thread
# (`perfcompose-tim…`).
# Usage: bash docs/results/lone-core/run.sh BINARY_A BINARY_B OUT [ROUNDS]   (from the root)
# The run of 2026-11-29 (04:26–04:41 UTC) had A = the build of 8e0d5af and B = a build that
# always timed lone blocks on the first core. Since the commit that adds
# `validate --pin-lone-tests` one binary does both:
#   B_ARGS=--pin-lone-tests bash docs/results/lone-core/run.sh BIN BIN OUT 2
set -u
read -ra B_EXTRA <<< "${B_ARGS:-}"
A=$1
B=$2
OUT=${3:-docs/results/lone-core}
ROUNDS=${4:-2}
ROWS=('seq(inc, inc)' 'seq(inc, nop)')
mkdir -p "$OUT/A" "$OUT/B"
date -u +%H:%M:%S > "$OUT/start.txt"
uptime > "$OUT/load.txt"
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-before.txt" 2>&1
"$B" bench --overhead --calibration "$OUT/calibration.json" > "$OUT/overhead.txt" 2>&1
i=0
for r in $(seq 1 "$ROUNDS"); do
  for row in "${ROWS[@]}"; do
    i=$((i+1))
    if [ $(((i + r) % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
    for build in $order; do
      bin=$A; extra=()
      [ "$build" = B ] && bin=$B && extra=(${B_EXTRA[@]+"${B_EXTRA[@]}"})
      echo "$(date -u +%H:%M:%S) row $i $build $row" >> "$OUT/log.txt"
      "$bin" validate --suite paper --only "$row" --measure minimum ${extra[@]+"${extra[@]}"} \
        --calibration "$OUT/calibration.json" --save "$OUT/$build/row$i" \
        > "$OUT/$build/row$i.stdout.txt" 2> "$OUT/$build/row$i.stderr.txt" &
      pid=$!
      while kill -0 "$pid" 2>/dev/null; do
        ps -L -o psr=,stat=,comm= -p "$pid" >> "$OUT/$build/row$i.cores.txt" 2>/dev/null
        sleep 0.5
      done
      wait "$pid"
      echo "rc=$?" >> "$OUT/$build/row$i.stdout.txt"
    done
  done
done
"$B" bench inc --sizes 4096,16384 --reps 7 --fixed > "$OUT/speed-after.txt" 2>&1
date -u +%H:%M:%S > "$OUT/end.txt"
