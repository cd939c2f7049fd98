#!/usr/bin/env bash
# Run AG (2026-11-26, Intel host): the 31 judged rows (run Y's terms, MapReduce
# included) with the build of 34d649a — spinning pinned workers and the tail floor.
# The same commands as run AE (run Y's host checks, a fresh calibration, the saved
# folder validated again with `--from`: `segmented.json` with the segmented modeler,
# `again-default.json` with the default of the time, one model per block).
set -euo pipefail
bash docs/results/paper-runAE-judged/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runAG-judged}"
