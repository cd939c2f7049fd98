#!/usr/bin/env bash
# Run Q: the full paper suite, default protocol (interleaved), workers pinned (default).
set -euo pipefail
PC=${1:-target/release/perfcompose}
OUT=${2:-docs/results/paper-runQ-pinned}
mkdir -p "$OUT"
date -u +%H:%M:%S > "$OUT/started.txt"; cat /proc/loadavg >> "$OUT/started.txt"
"$PC" bench --overhead > "$OUT/overhead.txt" 2>&1
"$PC" validate --suite paper --save "$OUT" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
date -u +%H:%M:%S > "$OUT/finished.txt"; cat /proc/loadavg >> "$OUT/finished.txt"
