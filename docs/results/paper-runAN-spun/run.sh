#!/usr/bin/env bash
# Run AN (2026-11-27, AMD EPYC guest): the 31 judged rows with the build of 16b8c27 (one
# block call taken out per block; the pipeline wake-up fitted only on waits beyond the
# workers' spin). Run AH's commands (run Y's host checks, a fresh calibration, `--from`
# with the segmented default and with one model per block).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runAN-spun}
bash docs/results/paper-runAH-replica/run.sh "$PC" "$OUT"
