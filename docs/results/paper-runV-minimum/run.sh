#!/usr/bin/env bash
# Run V: run T's 12 rows again, live, with the repetitions' minimum as the statistic (the
# default since d9e0e8a: it also decides the revisits). Run T's commands, with the host
# checks of run S before and after (as run, started.txt was written before the first checks).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runV-minimum}
EX=$(dirname "$PC")/examples
mkdir -p "$OUT"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-before.txt" 2>&1
bash docs/results/paper-runT-revisit/run.sh "$PC" "$OUT"
{ "$EX/cpu_gaps"; "$EX/co_runner"; "$PC" bench inc --sizes 4096,16384,262144; } > "$OUT/host-after.txt" 2>&1
