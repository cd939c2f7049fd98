#!/usr/bin/env bash
# Run AR (2026-11-27, AMD EPYC guest): the four rows of two threads of `inc` (three of
# them run AQ's misses) with the build that checks the host right before and after each
# design of two threads and, with --wait-quiet, waits for a quiet host before measuring
# one (the calibration stored by run AQ). Run AP's command plus --wait-quiet 120.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAR-gate}
bash docs/results/paper-runAP-hostcheck/run.sh "$PC" "$OUT" --wait-quiet 120
