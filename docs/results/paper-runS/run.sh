#!/usr/bin/env bash
# Run S: the full paper suite with the runtime whose caller maps (6eca213 on) and the busy
# job calibration with uneven spins; defaults (interleaved, pinned, blocks timed loaded).
# Host checks first (examples cpu_gaps and co_runner, `bench inc`), saved next to the run.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runS}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
