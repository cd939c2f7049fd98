#!/usr/bin/env bash
# Run BL (2026-11-29, from 08:48 UTC, AMD EPYC guest): run BH's script again (the 31
# judged rows under `--measure auto`) with the build of d0b0fb5, whose per-key
# reduction tests have siblings that gather keys from the map outputs as a job's threads
# do (docs/validation.md, run BL).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBL}"
