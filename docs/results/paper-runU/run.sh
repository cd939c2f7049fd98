#!/usr/bin/env bash
# Run U: the full paper suite at 5a83e2e: defaults (interleaved, pinned, blocks timed loaded)
# and, new since run S, disturbed program points measured again (revisits, default on).
# Host checks first (examples cpu_gaps and co_runner, `bench inc`), saved next to the run.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runU}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/started.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
{ date -u +%H:%M:%S; cat /proc/loadavg; } > "$OUT/finished.txt"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
