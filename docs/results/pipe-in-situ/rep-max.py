#!/usr/bin/env python3
"""pipe(inc, inc) in saved runs: the program's minimum over repetitions against (a) the
larger of its two stage tests' minima and (b) the expected minimum, over as many
repetitions as the program had, of the larger of one repetition of each stage drawn
independently (the stochastic max on the scale of repetitions). No overhead added.
Usage (from the repository root): python3 docs/results/pipe-in-situ/rep-max.py RUN...
(RUN a folder of docs/results/ saved by `validate --save`)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
import extrap_text  # noqa: E402


def read(path):
    return extrap_text.read(path, "rep-max.py")


for run in sys.argv[1:]:
    d = f'docs/results/{run}'
    if not (os.path.exists(f'{d}/blocks.txt') and os.path.exists(f'{d}/programs.txt')):
        continue
    xs, b = read(f'{d}/blocks.txt'); xp, p = read(f'{d}/programs.txt')
    s1 = b.get('pipe(inc, inc)->inc_stage1_of_inc_then_inc'); s2 = b.get('pipe(inc, inc)->inc_remote_stage2_of_inc_then_inc')
    prog = p.get('pipe(inc, inc)')
    if not (s1 and s2 and prog): continue
    r_plain, r_draw = [], []
    for i, x in enumerate(xs):
        a, c, g = s1[i], s2[i], prog[i]
        plain = max(min(a), min(c))
        # expected minimum over len(g) repetitions of max(a_j, c_k), a_j, c_k drawn independently
        pairs = sorted(max(u, v) for u in a for v in c)
        n, k = len(pairs), len(g)
        # E[min of k draws with replacement from pairs]
        e = sum(pairs[j] * (((n - j) / n) ** k - ((n - j - 1) / n) ** k) for j in range(n))
        r_plain.append(min(g) / plain); r_draw.append(min(g) / e)
    f = lambda r: ' '.join(f'{v:.2f}' for v in r)
    print(f'{run:22s} max of minima: {f(r_plain)} | worst {max(abs(v-1) for v in r_plain):.3f}')
    print(f'{"":22s} E[min of max]: {f(r_draw)} | worst {max(abs(v-1) for v in r_draw):.3f}')
