#!/usr/bin/env bash
# Run BM (2026-11-29, from 09:47 UTC, AMD EPYC guest): run BH's script again (the 31
# judged rows under `--measure auto`) with the build of a8cdd90, which measures a point
# a third time when it is still off its neighbours after its second visit
# (docs/validation.md, run BM).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBM}"
