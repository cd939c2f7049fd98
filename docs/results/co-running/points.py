#!/usr/bin/env python3
"""Per measured point of one configuration of a round of run.sh: the program's time, the
default prediction and the one with `--co-running`, each with its error, and what the
co-running terms added (the rows' `modular` models of ROUND/default.json and
ROUND/co-running.json evaluated at x; the points of ROUND/measured/points.json).

Usage: python3 points.py ROUND CONFIGURATION, e.g.
    python3 points.py docs/results/co-running/round1 'pipe(inc, inc)'
A missing or malformed file, or an unknown configuration: a message, exit status 2."""
import math
import os
import sys

# The message-and-status-2 helpers of the stages-apart scripts.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stages-apart"))
from apart import fail, load  # noqa: E402


def piecewise(x, *a):
    """The printer's `piecewise(x, e0, t1, e1, ...)`: e_i from t_i on."""
    v = a[0]
    for i in range(1, len(a) - 1, 2):
        if x >= a[i]:
            v = a[i + 1]
    return v


def evaluate(model, x):
    names = {"x": x, "log2": math.log2, "min": min, "max": max, "piecewise": piecewise,
             "__builtins__": {}}
    try:
        return eval(model.replace("^", "**"), names)
    except Exception as e:  # a model the printer wrote in a form this does not read
        fail(f"cannot evaluate `{model[:60]}...` at x = {x}: {e}")


def main(args):
    if len(args) != 2:
        fail("usage: points.py ROUND CONFIGURATION")
    d, conf = args
    try:
        points = {c["configuration"]: c["points"] for c in load(f"{d}/measured/points.json")}
        rows = {f: {r["configuration"]: r["modular"] for r in load(f"{d}/{f}")["rows"]}
                for f in ("default.json", "co-running.json")}
    except (KeyError, TypeError) as e:
        fail(f"{d}: unexpected content ({e})")
    if conf not in points or any(conf not in r for r in rows.values()):
        fail(f"{d} has no configuration `{conf}`")
    for q in points[conf]:
        x, m = q["x"], q["measured"]
        a = evaluate(rows["default.json"][conf], x)
        b = evaluate(rows["co-running.json"][conf], x)
        print(f"x={x:7d} measured={m:10.0f} default={a:10.0f} ({(a / m - 1) * 100:+6.1f}%) "
              f"co-running={b:10.0f} ({(b / m - 1) * 100:+6.1f}%) added={b - a:8.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
