#!/usr/bin/env bash
# Run AO (2026-11-27, AMD EPYC guest): the 31 judged rows again with the build of run AN
# (af639e4 adds a diagnostic example and docs, no change to what `validate` does): how
# much of AN's 28 of 31 is the host. Run AH's commands (run Y's host checks, a fresh
# calibration, `--from` with the segmented default and with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAO-again}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
