#!/usr/bin/env bash
# Run BQ (2026-11-29, from 15:37 UTC, AMD EPYC guest): run BP's build (3a5cef9, the stage
# rig handing on one element at a time) again, since the host slowed during run BP's
# `pipe(inc, inc)` and `tpool(2, seq(inc, inc))` (docs/validation.md, runs BP and BQ).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBQ}"
