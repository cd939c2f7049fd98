//! Integration tests of the `perfcompose` binary: golden cases in `testdata/cli/`, plus
//! properties of every command (errors exit 2 with a located message, never a panic).

mod common;

use common::{check_case, run};

/// Every case in `testdata/cli/` (see `common` for the layout; bless with
/// `PERFCOMPOSE_BLESS=1`).
#[test]
fn golden_cases() {
    let cases = common::cases("cli");
    assert!(cases.len() >= 20, "only {} golden cases found", cases.len());
    let failures: Vec<String> = cases.iter().filter_map(|c| check_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn demo_runs_on_built_in_defaults() {
    let out = run(&["demo"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // Table 2's task pool with 4 threads and eq. 6 for 24 threads.
    assert!(
        text.contains("tpool(4, qsort)    258.543 * x * log2(x)"),
        "{text}"
    );
    assert!(text.contains("910792 * x"), "{text}");
}

#[test]
fn demo_json_is_valid() {
    let out = run(&["demo", "--json"]);
    assert!(out.status.success());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 16 + 6 + 5);
}

#[test]
fn predict_json_round_trips_the_model() {
    let out = run(&[
        "predict",
        "pipe(tpool(4, qsort), seq(inc, nop))",
        "--at",
        "x=1024",
        "--json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = v["model"].as_str().unwrap();
    let e = perfcompose_core::model::parse_model(model).unwrap();
    assert_eq!(e.to_string(), model);
    let value = v["values"][0]["value"].as_f64().unwrap();
    assert_eq!(e.eval_at(&[("x", 1024.0)]).unwrap(), value);
    for key in [
        "term",
        "model",
        "dominant",
        "values",
        "crossovers",
        "pipelines",
        "notes",
        "suggestions",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}`");
    }
}

/// Bad input of every kind: exit status 2, a located message on stderr, no panic.
#[test]
fn bad_input_exits_2_without_panicking() {
    let cases: &[&[&str]] = &[
        &["predict", ""],
        &["predict", "pipe(a"],
        &["predict", "pipe(qsort, inc) inc"],
        &["predict", "tpool(0, qsort)"],
        &["predict", "qsort", "--at", "x=0"],
        &["predict", "qsort", "--at", "x="],
        &["predict", "qsort", "--at", "y=1"],
        &["predict", "qsort", "--components", "does/not/exist.toml"],
        &["predict", "qsort", "--term-file", "does/not/exist"],
        &["check", "qsort"],
        &["check", "qsort", "nosuch"],
        &["predict", "dc(a, b, c, procs=3, exchange=e)"],
    ];
    for args in cases {
        let out = run(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.trim().is_empty(), "{args:?}: no message");
    }
}
