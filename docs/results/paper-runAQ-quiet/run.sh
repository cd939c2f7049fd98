#!/usr/bin/env bash
# Run AQ (2026-11-27, AMD EPYC guest): the 31 judged rows with the build of 29f9832 (an
# array wake-up calibration adds nothing; `validate` checks the host itself), started
# when `examples/co_runner` read the host quiet (0.96-1.00x next to a busy core). Run
# AH's commands (run Y's host checks, a fresh calibration, `--from` with the segmented
# default and with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAQ-quiet}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
