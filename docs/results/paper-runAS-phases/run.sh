#!/usr/bin/env bash
# Run AS (2026-11-27, AMD EPYC guest): the four rows of two threads of `inc` with the
# build that composes each pipeline of single blocks with the stochastic max of its
# stages' phases (`bench::tandem::phase_hinges`, DIR/phases.json; the calibration
# stored by run AQ). Run AP's command plus --wait-quiet 300.
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAS-phases}
bash docs/results/paper-runAP-hostcheck/run.sh "$PC" "$OUT" --wait-quiet 300
