#!/usr/bin/env bash
# Run AA: the paper suite's 31 judged rows only, with the build whose wake-up calibration
# streams arrays and composes through its points (52d33cb). The same commands as run Y
# (host checks, a fresh calibration, `--only` with the 23 terms).
set -euo pipefail
exec bash docs/results/paper-runY-judged/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runAA-judged}"
