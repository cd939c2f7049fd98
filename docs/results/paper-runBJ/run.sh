#!/usr/bin/env bash
# Run BJ (2026-11-29, from 06:26 UTC, AMD EPYC guest): run BH's script again (the 31
# judged rows under `--measure auto`) with the build of b77d92f, which keeps the memory
# freed by input streams and one cache-eviction buffer (docs/validation.md, run BJ).
set -euo pipefail
exec bash docs/results/paper-runBH/run.sh "${1:-target/release/perfcompose}" "${2:-docs/results/paper-runBJ}"
