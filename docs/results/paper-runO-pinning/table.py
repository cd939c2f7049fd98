"""Measured / predicted per size of the rows of a run with two settings side by side
(run O: pinned and free; run P: loaded and alone), for every row run so far.

Usage: python3 table.py [SETTING SETTING]   (in the run's directory; default: pinned free)
"""
import json, os, statistics as st, sys

SETTINGS = sys.argv[1:3] if len(sys.argv) == 3 else ["pinned", "free"]

def read_blocks(path):
    out, cur = {}, None
    for line in open(path):
        line = line.strip()
        if line.startswith("REGION"):
            cur = line[7:]
            out[cur] = []
        elif line.startswith("DATA") and cur:
            out[cur].append(st.median(map(float, line.split()[1:])))
    return out

for row in range(1, 10):
    for p in SETTINGS:
        d = f"{p}/row{row}"
        if not os.path.exists(f"{d}/points.json"):
            continue
        r = json.load(open(f"{d}/points.json"))[0]
        rep = json.load(open(f"{d}/report.json"))["rows"][0]
        rs = [q["measured"] / q["predicted"] for q in r["points"]]
        ratios = " ".join(f"{v:.2f}" for v in rs) + f"  (median {st.median(rs):.2f})"
        print(f"{r['configuration']:24s} {p:6s} time error {100 * rep['time_error']:5.1f}%  "
              f"vs itself {100 * rep['repeat_error']:5.1f}%  from medians "
              f"{100 * r['time_error_from_measured_blocks']:5.1f}%")
        print(f"    measured/predicted by x: {ratios}")
