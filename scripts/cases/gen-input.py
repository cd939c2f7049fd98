#!/usr/bin/env python3
"""Deterministic inputs for the case studies (docs/case-studies.md).

    gen-input.py text BYTES OUT [--seed S]   pseudo-English text, exactly BYTES bytes
    gen-input.py lines N OUT [--seed S]      N lines of random keys (one word and a number)

Both are a prefix of one stream fixed by the seed: the input of a smaller size is the
beginning of the input of a larger one, so that a block cut from an input at size x is
a block of every larger input too. The text draws words from a vocabulary of 4,096
made-up words with Zipf-like frequencies, so that it compresses about as ordinary text
does (bzip2 -9 and xz -1 to about 30% of its size); random bytes would not compress,
and compressors spend their time differently on them.
"""
import argparse
import random
import string
import sys

VOCABULARY = 4096
CHUNK_WORDS = 1 << 16


def vocabulary(rng):
    words = []
    for _ in range(VOCABULARY):
        n = rng.choice((2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 11))
        words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(n)))
    return words


def text(size, out, seed):
    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(VOCABULARY)]
    cum = []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)
    written = 0
    while written < size:
        chosen = rng.choices(words, cum_weights=cum, k=CHUNK_WORDS)
        # Lines of 12 words, a sentence's capital now and then: ordinary text's shape.
        lines = []
        for i in range(0, len(chosen), 12):
            line = " ".join(chosen[i : i + 12])
            lines.append(line.capitalize() + ".\n")
        data = "".join(lines).encode()
        data = data[: size - written]
        out.write(data)
        written += len(data)


def lines(count, out, seed):
    rng = random.Random(seed)
    words = vocabulary(rng)
    buf = []
    for i in range(count):
        buf.append(f"{rng.choice(words)} {rng.getrandbits(40):012d}\n")
        if len(buf) == CHUNK_WORDS:
            out.write("".join(buf).encode())
            buf.clear()
    out.write("".join(buf).encode())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("kind", choices=("text", "lines"))
    p.add_argument("size", type=int, help="bytes (text) or lines (lines)")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=63)
    a = p.parse_args()
    if a.size < 0:
        sys.exit("gen-input.py: the size must not be negative")
    with open(a.out, "wb") as out:
        (text if a.kind == "text" else lines)(a.size, out, a.seed)


if __name__ == "__main__":
    main()
