#!/usr/bin/env bash
# Run AJ (2026-11-26, Intel host): the 31 judged rows with the build whose pipelines add
# the calibrated hand-off of busy stages by their slack (HandoffCalibration: the no-slack
# figure per hand-off instead of pipe(nop, nop)'s, its rise at the pipeline's slack) and
# whose busy wake-up points cost nothing themselves. Run AH's commands (run Y's host
# checks, a fresh calibration, `--from` with the segmented default and with one model per
# block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAJ-handoff}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
