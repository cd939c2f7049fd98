#!/usr/bin/env bash
# Run AI (2026-11-26, Intel host): the 31 judged rows with the build whose stream driver
# sleeps until the last output wakes it (ctx::StreamEnd) instead of checking the last
# queue now and then, and whose warm per-key reductions are timed gathering each key's
# values from x map outputs (bench/gather.rs). Run AH's commands (run Y's host checks, a
# fresh calibration, `--from` with the segmented default and with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAI-streamend}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
