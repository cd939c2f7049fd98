#!/usr/bin/env python3
"""Time error (%) of every judged row in the last full runs, from each run's
`segmented.json` (validate's default modeler), and the last run's `one-model.json`.
Run from the repository root: python3 docs/results/paper-runAH-replica/compare.py [RUN...]
(folders under docs/results, oldest first; by default runs AE-AH)"""
import json
import sys

RUNS = sys.argv[1:] or [
    "paper-runAE-judged",
    "paper-runAF-judged",
    "paper-runAG-judged",
    "paper-runAH-replica",
]


def rows(run, name="segmented.json"):
    try:
        report = json.load(open(f"docs/results/{run}/{name}"))
    except OSError:
        return {}
    out = {}
    for r in report["rows"]:
        if not r["within_cores"]:
            continue
        # A MapReduce term is one row per image: number its repeats.
        k, i = r["configuration"], 0
        while (k, i) in out:
            i += 1
        out[(k, i)] = r["time_error"]
    return out


data = {run: rows(run) for run in RUNS}
one = rows(RUNS[-1], "one-model.json")
print("| row | " + " | ".join(RUNS) + " | last, one model |")
print("|---|" + "---|" * (len(RUNS) + 1))
for k in data[RUNS[-1]]:
    name = k[0] if k[1] == 0 else f"{k[0]} #{k[1] + 1}"
    cells = ["%.1f" % (100 * data[r][k]) if k in data[r] else "—" for r in RUNS]
    print(f"| `{name}` | " + " | ".join(cells) + " | %.1f |" % (100 * one[k]))
