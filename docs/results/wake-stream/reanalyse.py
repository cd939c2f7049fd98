#!/usr/bin/env python3
"""Re-predict the two-stage pipeline rows of saved paper runs with another wake-up curve.

    python3 docs/results/wake-stream/reanalyse.py RUN[,RUN...] [POINTS.json]

For each judged pipeline row of `docs/results/RUN/points.json` (the saved runs reduced
with the minimum) it takes the prediction, removes the wake-up term the run's calibration
added (the prediction less the slowest stage less the constant overhead) and adds the
curve through the wake-up points instead, as `overhead::fit_wake_knots` draws it: the
extras over the points' own `pipe - stage` at busy times of at most 2 us, straight lines
between the points (made non-decreasing, extras under a fifth of the cap counted as none),
flat beyond the last.
The points are the run's own calibration (`spin(T)` on `u64` elements) or those of
POINTS.json (same fields as the calibration's `pipe_wake.points`, or a whole calibration
file, whose `pipe_wake.points` are taken). Prints, per row, the
largest |predicted - measured| / measured (the report's time error) before -> after, in %.
"""
import json
import math
import sys

ROWS = ('pipe(qsort, nop)', 'pipe(qsort, inc)', 'pipe(inc, qsort)', 'pipe(inc, inc)',
        'pipe(inc, nop)', 'pipe(tpool(1, qsort), tpool(1, inc))', 'tpool(1, pipe(qsort, inc))')


def ev(expr, x):
    return eval(expr.replace('^', '**'), {'log2': math.log2, 'sqrt': math.sqrt, 'x': x})


def median_ns(cal, term):
    for p in cal['patterns']:
        if p['term'] == term:
            return p.get('stream_ns_per_element') or p['ns_per_element']
    return 0.0


def knots(points, pipe_extra, nop):
    # The baseline of `overhead::fit_wake_knots`: the median pipe - stage of the points
    # at busy times of at most 2 us (pipe(nop, nop)'s extra over nop without such points).
    busy = sorted(p['pipe_ns'] - p['stage_ns'] for p in points if p['spin_ns'] <= 2000)
    if busy:
        m = len(busy) // 2
        pipe_extra = busy[m] if len(busy) % 2 else (busy[m - 1] + busy[m]) / 2
    ex = sorted((max(p['stage_ns'] - nop, 0.0), max(p['pipe_ns'] - p['stage_ns'] - pipe_extra, 0.0))
                for p in points)
    top = [e for _, e in ex[-2:]]
    cap = sum(top) / len(top)
    ex = [(w, e if e >= 0.2 * cap else 0.0) for w, e in ex]
    pooled = []  # pool adjacent violators: a non-decreasing fit
    for _, e in ex:
        pooled.append([e, 1])
        while len(pooled) > 1 and pooled[-2][0] > pooled[-1][0]:
            a, b = pooled.pop(), pooled.pop()
            pooled.append([(a[0] * a[1] + b[0] * b[1]) / (a[1] + b[1]), a[1] + b[1]])
    iso = [v for v, n in pooled for _ in range(n)]
    k = [(w, v) for (w, _), v in zip(ex, iso)]
    zeros = [i for i, (_, v) in enumerate(k) if v == 0.0]
    return k[zeros[-1]:] if zeros else [(0.0, 0.0)] + k


def curve(k, w):
    if not k or w <= k[0][0]:
        return 0.0
    for (w0, v0), (w1, v1) in zip(k, k[1:]):
        if w <= w1:
            return v0 + (v1 - v0) * (w - w0) / (w1 - w0)
    return k[-1][1]


def main():
    substitute = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
    if isinstance(substitute, dict):
        substitute = substitute['pipe_wake']['points']
    for run in sys.argv[1].split(','):
        rows = json.load(open(f'docs/results/{run}/points.json'))
        cal = json.load(open(f'docs/results/{run}/overhead-calibration.json'))
        nop = median_ns(cal, 'nop')
        pipe_extra = max(median_ns(cal, 'pipe(nop, nop)') - nop, 0.0)
        k = knots(substitute or cal['pipe_wake']['points'], pipe_extra, nop)
        out = []
        for r in rows:
            if r['configuration'] not in ROWS:
                continue
            comps = list(r['components'].values())
            before = after = 0.0
            for p in r['points']:
                stages = sorted(ev(e, p['x']) for e in comps)
                wait = stages[-1] - stages[-2]
                old_wake = p['predicted'] - stages[-1] - r['overhead_ns']
                new = p['predicted'] - old_wake + curve(k, wait)
                before = max(before, abs(p['predicted'] / p['measured'] - 1))
                after = max(after, abs(new / p['measured'] - 1))
            out.append(f"{r['configuration']} {100 * before:.1f} -> {100 * after:.1f}")
        print(run, 'knots (wait ns, extra ns):', [(round(w), round(v)) for w, v in k])
        print('   ', ' | '.join(out))


if __name__ == '__main__':
    main()
