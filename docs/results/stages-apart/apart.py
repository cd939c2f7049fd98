#!/usr/bin/env python3
"""Per saved `validate --save DIR` run: for every stage test that recorded every stage's
mean call per repetition (DIR/phases.json, "stages"), per size: the repetitions, each
stage's best (minimum) repetition, and the factor min_r max_j m_jr / max_j min_r m_jr
(validate::apart_factor under the minimum); then each program point of DIR/points.json:
measured, predicted, and the program over the slowest stage's best repetition (the mean
over the configuration's stage tests of the largest of their stages' best repetitions).

Usage: python3 apart.py DIR [DIR ...]. A missing or malformed file: a message naming it
(and the line and column where JSON says), exit status 2."""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}:{e.lineno}:{e.colno}: {e.msg}")


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def factor(rows):
    n = len(rows[0])
    together = min(max(r) for r in rows)
    apart = max(min(r[j] for r in rows) for j in range(n))
    return together / apart, [min(r[j] for r in rows) for j in range(n)]


def main(dirs):
    if not dirs:
        fail("usage: apart.py DIR [DIR ...]")
    for d in dirs:
        phases = load(f"{d}/phases.json")
        points = load(f"{d}/points.json")
        print(f"== {d}")
        slowest = {}
        try:
            for name, at in sorted(phases["series"].items()):
                for p in at:
                    rows = p.get("stages", [])
                    if len(rows) < 2:
                        continue
                    f, best = factor(rows)
                    conf = name.split("->")[0]
                    slowest.setdefault((conf, p["x"]), []).append(max(best))
                    print(f"{name:60s} x={p['x']:7d} reps={len(rows):2d} "
                          f"best={[round(b) for b in best]} F={f:.3f}")
            for c in points:
                for q in c["points"]:
                    s = slowest.get((c["configuration"], q["x"]))
                    ratio = f"{q['measured'] / (sum(s) / len(s)):.3f}" if s else "-"
                    print(f"{c['configuration']:24s} x={q['x']:7d} measured={q['measured']:10.0f} "
                          f"predicted={q['predicted']:10.0f} "
                          f"error={(q['predicted'] / q['measured'] - 1) * 100:6.1f}% "
                          f"program/slowest best={ratio}")
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
            fail(f"{d}: unexpected content ({type(e).__name__}: {e})")


if __name__ == "__main__":
    main(sys.argv[1:])
