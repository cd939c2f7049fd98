#!/usr/bin/env python3
"""The runs of run.sh in OUT: per batch and size, the median ns per key of each round
(and the batch the run used), and the minimum over repetitions.

Usage: python3 table.py OUT. A missing or malformed file: a message naming it, exit 2."""
import glob
import json
import os
import re
import sys


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def main(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "r*-b*.json"))):
        m = re.match(r"r(\d+)-b(\w+)\.json$", os.path.basename(path))
        if not m:
            continue
        try:
            with open(path) as f:
                series = json.load(f)
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}")
        except json.JSONDecodeError as e:
            fail(f"{path}:{e.lineno}:{e.colno}: {e.msg}")
        try:
            for p in series[0]["points"]:
                runs.setdefault(m.group(2), {}).setdefault(p["x"], []).append(
                    (int(m.group(1)), p["median"], min(p["values"]), p["batch"]))
        except (KeyError, IndexError, TypeError, ValueError) as e:
            fail(f"{path}: unexpected content ({type(e).__name__}: {e})")
    if not runs:
        fail(f"no r*-b*.json in {out}")
    print("| batch | x | median ns per key, by round | minimum, by round | batch used |")
    print("|---|---|---|---|---|")
    order = sorted(runs, key=lambda b: (b != "default", int(b) if b.isdigit() else 0))
    for b in order:
        for x in sorted(runs[b]):
            rows = sorted(runs[b][x])
            med = ", ".join(f"{r[1]:.1f}" for r in rows)
            low = ", ".join(f"{r[2]:.1f}" for r in rows)
            used = sorted({r[3] for r in rows})
            print(f"| {b} | {x} | {med} | {low} | {', '.join(map(str, used))} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: table.py OUT")
    main(sys.argv[1])
