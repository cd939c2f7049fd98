"""Every golden case of the command (`testdata/cli/*/cmd`) for predict, check, optimize
and fit, run through the Python API with the same arguments: a case the command
answers must give exactly the command's `--json` document; a case it refuses must raise
InputError, at the same place when the command names one.
"""

import pytest

import perfcompose as pc
from conftest import CASES, case_args, cli_location

COMMANDS = ("predict", "check", "optimize", "fit")
# Flags without a value, per command; every other flag takes one.
SWITCHES = {"json", "advise", "overhead", "laws", "rewrites", "allow_negative", "stats"}
REPEATED = {"at", "basis"}
# Flags whose value is a comma-separated list.
LISTS = {"breaks", "csv_parameters", "csv_values", "csv_callpath"}


def translate(args):
    """(function, positional arguments, keyword arguments) for the command line `args`."""
    command, rest = args[0], args[1:]
    positional, kw = [], {}
    i = 0
    while i < len(rest):
        a = rest[i]
        if not a.startswith("--"):
            positional.append(a)
            i += 1
            continue
        name = a[2:].replace("-", "_")
        if name in SWITCHES:
            kw[name] = True
            i += 1
            continue
        value = rest[i + 1]
        i += 2
        if name in REPEATED:
            kw.setdefault(name, []).append(value)
        elif name in LISTS:
            kw[name] = value.split(",")
        else:
            kw[name] = value
    kw.pop("json", None)
    kw.pop("stats", None)
    for k in ("cores", "top"):
        if k in kw:
            kw[k] = int(kw[k])
    if "level" in kw:
        kw["level"] = float(kw["level"])
    if "breaks" in kw:
        kw["breaks"] = [float(b) for b in kw["breaks"]]
    if command == "predict":
        return pc.predict, positional, kw
    if command == "check":
        return pc.check, positional, kw
    if command == "optimize":
        return pc.optimize, positional, kw
    return pc.fit, [positional], kw


def cases():
    out = []
    for d in sorted(CASES.iterdir()):
        cmd = d / "cmd"
        if cmd.is_file() and cmd.read_text().split("\n", 1)[0] in COMMANDS:
            out.append(d.name)
    return out


@pytest.mark.parametrize("name", cases())
def test_golden_case(name, cli, monkeypatch):
    args = case_args(name)
    case = CASES / name
    monkeypatch.chdir(case)
    func, positional, kw = translate(args)
    expected = cli([*args, "--json"] if "--json" not in args else args, case)
    if expected.returncode != 0:
        with pytest.raises(pc.InputError) as raised:
            func(*positional, **kw)
        where = cli_location(expected.stderr)
        if where is not None:
            e = raised.value
            assert (e.source, e.line, e.column) == where, (str(e), expected.stderr)
        return
    import json

    assert func(*positional, **kw) == json.loads(expected.stdout)


def test_every_command_has_cases():
    names = cases()
    for command in COMMANDS:
        assert any(case_args(n)[0] == command for n in names), command
