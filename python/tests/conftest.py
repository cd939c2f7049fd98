"""Shared helpers: the repository, the `perfcompose` binary the Python results are checked
against, and running it on a golden case's inputs.

The binary is `$PERFCOMPOSE_BIN`, else `$CARGO_TARGET_DIR/release/perfcompose`, else the
repository's `target/release/perfcompose` (`cargo build --release` makes it;
`scripts/test-python` does).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTDATA = ROOT / "testdata"
CASES = TESTDATA / "cli"


def binary() -> Path:
    if os.environ.get("PERFCOMPOSE_BIN"):
        return Path(os.environ["PERFCOMPOSE_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "perfcompose"


@pytest.fixture(scope="session")
def cli():
    """Run the command in a directory: `cli(args, cwd)` → CompletedProcess."""
    exe = binary()
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: build it with `cargo build --release -p perfcompose`")
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100", RUST_BACKTRACE="0")
    env.pop("CLICOLOR_FORCE", None)

    def run(args, cwd=ROOT):
        return subprocess.run(
            [str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """The command's `--json` output, parsed."""

    def run(args, cwd=ROOT):
        out = cli([*args, "--json"] if "--json" not in args else list(args), cwd)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


LOCATION = re.compile(r"╭─\[(?P<source>.+):(?P<line>\d+):(?P<column>\d+)\]\n")


def cli_location(stderr: str):
    """(source, line, column) of the command's located error (the header of miette's
    snippet, `╭─[origin:line:col]`), or None."""
    m = LOCATION.search(stderr)
    if not m:
        return None
    return m["source"], int(m["line"]), int(m["column"])


def case_args(name: str):
    return (CASES / name / "cmd").read_text().splitlines()
