"""Side by side: each row of run.sh under `--protocol rounds` and `interleaved`.

Usage: python3 docs/results/rounds-minimum/table.py OUT
Per row and protocol: the time error, how far the program's two halves of the rounds
are apart (rounds only), the error composed from the blocks' measurements instead of
their models, the host's speed across the row, and measured / predicted per point."""
import glob
import json
import os
import sys

base = sys.argv[1]
rows = sorted(
    {os.path.basename(p) for p in glob.glob(base + "/*/row*") if os.path.isdir(p)},
    key=lambda r: int(r[3:]),
)
print("| row | configuration | protocol | time error | program vs itself | from measured blocks | speed across | measured / predicted |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    for proto in ["interleaved", "rounds"]:
        d = f"{base}/{proto}/{row}"
        if not os.path.exists(d + "/points.json"):
            continue
        lines = [json.loads(l) for l in open(d + "/rows.jsonl")]
        pts = json.load(open(d + "/points.json"))
        for r, p in zip(lines, pts):
            ratios = " ".join("%.2f" % (q["measured"] / q["predicted"]) for q in p["points"])
            fb = p.get("time_error_from_measured_blocks")
            rep = r.get("repeat_error")
            speed = (r.get("host_check") or {}).get("speed_change")
            cell = lambda v: "–" if v is None else "%.1f%%" % (100 * v)
            print(
                f"| {row[3:]} | `{r['configuration']}` | {proto} | {cell(r['time_error'])} "
                f"| {cell(rep)} | {cell(fb)} | {'–' if speed is None else '%.2f×' % speed} | {ratios} |"
            )
