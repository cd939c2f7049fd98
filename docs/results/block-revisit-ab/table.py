"""Side by side: each row of run.sh under `--block-revisit alone` and `visit`.

Usage: python3 docs/results/block-revisit-ab/table.py OUT
Per row and setting: the time error, how many block points were measured again (alone,
or with their program), how many whole sizes were measured again, the host's speed
across the row, the minutes the row took (from log.txt), and measured / predicted per
point. Ends with the rows within target and the minutes, per setting."""
import glob
import json
import os
import sys
from datetime import datetime

base = sys.argv[1]
# minutes per (row, setting) from the start times in log.txt
starts = []
for line in open(base + "/log.txt"):
    t, _, row, setting = line.split()[:4]
    starts.append((datetime.strptime(t, "%H:%M:%S"), int(row), setting))
end = open(base + "/end.txt").read().strip() if os.path.exists(base + "/end.txt") else None
minutes = {}
for k, (t, row, setting) in enumerate(starts):
    nxt = starts[k + 1][0] if k + 1 < len(starts) else (
        datetime.strptime(end, "%H:%M:%S") if end else None)
    if nxt is not None:
        minutes[(row, setting)] = ((nxt - t).seconds) / 60

rows = sorted(
    {os.path.basename(p) for p in glob.glob(base + "/*/row*") if os.path.isdir(p)},
    key=lambda r: int(r[3:]),
)
cell = lambda v: "–" if v is None else "%.1f%%" % (100 * v)
total = {}
print("| row | configuration | block revisit | time error | blocks again | sizes again | speed across | minutes | measured / predicted |")
print("|---|---|---|---|---|---|---|---|---|")
for row in rows:
    for setting in ["alone", "visit"]:
        d = f"{base}/{setting}/{row}"
        if not os.path.exists(d + "/points.json"):
            continue
        lines = [json.loads(l) for l in open(d + "/rows.jsonl")]
        pts = json.load(open(d + "/points.json"))
        for r, p in zip(lines, pts):
            ratios = " ".join("%.2f" % (q["measured"] / q["predicted"]) for q in p["points"])
            notes = r.get("notes", [])
            blocks = sum(1 for n in notes if n.startswith("measured block"))
            sizes = sum(1 for n in notes if "again, blocks and program" in n)
            speed = (r.get("host_check") or {}).get("speed_change")
            mins = minutes.get((int(row[3:]), setting))
            ok = r["time_error"] <= 0.10 and r["coefficient_error"] <= 0.10
            t = total.setdefault(setting, [0, 0, 0.0])
            t[0] += ok
            t[1] += 1
            t[2] += mins or 0
            print(
                f"| {row[3:]} | `{r['configuration']}` | {setting} | {cell(r['time_error'])}"
                f"{'' if ok else ' (miss)'} | {blocks} | {sizes} "
                f"| {'–' if speed is None else '%.2f×' % speed} "
                f"| {'–' if mins is None else '%.1f' % mins} | {ratios} |"
            )
print()
for setting, (ok, n, mins) in total.items():
    print(f"{setting}: {ok} of {n} rows within 10%, {mins:.1f} minutes")
