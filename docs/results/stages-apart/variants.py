#!/usr/bin/env python3
"""Each saved `validate --save DIR` run composed again (`validate --suite paper --from`)
four ways, from copies of DIR whose phases.json keeps: both the phases and every stage's
time per repetition ("both", `--stages-apart`), only the phases ("hinges", the default),
only the stages' times ("apart", `--stages-apart`), and neither (`--no-phases`, "none").
Prints each row's time error, %.

Usage: python3 variants.py PERFCOMPOSE DIR [DIR ...]. A missing or malformed file, or a
failing `validate`: a message naming it, exit status 2."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from apart import fail, load  # the same folder: missing or malformed files, exit 2


def main(pc, dirs):
    if not dirs:
        fail("usage: variants.py PERFCOMPOSE DIR [DIR ...]")
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            phases = load(f"{d}/phases.json")
            errors = {}
            for v in ["both", "hinges", "apart", "none"]:
                t = os.path.join(tmp, f"{os.path.basename(d.rstrip('/'))}-{v}")
                shutil.copytree(d, t)
                kept = json.loads(json.dumps(phases))
                for at in kept.get("series", {}).values():
                    for p in at:
                        if v == "hinges":
                            p.pop("stages", None)
                        if v == "apart":
                            p.pop("phases", None)
                with open(f"{t}/phases.json", "w") as f:
                    json.dump(kept, f)
                args = [pc, "validate", "--suite", "paper", "--from", t, "--json"]
                if v == "none":
                    args.append("--no-phases")
                if v in ("both", "apart"):
                    args.append("--stages-apart")
                out = subprocess.run(args, capture_output=True, text=True)
                if out.returncode != 0:
                    fail(f"{' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
                for row in json.loads(out.stdout)["rows"]:
                    errors.setdefault(row["configuration"], {})[v] = row["time_error"] * 100
            for conf, e in errors.items():
                cells = "  ".join(f"{v} {e[v]:5.1f}" for v in ["both", "hinges", "apart", "none"])
                print(f"{d:28s} {conf:24s} {cells}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        fail("usage: variants.py PERFCOMPOSE DIR [DIR ...]")
    main(sys.argv[1], sys.argv[2:])
