"""Compare `perfcompose calibrate network --json` with the independent ping-pong
(scripts/pingpong.c) of the same round: Hockney's alpha and beta of each range fitted to
the C ping-pong's batches the way perfcompose fits its own (relative residuals through
each size's median, sizes split at perfcompose's eager limit), and the ratio of the per-size medians.

Usage: python3 network-compare.py OURS.json PINGPONG.jsonl [OURS.json PINGPONG.jsonl ...]
"""
import json
import statistics
import sys


def fit_line(samples):
    """Least squares of t = a + b*n with weights 1/t^2 (perfcompose's Relative)."""
    w = [1.0 / (t * t) for _, t in samples]
    sw = sum(w)
    xm = sum(wi * n for wi, (n, _) in zip(w, samples)) / sw
    ym = sum(wi * t for wi, (_, t) in zip(w, samples)) / sw
    sxx = sum(wi * (n - xm) ** 2 for wi, (n, _) in zip(w, samples))
    sxy = sum(wi * (n - xm) * (t - ym) for wi, (n, t) in zip(w, samples))
    b = sxy / sxx
    return ym - b * xm, b


def compare(ours_path, pp_path):
    ours = json.load(open(ours_path))
    pp = [json.loads(line) for line in open(pp_path) if line.strip()]
    limit = ours["eager_limit_bytes"]
    by_size = {}
    for p in pp:
        by_size.setdefault(p["bytes"], []).append(p["seconds"])
    medians = {b: statistics.median(ts) for b, ts in by_size.items()}
    ea, eb = fit_line([(b, t) for b, t in medians.items() if b <= limit])
    ba, bb = fit_line([(b, t) for b, t in medians.items() if b > limit])
    ratios = []
    for pt in ours["points"]:
        if pt["bytes"] in by_size:
            ratios.append(pt["seconds"] / statistics.median(by_size[pt["bytes"]]))
    return {
        "eager_limit_bytes": limit,
        "alpha_eager": (ours["hockney_eager"]["alpha_s"], ea),
        "beta_eager": (ours["hockney_eager"]["beta_s_per_byte"], eb),
        "alpha": (ours["hockney"]["alpha_s"], ba),
        "beta": (ours["hockney"]["beta_s_per_byte"], bb),
        "median_ratio": statistics.median(ratios),
        "worst_ratio": max(ratios, key=lambda r: abs(r - 1)),
    }


def main():
    args = sys.argv[1:]
    if len(args) < 2 or len(args) % 2:
        sys.exit(__doc__)
    rows = [compare(args[i], args[i + 1]) for i in range(0, len(args), 2)]
    print("| round | eager limit | α eager: ours / C | β eager | α bulk | β bulk | per-size median ratio (worst) |")
    print("|---|---|---|---|---|---|---|")
    for i, r in enumerate(rows, 1):
        cells = []
        for key in ("alpha_eager", "beta_eager", "alpha", "beta"):
            o, c = r[key]
            cells.append(f"{o:.3g} / {c:.3g} = {o / c:.3f}")
        print(f"| {i} | {r['eager_limit_bytes']} B | " + " | ".join(cells)
              + f" | {r['median_ratio']:.3f} ({r['worst_ratio']:.3f}) |")
    for key, label in (("alpha_eager", "α eager"), ("beta", "β bulk")):
        ratios = [r[key][0] / r[key][1] for r in rows]
        print(f"{label}: ratio ours/C median {statistics.median(ratios):.3f}, range {min(ratios):.3f}–{max(ratios):.3f} over {len(rows)} rounds")


if __name__ == "__main__":
    main()
