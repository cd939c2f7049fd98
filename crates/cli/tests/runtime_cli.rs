//! `perfcompose bench` and `perfcompose validate` end to end: outputs parse, saved runs
//! read back, bad input exits with status 2 and a clear message, nothing hangs. Every
//! assertion is about structure, never about how fast something ran.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn perfcompose(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        // Keep any stored calibration of the machine out of the tests.
        .env("XDG_CONFIG_HOME", scratch("config"))
        .output()
        .expect("run perfcompose")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfcompose-rt-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn testdata(rel: &str) -> String {
    format!("{}/../../testdata/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[track_caller]
fn ok(args: &[&str]) -> Output {
    let o = perfcompose(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

#[track_caller]
fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&ok(args).stdout).unwrap()
}

#[track_caller]
fn assert_user_error(args: &[&str], needle: &str) {
    let o = perfcompose(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(needle), "{args:?}: expected `{needle}` in\n{e}");
    assert!(
        !e.contains("RUST_BACKTRACE") && !e.contains("stack backtrace"),
        "{args:?}: {e}"
    );
}

/// The tiny suite, saved into `dir` (no overhead calibration).
fn tiny_saved(dir: &Path, extra: &[&str]) -> Output {
    let suite = testdata("suites/tiny.toml");
    let mut args = vec![
        "validate",
        "--suite",
        &suite,
        "--no-overhead",
        "--save",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ok(&args)
}

#[test]
fn bench_lists_kernels() {
    let o = ok(&["bench", "kernels", "--list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    for k in [
        "nop",
        "inc",
        "qsort",
        "map",
        "reduce_pairwise",
        "reduce_per_key",
    ] {
        assert!(out.contains(k), "{out}");
    }
    assert!(
        !out.contains("panic"),
        "test kernels are not in the shipped binary"
    );
}

#[test]
fn bench_writes_extrap_text_that_fit_reads_back() {
    let dir = scratch("bench-text");
    let file = dir.join("blocks.txt");
    ok(&[
        "bench",
        "kernels",
        "inc",
        "nop",
        "--sizes",
        "1024,2048,4096",
        "--reps",
        "3",
        "--max-reps",
        "3",
        "-o",
        file.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("REGION inc") && text.contains("REGION nop"),
        "{text}"
    );
    let fit = json(&["fit", file.to_str().unwrap(), "--json"]);
    assert!(fit.to_string().contains("inc"), "{fit}");
}

#[test]
fn bench_kernels_and_designs_print_json() {
    let kernels = json(&[
        "bench",
        "kernels",
        "inc",
        "--sizes",
        "1024,4096",
        "--reps",
        "3",
        "--max-reps",
        "3",
        "--input",
        "warm",
        "--json",
    ]);
    let s = &kernels[0];
    assert_eq!(s["name"], "inc");
    assert_eq!(s["points"].as_array().unwrap().len(), 2);
    assert_eq!(s["points"][0]["values"].as_array().unwrap().len(), 3);
    let design = json(&[
        "bench",
        "design",
        "pipe(inc, nop)",
        "--sizes",
        "1024",
        "--reps",
        "3",
        "--max-reps",
        "3",
        "--json",
    ]);
    assert_eq!(design[0]["name"], "pipe(inc, nop)");
    let siblings = json(&[
        "bench",
        "kernels",
        "inc",
        "--sizes",
        "1024",
        "--reps",
        "3",
        "--max-reps",
        "3",
        "--siblings",
        "1",
        "--input",
        "handed-over",
        "--json",
    ]);
    assert_eq!(siblings[0]["points"].as_array().unwrap().len(), 1);
}

#[test]
fn validate_tiny_suite_json_schema() {
    let dir = scratch("tiny-json");
    let o = tiny_saved(&dir, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["measure"], "minimum");
    let rows = v["rows"].as_array().unwrap();
    let terms: Vec<&str> = rows
        .iter()
        .map(|r| r["configuration"].as_str().unwrap())
        .collect();
    assert_eq!(
        terms,
        [
            "seq(inc, nop)",
            "tpool(2, inc)",
            "pipe(inc, nop)",
            "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)"
        ]
    );
    for r in rows {
        for field in [
            "modular",
            "monolithic",
            "time_error",
            "coefficient_error",
            "verdict",
            "notes",
            "overhead_ns",
        ] {
            assert!(r.get(field).is_some(), "{field} in {r}");
        }
        assert!(r["repeat_error"].as_f64().is_some(), "{r}");
        let verdict = r["verdict"].as_str().unwrap();
        assert!(
            ["within", "miss", "miss_within_repeat", "reported_only"].contains(&verdict),
            "{verdict}"
        );
        for n in r["notes"].as_array().unwrap() {
            assert!(n["kind"].is_string() && n["text"].is_string(), "{n}");
        }
        perfcompose_core::model::parse_model(r["modular"].as_str().unwrap()).unwrap();
    }
    let s = &v["summary"];
    assert!(s["judged"].as_u64().unwrap() <= 4, "{s}");
    assert!(
        s["meets_target"].is_boolean() && s["median_error"].is_number(),
        "{s}"
    );
}

#[test]
fn a_saved_run_is_validated_again_from_its_folder_alone() {
    let dir = scratch("tiny-saved");
    let live = tiny_saved(&dir, &["--json"]);
    let live: serde_json::Value = serde_json::from_slice(&live.stdout).unwrap();
    for f in [
        "run.json",
        "blocks.txt",
        "programs.txt",
        "rows.jsonl",
        "report.json",
        "points.json",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let programs = std::fs::read_to_string(dir.join("programs.txt")).unwrap();
    assert!(
        programs.contains("REGION seq(inc, nop) [before blocks]"),
        "{programs}"
    );
    let d = dir.to_str().unwrap();
    // The same data, statistic and modeler: the same rows.
    let again = json(&["validate", "--from", d, "--json"]);
    assert_eq!(again["rows"].as_array().unwrap().len(), 4);
    for (a, b) in live["rows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(again["rows"].as_array().unwrap())
    {
        assert_eq!(a["modular"], b["modular"]);
        assert_eq!(a["time_error"], b["time_error"]);
    }
    // Another statistic; some rows only.
    let median = json(&["validate", "--from", d, "--measure", "median", "--json"]);
    assert_eq!(median["measure"], "median");
    let one = json(&[
        "validate",
        "--from",
        d,
        "--only",
        "pipe( inc,nop )",
        "--json",
    ]);
    assert_eq!(one["rows"].as_array().unwrap().len(), 1);
    // The human report names the verdicts and the suite's summary.
    let text = String::from_utf8_lossy(&ok(&["validate", "--from", d]).stdout).into_owned();
    assert!(text.contains("program vs itself"), "{text}");
    assert!(text.contains("configurations within target"), "{text}");
}

#[test]
fn validate_breaks_a_block_model_at_the_cache_where_its_measurements_step_by_default() {
    // A real run's `seq(inc, nop)` (Intel guest, 48 KiB L1d): `inc` steps up where its
    // arrays outgrow the level-1 cache. The default modeler breaks the block's model at
    // the saved run's caches; one model per block does not.
    let dir = testdata("validate/intel-seq-inc-nop");
    let modular = |extra: &[&str]| -> String {
        let mut args = vec!["validate", "--from", &dir, "--json"];
        args.extend_from_slice(extra);
        json(&args)["rows"][0]["modular"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let default = modular(&[]);
    assert_eq!(default, modular(&["--modeler", "segmented"]));
    assert!(default.contains("piecewise(x"), "{default}");
    let single = modular(&["--modeler", "perfcompose"]);
    assert!(!single.contains("piecewise"), "{single}");
}

#[test]
fn validate_runs_a_seq_of_parallel_parts() {
    let o = ok(&[
        "validate",
        "--term",
        "seq(pipe(inc, nop), inc)",
        "--sizes",
        "1024,2048,4096",
        "--no-overhead",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"][0]["configuration"], "seq(pipe(inc, nop), inc)");
}

#[test]
fn bad_input_is_a_clear_error_with_status_2() {
    assert_user_error(&["bench", "kernels", "qsrot"], "unknown kernel `qsrot`");
    assert_user_error(
        &["bench", "design", "pipe(qsort, nosuch)", "--sizes", "64"],
        "unknown kernel `nosuch`",
    );
    assert_user_error(
        &["bench", "design", "tpool(0, inc)", "--sizes", "64"],
        "at least one thread",
    );
    assert_user_error(
        &[
            "bench",
            "design",
            "dc(a, b, c, procs=4, exchange=e)",
            "--sizes",
            "64",
        ],
        "no runtime implementation",
    );
    assert_user_error(
        &[
            "bench",
            "design",
            "mapreduce(map, reduce_per_key, nodes=2, threads=2, keys=768, per_key=x)",
            "--sizes",
            "4",
        ],
        "one node",
    );
    assert_user_error(
        &["bench", "design", "pipe(map, inc)", "--sizes", "64"],
        "map kernel",
    );
    assert_user_error(
        &["bench", "design", "pipe(qsort,", "--sizes", "64"],
        "<term>",
    );
    assert_user_error(
        &["bench", "kernels", "qsort", "--sizes", "0"],
        "not positive",
    );
    assert_user_error(
        &["bench", "kernels", "qsort", "--sizes", "1099511627776"],
        "bytes",
    );
    assert_user_error(
        &["bench", "kernels", "inc", "--input", "lukewarm"],
        "invalid value",
    );
    assert_user_error(
        &["bench", "kernels", "inc", "--memory-limit", "0"],
        "at least 1 MiB",
    );
    assert_user_error(&["validate", "--term", "tpool(2, qsrot)"], "unknown kernel");
    assert_user_error(&["validate", "--cores", "0"], "at least 1");
    assert_user_error(&["validate", "--measure", "mode"], "invalid value");
    assert_user_error(
        &["validate", "--modeler", "magic"],
        "unknown modeler `magic`",
    );
    assert_user_error(&["validate", "--suite", "nosuch"], "unknown suite `nosuch`");
    // A typo in --only gets a caret, as one in --term does.
    assert_user_error(
        &[
            "validate",
            "--suite",
            "paper",
            "--only",
            "pipe(inc, qsort, nop)",
        ],
        "has no configuration",
    );
    assert_user_error(&["validate", "--only", "pipe(inc,"], "--only:1:");
    assert_user_error(&["validate", "--term", "pipe(inc,"], "<term>:1:");
    assert_user_error(
        &[
            "validate",
            "--only",
            "seq(inc, nop)",
            "--term",
            "seq(inc, nop)",
        ],
        "",
    );
    // A suite file with a mistake: its line and column.
    let dir = scratch("bad-suite");
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        "[[case]]\nterm = \"seq(inc, nop)\"\nsizes = [1024, -1]\n",
    )
    .unwrap();
    assert_user_error(
        &["validate", "--suite", bad.to_str().unwrap()],
        "bad.toml:3:",
    );
    std::fs::write(&bad, "[[case]]\nterm = \"seq(inc, \"\nsizes = [1024]\n").unwrap();
    assert_user_error(
        &["validate", "--suite", bad.to_str().unwrap()],
        "bad.toml:2:",
    );
    // Saved runs: a folder that is not one, and one of another layout.
    assert_user_error(
        &["validate", "--from", dir.to_str().unwrap()],
        "is not a saved validation run",
    );
    std::fs::write(
        dir.join("run.json"),
        "{\"format\": \"perfcompose validate run\"}",
    )
    .unwrap();
    assert_user_error(
        &["validate", "--from", dir.to_str().unwrap()],
        "layout version (none)",
    );
}
