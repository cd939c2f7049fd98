"""Every kind of input error raises InputError (a ValueError) with the command's message,
and the place (source, line, column) where the input has one. The golden cases
(test_golden.py) check the command's own error cases against it."""

import pytest

import perfcompose as pc
from conftest import CASES, TESTDATA, cli_location


def raises(func, *args, **kw):
    with pytest.raises(pc.InputError) as e:
        func(*args, **kw)
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith("error: ")
    return e.value


def test_a_term_error_has_its_place_and_caret():
    e = raises(pc.predict, "pipe(tpool(4, qsort), inc")
    assert (e.source, e.line) == ("<term>", 1)
    assert "pipe(tpool(4, qsort), inc\n" in str(e) and "^" in str(e)
    e = raises(pc.predict, "pipe(tpool(4, qsrot), inc)")
    assert (e.source, e.line, e.column) == ("<term>", 1, 15)
    assert "did you mean `qsort`?" in str(e)
    e = raises(pc.check, "qsort", "seq(qsort,")
    assert e.source == "<second term>"


def test_a_model_error_has_its_place():
    e = raises(pc.Model, "2 + * x")
    assert (e.source, e.line) == ("<model>", 1) and e.column == 5


def test_components_errors(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[components.qsort]\nmodel = "1 + x"\n\n[components.inc]\nmodel = "2 + * x"\n')
    e = raises(pc.predict, "qsort", components=bad)
    out = cli(["predict", "--components", str(bad), "qsort"])
    assert out.returncode == 2
    assert (e.source, e.line, e.column) == cli_location(out.stderr) == (str(bad), 5, 14)
    e = raises(pc.predict, "qsort", components={"qsort": "1 + * x"})
    assert e.source == "<components>" and e.line is not None
    e = raises(pc.predict, "qsort", components={"qsort": {"modle": "1 + x"}})
    assert "unknown field `modle`" in str(e)
    e = raises(pc.predict, "qsort", components=tmp_path / "nosuch.toml")
    assert e.source == str(tmp_path / "nosuch.toml") and e.line is None
    with pytest.raises(TypeError):
        pc.predict("qsort", components={"qsort": 3})


def test_grid_errors():
    e = raises(pc.predict, "qsort", at="x=2^20..2^10")
    assert e.source == "--at" and e.line == 1
    e = raises(pc.predict, "qsort", at={"x": [1024], "2x": [1]})
    assert e.source == "--at"
    raises(pc.optimize, "tpool(?, qsort)", cores=4, at={"x": [1, 2]})
    with pytest.raises(TypeError):
        pc.predict("qsort", at=3)


def test_option_errors():
    raises(pc.predict, "qsort", at={"x": 10}, level=1.5)
    raises(pc.predict, "qsort", cores=0)
    e = raises(pc.predict, "qsort", overhead=True)
    assert "built-in components" in str(e)
    raises(pc.check, "qsort")
    raises(pc.check, "qsort", "inc", laws=True)
    raises(pc.optimize, "tpool(?, qsort)", cores=0, at={"x": 1})
    e = raises(pc.fit, {"parameters": ["x"], "points": [[1]], "repetitions": [[1.0]]}, modeler="nosuch")
    assert "unknown modeler `nosuch`" in str(e) and e.source is None and e.line is None
    raises(pc.fit, {"parameters": ["x"], "points": [[1]], "repetitions": [[1.0]]}, measure="mode")


def test_measurement_errors(cli, tmp_path):
    case = CASES / "error-measurements"
    path = case / "bad.txt"
    if path.is_file():
        e = raises(pc.fit, path)
        out = cli(["fit", str(path)])
        assert (e.source, e.line, e.column) == cli_location(out.stderr)
    bad = tmp_path / "m.txt"
    bad.write_text("PARAMETER x\n\nPOINTS ( 1 )\nPOINTS ( 2 )\n\nREGION r\nMETRIC time\nDATA 1 2\nDATA 3 nan-ish\n")
    e = raises(pc.fit, bad)
    out = cli(["fit", str(bad)])
    assert (e.source, e.line, e.column) == cli_location(out.stderr)
    assert e.line == 9
    e = raises(pc.fit, {"parameters": ["x"], "points": [[1], [2]], "repetitions": [[1.0], [-2.0]]})
    assert e.source == "<measurements>" and e.line == 2
    e = raises(pc.fit, {"parameters": ["x"], "points": [[1], [2]], "repetitions": [[1.0]]})
    assert e.source == "<measurements>"


def test_simulation_errors(cli, tmp_path):
    d = TESTDATA / "sim" / "two-hosts"
    trace = tmp_path / "t.txt"
    trace.write_text("0 init\n0 compute 1e9\n0 sned 1 0 1e6\n")
    e = raises(pc.simulate, d / "platform.xml", trace)
    assert (e.source, e.line) == (str(trace), 3)
    assert e.column is not None
    platform = tmp_path / "p.xml"
    platform.write_text('<?xml version="1.0"?>\n<platform version="4.1">\n<zone id="z" routing="Full">\n<host id="a" speed="fast"/>\n</zone></platform>\n')
    e = raises(pc.simulate, platform, d / "index.txt")
    out = cli(["simulate", "--platform", str(platform), "--trace", str(d / "index.txt")])
    assert out.returncode == 2
    assert (e.source, e.line, e.column) == cli_location(out.stderr)
    raises(pc.simulate, d / "platform.xml", d / "index.txt", network="ethernet")
    raises(pc.simulate, d / "platform.xml", d / "index.txt", coll="bcast=nosuch")
    raises(pc.simulate, d / "platform.xml", d / "index.txt", speed_scale=0)
    raises(pc.simulate, d / "platform.xml", tmp_path / "nosuch.txt")
