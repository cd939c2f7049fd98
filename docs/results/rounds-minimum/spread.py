"""How far a point's typical repetition is from its fastest, over saved runs.

Usage: python3 docs/results/rounds-minimum/spread.py RUN_DIR...
Per run and program (seq(inc, inc), seq(inc, nop), seq(qsort, nop)): over the program's
measured points (programs.txt), the median and the largest ratio of a point's median
repetition to its fastest. Near 1: the fastest repetition is the usual one; 1.4 and
over: the fastest is an exception a measurement may or may not catch."""
import os
import statistics as st
import sys


def load(path):
    out, cur = {}, None
    for line in open(path):
        if line.startswith("REGION"):
            cur = line.split(None, 1)[1].strip()
            out[cur] = []
        elif line.startswith("DATA") and cur:
            out[cur].append([float(v) for v in line.split()[1:]])
    return out


PROGRAMS = ["seq(inc, inc)", "seq(inc, nop)", "seq(qsort, nop)"]
print("run | " + " | ".join(f"{p}: median, largest" for p in PROGRAMS))
for run in sys.argv[1:]:
    path = os.path.join(run, "programs.txt")
    if not os.path.exists(path):
        continue
    programs = load(path)
    cells = []
    for p in PROGRAMS:
        ratios = [st.median(d) / min(d) for d in programs.get(p, []) if d]
        cells.append("%.2f, %.2f" % (st.median(ratios), max(ratios)) if ratios else "–")
    print(os.path.basename(run.rstrip("/")) + " | " + " | ".join(cells))
