#!/usr/bin/env bash
# Run X: the full paper suite with the build whose calibration keeps the fastest
# repetitions (66bb09f on; validate composes with them under the minimum, its default) and
# whose paper suite measures again the points off their neighbours by more than half the
# row's target (Suite::revisit_share). The same commands as run S, host checks included.
set -euo pipefail
exec bash docs/results/paper-runS/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runX}"
