"""The minima of the first block of the pool's seq and of the program, per size, OLD/NEW,
from the folders ab.sh wrote: `python3 minima.py [DIR]`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts"))
import extrap_text  # noqa: E402


def read(path):
    """Extra-P text: {region: [(x, minimum of its repetitions)]}."""
    points, data = extrap_text.read(path, "minima.py")
    return {r: [(x, min(v)) for x, v in zip(points, reps)] for r, reps in data.items()}


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    higher = total = 0
    for row in ["tpool_2__seq_inc__nop", "tpool_2__seq_inc__inc"]:
        r = 1
        while os.path.isdir(f"{d}/old-{r}-{row}"):
            for what in ["blocks", "programs"]:
                old = read(f"{d}/old-{r}-{row}/{what}.txt")
                new = read(f"{d}/new-{r}-{row}/{what}.txt")
                for k in old:
                    if what == "blocks" and "seq1" not in k:
                        continue
                    pairs = list(zip(old[k], new[k]))
                    if what == "blocks":
                        higher += sum(b[1] > a[1] for a, b in pairs)
                        total += len(pairs)
                    cells = " ".join(f"{int(a[0])}: {a[1]:.0f}/{b[1]:.0f}" for a, b in pairs)
                    print(f"{row} round {r} {k.split('->')[-1]}: {cells}")
            r += 1
    print(f"pooled block minimum above the timed thread's in {higher} of {total}")


if __name__ == "__main__":
    main()
