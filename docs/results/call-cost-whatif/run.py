"""What if composition took c ns per block call out of its prediction? (2026-11-27)

Composition adds the calibrated stage and `seq` extra, both measured on `nop` programs
that contain block calls, and the unit test of every block, each with its own per-call
cost (`nop_warm` reads 37-41 ns). This takes c ns out of each saved prediction per call a
design makes per element: 2 for `seq(A, B)`, 1 for a pipeline of two (its slowest stage),
a pool's inner calls divided by its threads. Judged seq/pipe/tpool rows of runs AE-AL
(n <= cores), saved predictions as each run's build made them; nothing run.
Usage: python3 docs/results/call-cost-whatif/run.py
"""
import json
import re

RUNS = ["paper-runAE-judged", "paper-runAF-judged", "paper-runAG-judged",
        "paper-runAH-replica", "paper-runAI-streamend", "paper-runAJ-handoff",
        "paper-runAK-relative", "paper-runAL-misses"]


def calls(term):
    m = re.match(r"tpool\((\d+), (.*)\)$", term)
    if m:
        return calls(m.group(2)) / int(m.group(1))
    if term.startswith("seq("):
        return term.count(",") + 1
    if term.startswith("pipe("):
        return 1
    return 0


def error(row, c):
    k = calls(row["configuration"])
    return max(abs(p["predicted"] - c * k - p["measured"]) / p["measured"] for p in row["points"])


for c in (0, 20, 40):
    ok = n = 0
    flips = []
    for run in RUNS:
        for row in json.load(open(f"docs/results/{run}/points.json")):
            term = row["configuration"]
            if term.startswith("mapreduce") or re.search(r"tpool\((4|8|12|24),", term):
                continue
            e, e0 = error(row, c), error(row, 0)
            n += 1
            ok += e <= 0.10
            if (e <= 0.10) != (e0 <= 0.10):
                flips.append(f"{run}: {term} {100 * e0:.1f} -> {100 * e:.1f}%")
    print(f"c = {c} ns: {ok} of {n} within 10%")
    for f in flips:
        print("   ", f)
