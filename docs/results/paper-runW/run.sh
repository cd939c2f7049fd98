#!/usr/bin/env bash
# Run W: the full paper suite with the evening's defaults — statistic minimum, program and
# block points measured again (block points weighed by their share), and the pipeline
# wake-up cost on each pipeline's slack from a calibrated threshold. The same commands as
# run S, host checks included.
set -euo pipefail
exec bash docs/results/paper-runS/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runW}"
