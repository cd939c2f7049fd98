#!/usr/bin/env python3
"""Re-predict the two-stage pipelines of a saved `perfcompose validate --save DIR` run with
other fits of the pipeline wake-up cost, from the same calibration points and the same
block models, and print each one's time error (as `validate` defines it).

    python3 scripts/wake-fit-compare.py DIR FIT_USED

DIR holds `points.json` and the `overhead-calibration.json` the run used; FIT_USED is the
fit the run's predictions contain: `origin` (`min(cap, slope·T)`, what perfcompose uses)
or `threshold` (`min(cap, slope·max(0, T − T0))`, tried on 2026-11-22 and dropped). The
composed model is recovered from each prediction by inverting that fit, then the wake-up
term of each fit (and none) is added back.
"""
import json, sys
from pathlib import Path

def stream(cal, term):
    p = [p for p in cal["patterns"] if p["term"] == term][0]
    return p.get("stream_ns_per_element") or p["ns_per_element"]

def extra_points(cal):
    pe = max(0.0, stream(cal, "pipe(nop, nop)") - stream(cal, "nop"))
    return sorted((p["stage_ns"], max(0.0, p["pipe_ns"] - p["stage_ns"] - pe)) for p in cal["pipe_wake"]["points"])

def cap_of(ex):
    top = sorted(e for _, e in ex[-2:])
    return (top[0] + top[-1]) / 2

def fit_origin(ex):
    cap = cap_of(ex)
    below = [(t, e) for t, e in ex if e < 0.8 * cap] or [ex[0]]
    slope = sum(t * e for t, e in below) / sum(t * t for t, _ in below)
    return lambda m: min(cap, slope * m)

def fit_threshold(ex):
    cap = cap_of(ex); tm = ex[-1][0]; best = (1e300, 0, tm)
    for i in range(200):
        for j in range(i + 1, 201):
            t0, t1 = tm * i / 200, tm * j / 200; s = cap / (t1 - t0)
            err = sum((min(cap, s * max(0, t - t0)) - e) ** 2 for t, e in ex)
            if err < best[0]: best = (err, t0, t1)
    _, t0, t1 = best; s = cap / (t1 - t0)
    return lambda m: min(cap, s * max(0.0, m - t0))

if len(sys.argv) != 3 or sys.argv[2] not in ("origin", "threshold"):
    print("usage: wake-fit-compare.py DIR origin|threshold", file=sys.stderr)
    sys.exit(2)
run = Path(sys.argv[1])
cal = json.loads((run / "overhead-calibration.json").read_text())
ex = extra_points(cal)
used = fit_threshold(ex) if sys.argv[2] == "threshold" else fit_origin(ex)
alt = {"origin": fit_origin(ex), "threshold": fit_threshold(ex), "none": lambda m: 0.0}
rows = json.loads((run / "points.json").read_text())
for r in rows:
    c = r["configuration"]
    if not c.startswith("pipe(") or "tpool" in c or c.count("pipe(") > 1:
        continue
    C = r["overhead_ns"]
    out = {k: [] for k in alt}
    for p in r["points"]:
        P = p["predicted"]
        lo, hi = 0.0, P  # invert P = M + C + used(M)
        for _ in range(100):
            mid = (lo + hi) / 2
            if mid + C + used(mid) < P: lo = mid
            else: hi = mid
        M = (lo + hi) / 2
        for k, f in alt.items():
            out[k].append((M + C + f(M)) / p["measured"])
    print(f"{c:22s}", "  ".join(f"{k}: {max(abs(v-1) for v in vs)*100:5.1f}%" for k, vs in out.items()))
