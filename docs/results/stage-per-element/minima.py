"""The side-by-side runs of ab.sh: per saved folder (build, round, row), the program's
minimum over the larger of its stage tests' minima at every size, each stage's minima
(ns per call), and the prediction over the larger stage minimum at x = 1,024 ... 131,072.
Usage: python3 docs/results/stage-per-element/minima.py [OUT]; exits with status 2 on a
folder it cannot read."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts"))
import extrap_text  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__) or "."
dirs = sorted(glob.glob(os.path.join(out, "*-*-pipe_*/")))
if not dirs:
    extrap_text.fail("minima.py", f"{out}: no saved folders (<build>-<round>-<row>/)")
for d in sorted(dirs, key=lambda p: (p.rstrip("/").split("/")[-1].split("-", 1)[1], p)):
    name = d.rstrip("/").split("/")[-1]
    pts, blocks = extrap_text.read(os.path.join(d, "blocks.txt"), "minima.py")
    _, programs = extrap_text.read(os.path.join(d, "programs.txt"), "minima.py")
    conf = next(iter(programs))
    stages = [k for k in blocks if k.startswith(conf + "->")]
    slowest = [max(min(blocks[s][i]) for s in stages) for i in range(len(pts))]
    print(f"{name:22s} program / larger stage", " ".join(
        f"{min(programs[conf][i]) / slowest[i]:.3f}" for i in range(len(pts))))
    for s in stages:
        print(f"  {s.split('->')[1][:34]:34s}", " ".join(f"{min(v):.0f}" for v in blocks[s]))
    try:
        points = json.load(open(os.path.join(d, "points.json"), encoding="utf-8"))[0]["points"]
    except (OSError, ValueError, KeyError, IndexError) as e:
        extrap_text.fail("minima.py", f"{d}points.json: {e}")
    print("  prediction / larger stage        ", " ".join(
        f"{p['predicted'] / slowest[i]:.3f}" for i, p in enumerate(points[:9])))
