"""Side by side: each row of run.sh with build A (lone unit tests on the calling thread)
and build B (on a thread pinned to the first core).

Usage: python3 docs/results/lone-core/table.py OUT
Per row and build: the time error, the error composed from the blocks' measurements
instead of their models, the host's speed across the row, on which cores `ps` found the
running threads (caller `perfcompose`, timed `perfcompose-tim…`, workers
`perfcompose-wor…`: samples on core 0 / core 1), and measured / predicted per point."""
import collections
import glob
import json
import os
import sys

base = sys.argv[1]
rows = sorted(
    {os.path.basename(p) for p in glob.glob(base + "/*/row*") if os.path.isdir(p)},
    key=lambda r: int(r[3:]),
)


def cores(path):
    """Running samples per thread kind: {kind: [on core 0, on core 1]}."""
    seen = collections.defaultdict(lambda: [0, 0])
    if not os.path.exists(path):
        return seen
    for line in open(path):
        parts = line.split(None, 2)
        if len(parts) < 3 or not parts[1].startswith("R"):
            continue
        psr, name = int(parts[0]), parts[2].strip()
        kind = {"perfcompose": "caller"}.get(name, name.replace("perfcompose-", "")[:3])
        if psr < 2:
            seen[kind][psr] += 1
    return seen


print("| row | configuration | build | time error | from measured blocks | speed across | running on core 0 / 1 | measured / predicted |")
print("|---|---|---|---|---|---|---|---|")
for row in rows:
    for build in ["A", "B"]:
        d = f"{base}/{build}/{row}"
        if not os.path.exists(d + "/points.json"):
            continue
        lines = [json.loads(l) for l in open(d + "/rows.jsonl")]
        pts = json.load(open(d + "/points.json"))
        where = cores(d + ".cores.txt")
        on = ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(where.items()))
        for r, p in zip(lines, pts):
            ratios = " ".join("%.2f" % (q["measured"] / q["predicted"]) for q in p["points"])
            fb = p.get("time_error_from_measured_blocks")
            speed = (r.get("host_check") or {}).get("speed_change")
            cell = lambda v: "–" if v is None else "%.1f%%" % (100 * v)
            print(
                f"| {row[3:]} | `{r['configuration']}` | {build} | {cell(r['time_error'])} "
                f"| {cell(fb)} | {'–' if speed is None else '%.2f×' % speed} | {on} | {ratios} |"
            )
