//! `perfcompose measure` and `perfcompose validate -- CMD` on real processes: exact
//! outputs from programs whose printed times are fixed (`echo`, `sh`), blocks over
//! different parameters in one file, the failures and interrupts and what they keep, and
//! the C example's whole loop (measure → fit → predict → check → validate), built with
//! gcc. No assertion depends on how fast anything runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{command_in, run_in};

/// A fresh directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("measure")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_in(dir, &args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Run and expect success; the standard output.
fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "perfcompose {}: {}\n{}",
        args.join(" "),
        text(&out.stderr),
        text(&out.stdout)
    );
    text(&out.stdout)
}

/// Run and expect exit status 2 and no panic; the standard error.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "perfcompose {}: {stderr}",
        args.join(" ")
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// `echo took {x} ms` as a block: its printed time is exactly x ms.
const ECHO_MS: &[&str] = &[
    "--time-from",
    r"took (\d+) (ms)",
    "--",
    "echo",
    "took",
    "{x}",
    "ms",
];

fn measure_echo(dir: &Path, name: &str, at: &str, out: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "measure",
        "--name",
        name,
        "--at",
        at,
        "-o",
        out,
        "--reps",
        "2",
        "--max-reps",
        "2",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(ECHO_MS);
    ok(dir, &args)
}

#[test]
fn printed_times_go_to_an_extrap_file_that_fit_reads_back() {
    let dir = temp_dir("printed");
    let out = measure_echo(&dir, "sort", "x=1000, 2^11, 4000, 8000", "blocks.txt", &[]);
    assert!(out.starts_with("+--"), "{out}");
    assert!(out.contains("| 1000   1 s "), "{out}");
    assert!(out.contains("| 2048   2.048 s "), "{out}");
    assert!(
        out.ends_with("times printed by the program of `sort` (echo took {x} ms): 4 points, 8 repetitions added to blocks.txt (Extra-P text)\n"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("blocks.txt")).unwrap(),
        "PARAMETER x\nPOINTS ( 1000.0 )\nPOINTS ( 2048.0 )\nPOINTS ( 4000.0 )\nPOINTS ( 8000.0 )\n\n\
         REGION sort\nMETRIC time\nDATA 1000000000.0 1000000000.0\nDATA 2048000000.0 2048000000.0\n\
         DATA 4000000000.0 4000000000.0\nDATA 8000000000.0 8000000000.0\n"
    );
    // A second run adds its repetitions; a second block shares the file; fit reads it.
    measure_echo(
        &dir,
        "sort",
        "x=1000,2048,4000,8000",
        "blocks.txt",
        &["--shuffle"],
    );
    measure_echo(&dir, "sum", "x=1000,2048,4000,8000", "blocks.txt", &[]);
    let exp = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    assert!(
        exp.contains(
            "REGION sort\nMETRIC time\nDATA 1000000000.0 1000000000.0 1000000000.0 1000000000.0\n"
        ),
        "{exp}"
    );
    assert!(exp.contains("REGION sum\n"), "{exp}");
    let fit = ok(&dir, &["fit", "blocks.txt"]);
    assert_eq!(fit.lines().count(), 2, "{fit}");
    assert!(fit.starts_with("sort; time; 999999.99"), "{fit}");
    assert!(
        fit.lines().all(|l| l.contains("* x^(1); SMAPE 0.000%")),
        "{fit}"
    );
}

#[test]
fn json_lists_every_repetition_and_jsonl_files_are_written() {
    let dir = temp_dir("json");
    let out = measure_echo(&dir, "b", "x=3", "b.jsonl", &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["name"], "b");
    assert_eq!(v["unit"], "ns");
    assert_eq!(v["timed"], "printed");
    assert_eq!(v["format"], "JSON Lines");
    assert_eq!(v["points"][0]["point"]["x"], 3.0);
    assert_eq!(v["points"][0]["values"], serde_json::json!([3e6, 3e6]));
    assert_eq!(v["points"][0]["median"], 3e6);
    let lines = std::fs::read_to_string(dir.join("b.jsonl")).unwrap();
    assert_eq!(
        lines,
        "{\"params\":{\"x\":3},\"callpath\":\"b\",\"metric\":\"time\",\"value\":3000000}\n"
            .repeat(2)
    );
}

/// The issue's workflow: `predict --advise` asks for one block at a new size, and
/// `measure --name a --at x=32000` extends that block's grid alone in the shared file.
#[test]
fn one_blocks_grid_grows_alone_in_a_shared_file() {
    let dir = temp_dir("extend");
    for name in ["a", "b"] {
        measure_echo(&dir, name, "x=1000,2000,4000", "blocks.jsonl", &[]);
        measure_echo(&dir, name, "x=1000,2000,4000", "blocks.txt", &[]);
    }
    // JSON Lines holds any points per block: the new point goes in at once.
    let out = measure_echo(&dir, "a", "x=32000", "blocks.jsonl", &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["output"], "blocks.jsonl");
    let fit = ok(&dir, &["fit", "blocks.jsonl", "--stats"]);
    assert!(fit.contains("32000"), "{fit}");
    // Extra-P's text format cannot: measure converts the file to JSON Lines, saying so.
    let before = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    let conv = temp_dir("extend-text");
    std::fs::write(conv.join("blocks.txt"), &before).unwrap();
    let out = run(
        &conv,
        &[
            "measure",
            "--name",
            "a",
            "--at",
            "x=32000",
            "-o",
            "blocks.txt",
            "--reps",
            "2",
            "--max-reps",
            "2",
            "--time-from",
            r"took (\d+) (ms)",
            "--",
            "echo",
            "took",
            "{x}",
            "ms",
        ],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("blocks.txt (Extra-P text) keeps the series over (x) at the same points")
            && stderr.contains("go to blocks.jsonl"),
        "{stderr}"
    );
    assert!(
        text(&out.stdout).ends_with("1 points, 2 repetitions added to blocks.jsonl (JSON Lines)\n"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(conv.join("blocks.txt")).unwrap(),
        before
    );
    let fit = ok(&conv, &["fit", "blocks.jsonl"]);
    assert_eq!(fit.lines().count(), 2, "{fit}");
    // A second extension finds the JSON Lines file and is told to measure into it.
    let err = fails(
        &conv,
        &[
            "measure",
            "--name",
            "b",
            "--at",
            "x=64000",
            "-o",
            "blocks.txt",
            "--",
            "echo",
            "{x}",
        ],
    );
    assert!(err.contains("measure into it (-o blocks.jsonl)"), "{err}");
}

/// Every saved file has its provenance beside it: a line per run that wrote to it.
#[test]
fn measure_records_how_each_run_was_made_beside_its_file() {
    let dir = temp_dir("provenance");
    measure_echo(&dir, "a", "x=1,2", "blocks.txt", &[]);
    measure_echo(&dir, "b", "x=1,2", "blocks.txt", &[]);
    let text = std::fs::read_to_string(dir.join("blocks.txt.provenance.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let p = &lines[1];
    assert!(!p["host"].as_str().unwrap().is_empty(), "{p}");
    assert!(p["cores"].as_u64().unwrap() >= 1, "{p}");
    assert!(
        p["load_average"].is_array() || p["load_average"].is_null(),
        "{p}"
    );
    assert_eq!(p["build"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(!p["build"]["commit"].as_str().unwrap().is_empty(), "{p}");
    let line: Vec<&str> = p["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(&line[1..5], ["measure", "--name", "b", "--at"], "{p}");
}

/// `--time-from '([0-9.]+) ms'` on `5 ms` reads 5 s: said once, with the pattern that
/// captures the unit.
#[test]
fn a_unit_outside_the_pattern_is_warned_about_with_the_fix() {
    let dir = temp_dir("unit-outside");
    let args = |pattern: &'static str| {
        vec![
            "measure",
            "--name",
            "a",
            "--at",
            "x=5,6",
            "-o",
            "a.txt",
            "--reps",
            "2",
            "--max-reps",
            "2",
            "--time-from",
            pattern,
            "--",
            "echo",
            "{x}",
            "ms",
        ]
    };
    let out = run(&dir, &args(r"([0-9.]+) ms"));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        "warning: --time-from `([0-9.]+) ms` took `5` as seconds, and the output has `ms` right after it, outside the pattern's groups: capture the unit as the second group: --time-from '([0-9.]+) (ms)'\n"
    );
    let out = run(&dir, &args(r"([0-9.]+) (ms)"));
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "");
}

/// Too few repetitions for a confidence interval: none is shown (not a zero-width one),
/// and no target is said to be missed.
#[test]
fn too_few_repetitions_have_no_interval() {
    let dir = temp_dir("few-reps");
    let out = measure_echo(&dir, "a", "x=3", "a.txt", &[]);
    assert!(out.contains("none (2 reps; an interval needs 6)"), "{out}");
    assert!(!out.contains("target not reached"), "{out}");
    assert!(!out.contains("3 ms .. 3 ms"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&measure_echo(&dir, "a", "x=3", "a.txt", &["--json"])).unwrap();
    assert_eq!(v["points"][0]["ci"], serde_json::Value::Null);
    // Enough repetitions: the interval, equal ends when every repetition is the same.
    let mut args = vec![
        "measure",
        "--name",
        "a",
        "--at",
        "x=3",
        "-o",
        "a.txt",
        "--reps",
        "6",
        "--max-reps",
        "6",
    ];
    args.extend_from_slice(ECHO_MS);
    let out = ok(&dir, &args);
    assert!(out.contains("3 ms .. 3 ms"), "{out}");
}

#[test]
fn the_table_and_json_show_the_statistic_fit_uses() {
    // Repetitions of 30, 10, 20 ms (a counter the prepare script steps): the default
    // statistic, the minimum, comes first and is what `fit` fits.
    let dir = temp_dir("statistic");
    std::fs::write(dir.join("times"), "30\n10\n20\n").unwrap();
    let args = |json: bool| {
        let mut a = vec![
            "measure",
            "--name",
            "b",
            "--at",
            "x=1",
            "-o",
            "b.txt",
            "--reps",
            "3",
            "--max-reps",
            "3",
            "--warmup",
            "0",
            "--shell",
            "--prepare",
            "head -n 1 times > t; tail -n +2 times > rest; cat t >> rest; mv rest times",
            "--time-from",
            r"(\d+) (ms)",
        ];
        if json {
            a.push("--json");
        }
        a.extend(["--", "echo \"$(cat t) ms\""]);
        a
    };
    let out = ok(&dir, &args(false));
    assert!(out.contains("| x   minimum   median "), "{out}");
    assert!(out.contains("| 1   10 ms     20 ms "), "{out}");
    let v: serde_json::Value = serde_json::from_str(&ok(&dir, &args(true))).unwrap();
    assert_eq!(v["measure"], "minimum");
    assert_eq!(v["points"][0]["value"], 1e7);
    assert_eq!(v["points"][0]["median"], 2e7);
    let fit = ok(&dir, &["fit", "b.txt"]);
    assert!(fit.starts_with("b; time; 10000000; "), "{fit}");
}

#[test]
fn several_parameters_a_shell_and_a_prepare_script() {
    let dir = temp_dir("grid");
    // The prepare script writes the time the command then prints: p * n ms.
    let out = ok(
        &dir,
        &[
            "measure",
            "--name",
            "halo",
            "--at",
            "p=2,4",
            "--at",
            "n=10",
            "-o",
            "halo.txt",
            "--reps",
            "1",
            "--max-reps",
            "1",
            "--warmup",
            "0",
            "--shell",
            "--prepare",
            "echo $(({p} * {n})) > t",
            "--time-from",
            r"(\d+) (ms)",
            "--",
            "echo \"$(cat t) ms\"",
        ],
    );
    assert!(out.contains("| 2   10   20 ms "), "{out}");
    assert!(out.contains("| 4   10   40 ms "), "{out}");
    let exp = std::fs::read_to_string(dir.join("halo.txt")).unwrap();
    assert!(
        exp.starts_with("PARAMETER p\nPARAMETER n\nPOINTS ( 2.0 10.0 )\nPOINTS ( 4.0 10.0 )\n"),
        "{exp}"
    );
    assert!(exp.contains("DATA 20000000.0\nDATA 40000000.0\n"), "{exp}");
    // Wall times without --time-from: some positive time per repetition.
    let out = ok(
        &dir,
        &[
            "measure",
            "--name",
            "t",
            "--at",
            "x=1",
            "-o",
            "wall.txt",
            "--reps",
            "1",
            "--max-reps",
            "1",
            "--json",
            "--",
            "true",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["timed"], "wall");
    assert!(v["points"][0]["values"][0].as_f64().unwrap() > 0.0);
}

#[test]
fn a_failing_command_stops_with_its_line_point_and_stderr_and_keeps_what_was_measured() {
    let dir = temp_dir("failing");
    // Fails at x=2, after x=1 was measured.
    let err = fails(
        &dir,
        &[
            "measure", "--name", "f", "--at", "x=1,2", "-o", "f.txt", "--reps", "1", "--max-reps", "1",
            "--shell", "--time-from", r"took (\d+)", "--",
            "echo took {x}; if [ {x} -gt 1 ]; then echo first >&2; echo 'input missing' >&2; exit 3; fi",
        ],
    );
    assert!(
        err.contains("kept the 1 point measured before the failure in f.txt"),
        "{err}"
    );
    assert!(err.contains("failed at x=2 (exit status: 3); the last lines of its standard error:\n  | first\n  | input missing"), "{err}");
    assert!(err.contains("`echo took 2; if [ 2 -gt 1 ]"), "{err}");
    let kept = std::fs::read_to_string(dir.join("f.txt")).unwrap();
    assert!(
        kept.contains("POINTS ( 1.0 )\n\nREGION f\nMETRIC time\nDATA 1000000000.0\n"),
        "{kept}"
    );

    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "m",
            "--at",
            "x=1",
            "-o",
            "m.txt",
            "--",
            "./no-such-program",
            "{x}",
        ],
    );
    assert!(
        err.contains("cannot start `./no-such-program 1` at x=1"),
        "{err}"
    );
    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "m",
            "--at",
            "x=5",
            "-o",
            "m.txt",
            "--time-from",
            r"took (\d+)",
            "--",
            "echo",
            "done",
            "{x}",
        ],
    );
    assert!(err.contains("`echo done 5` at x=5: --time-from `took (\\d+)` matched nothing in its output; the last lines of its output:\n  | done 5"), "{err}");
    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "m",
            "--at",
            "x=5",
            "-o",
            "m.txt",
            "--time-from",
            "took",
            "--",
            "true",
        ],
    );
    assert!(err.contains("no group"), "{err}");
    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "m",
            "--at",
            "x=5",
            "-o",
            "m.txt",
            "--reps",
            "4",
            "--max-reps",
            "2",
            "--",
            "true",
        ],
    );
    assert!(err.contains("--max-reps 2 is below --reps 4"), "{err}");
    assert!(!dir.join("m.txt").exists());
    // The same block over other parameters is refused before anything runs.
    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "f",
            "--at",
            "y=1",
            "-o",
            "f.txt",
            "--shell",
            "--",
            "touch ran",
        ],
    );
    assert!(
        err.contains("`f / time` is in the file over (x), these measurements are over (y)"),
        "{err}"
    );
    assert!(err.contains("f.txt:6:1"), "{err}");
    assert!(!dir.join("ran").exists());
}

#[test]
fn validate_compares_a_command_with_the_prediction_of_its_blocks() {
    let dir = temp_dir("validate");
    measure_echo(&dir, "a", "x=1,2,4,8", "blocks.txt", &[]);
    let toml = "[components.a]\nmeasurements = \"blocks.txt\"\ncallpath = \"a\"\n\n[components.b]\nmodel = \"500000\"\n";
    std::fs::write(dir.join("blocks.toml"), toml).unwrap();
    // The program runs 5% slower than its slower stage.
    let base = [
        "validate",
        "--components",
        "blocks.toml",
        "--term",
        "pipe(a, b)",
        "--at",
        "x=1,2,4,8",
        "--cores",
        "2",
        "--reps",
        "2",
        "--max-reps",
        "2",
        "--shell",
        "--time-from",
        r"took ([0-9.]+) (ms)",
    ];
    let mut args = base.to_vec();
    args.extend(["--json", "--", "echo took {x}.05 ms"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&dir, &args)).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["configuration"], "pipe(a, b)");
    assert_eq!(row["group"], "your program");
    assert_eq!(row["threads"], 2);
    assert_eq!(row["modular"], "max(1000000 * x, 500000)");
    assert_eq!(row["verdict"], "within");
    // The worst point is x = 1: 1.05 ms against 1 ms predicted.
    assert!(
        (row["time_error"].as_f64().unwrap() - 0.05 / 1.05).abs() < 1e-9,
        "{row}"
    );
    assert_eq!(v["summary"]["judged"], 1);
    // Every round reads the same: decided at six.
    assert_eq!(row["rounds"], 6);
    // Saved, the run is read back (and drawn) without running the program.
    let mut args = base.to_vec();
    args.extend(["--save", "saved", "--json", "--", "echo took {x}.05 ms"]);
    ok(&dir, &args);
    let again: serde_json::Value =
        serde_json::from_str(&ok(&dir, &["validate", "--from", "saved", "--json"])).unwrap();
    assert_eq!(again["rows"][0]["verdict"], "within", "{again}");
    assert_eq!(again["rows"][0]["rounds"], 6, "{again}");
    assert_eq!(again["rows"][0]["modular"], row["modular"]);
    ok(
        &dir,
        &["report", "--validate", "saved", "-o", "validation.html"],
    );
    let html = std::fs::read_to_string(dir.join("validation.html")).unwrap();
    assert!(
        html.contains("pipe(a, b)") && html.contains("within target"),
        "{html}"
    );
    // People get the rows of the built-in validate.
    let mut args = base.to_vec();
    args.extend(["--", "echo took {x}.05 ms"]);
    let out = ok(&dir, &args);
    assert!(
        out.contains("│ pipe(a, b)    ┆ 2       ┆ max(1000000 * x, 500000)"),
        "{out}"
    );
    assert!(out.contains("within ±10%"), "{out}");
    assert!(out.contains("statistic: the minimum\n"), "{out}");
    // Errors: no sizes, several parameters, an unknown component, a failing program.
    let mut args = base.to_vec();
    args.truncate(5);
    args.extend(["--", "true"]);
    assert!(fails(&dir, &args).contains("--at x=V1"));
    let err = fails(
        &dir,
        &[
            "validate",
            "--components",
            "blocks.toml",
            "--term",
            "pipe(a, c)",
            "--at",
            "x=1,2",
            "--",
            "true",
        ],
    );
    assert!(err.contains("`c`"), "{err}");
    let err = fails(
        &dir,
        &[
            "validate",
            "--components",
            "blocks.toml",
            "--term",
            "a",
            "--at",
            "x=1",
            "--at",
            "p=2",
            "--",
            "true",
        ],
    );
    assert!(err.contains("one parameter, x"), "{err}");
    let err = fails(
        &dir,
        &[
            "validate",
            "--components",
            "blocks.toml",
            "--term",
            "a",
            "--at",
            "x=1,2",
            "--",
            "false",
            "{x}",
        ],
    );
    assert!(
        err.contains("`false 1` failed at x=1 (exit status: 1)"),
        "{err}"
    );
    let err = fails(&dir, &["validate", "--reps", "3"]);
    assert!(err.contains("--reps"), "{err}");
}

#[test]
fn a_suite_file_judges_designs_of_your_own_program_as_alternatives() {
    let dir = temp_dir("designs");
    measure_echo(&dir, "a", "x=1,2,4,8", "blocks.txt", &[]);
    let toml = "[components.a]\nmeasurements = \"blocks.txt\"\ncallpath = \"a\"\n\n[components.b]\nmodel = \"500000\"\n";
    std::fs::write(dir.join("blocks.toml"), toml).unwrap();
    // Two designs of one program over `a` and `b`: the pipeline runs at its slower
    // stage (x ms, predicted x ms), the sequence at both (x + 0.5 ms, predicted
    // x + 0.5 ms); each 0.05 ms slower than predicted.
    let suite = "host_check = false\n[budget]\nrounds = 6\nseconds = 5\n\
                 [sampling]\nmin_reps = 2\nmax_reps = 2\n\
                 [[program]]\nterm = \"pipe(a, b)\"\ncommand = \"echo took {x}.05 ms\"\n\
                 components = \"blocks.toml\"\nsizes = [1, 2, 4, 8]\ntime_from = \"took ([0-9.]+) (ms)\"\n\
                 [[program]]\nterm = \"seq(a, b)\"\ncommand = \"echo took {x}.55 ms\"\n\
                 components = \"blocks.toml\"\nsizes = [1, 2, 4, 8]\ntime_from = \"took ([0-9.]+) (ms)\"\n";
    std::fs::write(dir.join("designs.toml"), suite).unwrap();
    // Run from elsewhere: the components file is the suite file's neighbour.
    let v: serde_json::Value = serde_json::from_str(&ok(
        &std::env::temp_dir(),
        &[
            "validate",
            "--suite",
            dir.join("designs.toml").to_str().unwrap(),
            "--cores",
            "2",
            "--json",
        ],
    ))
    .unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    for r in rows {
        assert_eq!(r["group"], "your program's designs");
        assert_eq!(r["verdict"], "within", "{r}");
        assert_eq!(r["rounds"], 6, "{r}");
    }
    // At each of the four sizes the pipeline is predicted and measured faster.
    let d = &v["summary"]["design_choices"];
    assert_eq!(
        (&d["decided_pairs"], &d["right"], &d["too_close"]),
        (&4.into(), &4.into(), &0.into()),
        "{d}"
    );
}

/// The distinct lines of `dir/file`, in the order they first appear.
fn distinct_lines(dir: &Path, file: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for l in std::fs::read_to_string(dir.join(file)).unwrap().lines() {
        if !seen.iter().any(|s| s == l) {
            seen.push(l.to_string());
        }
    }
    seen
}

#[test]
fn the_points_of_a_range_are_the_sizes_a_command_gets() {
    let dir = temp_dir("range");
    let measure = |at: &str, log: &str| {
        let cmd = format!("echo {{x}} >> {log}");
        ok(
            &dir,
            &[
                "measure",
                "--name",
                "a",
                "--at",
                at,
                "-o",
                "m.txt",
                "--reps",
                "1",
                "--max-reps",
                "1",
                "--warmup",
                "0",
                "--shell",
                "--",
                &cmd,
            ],
        )
    };
    measure("x=2^10..2^12:3", "args.log");
    assert_eq!(distinct_lines(&dir, "args.log"), ["1024", "2048", "4096"]);
    // Forty doublings: every power of two, exactly.
    measure("x=2^0..2^40:41", "long.log");
    let want: Vec<String> = (0..=40).map(|k| (1u64 << k).to_string()).collect();
    assert_eq!(distinct_lines(&dir, "long.log"), want);
    let exp = std::fs::read_to_string(dir.join("m.txt")).unwrap();
    assert!(exp.contains("POINTS ( 2048.0 )\n"), "{exp}");
    assert!(exp.contains("POINTS ( 4096.0 )\n"), "{exp}");

    // validate takes the range's sizes as they are, and rounds the others, saying so.
    measure_echo(&dir, "b", "x=1,2,4,8", "blocks.txt", &[]);
    std::fs::write(
        dir.join("blocks.toml"),
        "[components.b]\nmeasurements = \"blocks.txt\"\ncallpath = \"b\"\n",
    )
    .unwrap();
    let validate = |at: &str| {
        let out = run(
            &dir,
            &[
                "validate",
                "--components",
                "blocks.toml",
                "--term",
                "b",
                "--at",
                at,
                "--reps",
                "1",
                "--max-reps",
                "1",
                "--shell",
                "--time-from",
                r"took ([0-9.]+) (ms)",
                "--json",
                "--",
                "echo {x} >> validate.log; echo took {x} ms",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let err = validate("x=2^10..2^12:3");
    assert_eq!(err, "");
    assert_eq!(
        distinct_lines(&dir, "validate.log"),
        ["1024", "2048", "4096"]
    );
    std::fs::remove_file(dir.join("validate.log")).unwrap();
    let err = validate("x=1..3:5");
    assert_eq!(
        err,
        "note: --at x: rounded 3 values to whole sizes (1.31607401 to 1, 1.73205081 to 2, \
         2.27950706 to 2) and dropped 2 duplicates\n"
    );
    let mut sizes = distinct_lines(&dir, "validate.log");
    sizes.sort();
    assert_eq!(sizes, ["1", "2", "3"]);
}

/// Write the executable `sh` script `name` in `dir`. Written by a `sh` of its own: a
/// file this (multi-threaded) test process had open for writing could be inherited by a
/// process another test forks at that moment, and starting it would fail ("text file
/// busy").
fn script(dir: &Path, name: &str, body: &str) {
    let out = std::process::Command::new("sh")
        .current_dir(dir)
        .args([
            "-c",
            "printf '#!/bin/sh\\n%s\\n' \"$2\" > \"$1\" && chmod 755 \"$1\"",
            "sh",
            name,
            body,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The timing flags the fake programs below need: their printed times, two repetitions.
const PRINTED_MS: &[&str] = &[
    "--reps",
    "2",
    "--max-reps",
    "2",
    "--time-from",
    r"took (\d+) (ms)",
];

/// `perfcompose measure --name NAME --at ... -o FILE [PRINTED_MS] -- COMMAND...`.
fn measure_printed(dir: &Path, name: &str, at: &[&str], out: &str, command: &[&str]) -> String {
    let mut args = vec!["measure", "--name", name];
    for a in at {
        args.extend(["--at", a]);
    }
    args.extend(["-o", out]);
    args.extend_from_slice(PRINTED_MS);
    args.push("--");
    args.extend_from_slice(command);
    ok(dir, &args)
}

#[test]
fn blocks_over_different_parameters_share_a_file_that_fit_and_predict_read() {
    let dir = temp_dir("mixed");
    // The issue's two blocks: sort takes x ms, halo 2p ms whatever n.
    script(&dir, "mysort", "echo \"took $2 ms\"");
    script(&dir, "halo", "echo \"took $(($1 * 2)) ms\"");
    let sort_at: &[&str] = &["x=1000,2000,4000,8000"];
    let halo_at: &[&str] = &["p=2,4,8", "n=1024,4096"];
    measure_printed(
        &dir,
        "sort",
        sort_at,
        "blocks.txt",
        &["./mysort", "--n", "{x}"],
    );
    let alone = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    let out = measure_printed(
        &dir,
        "halo",
        halo_at,
        "blocks.txt",
        &["./halo", "{p}", "{n}"],
    );
    assert!(
        out.ends_with("6 points, 12 repetitions added to blocks.txt (Extra-P text)\n"),
        "{out}"
    );
    // The file starts with what it held, unchanged (what Extra-P reads), and goes on
    // with a section over p and n.
    let both = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    assert_eq!(
        both.strip_prefix(alone.as_str()),
        Some(
            "\nPARAMETER p\nPARAMETER n\nPOINTS ( 2.0 1024.0 )\nPOINTS ( 2.0 4096.0 )\n\
             POINTS ( 4.0 1024.0 )\nPOINTS ( 4.0 4096.0 )\nPOINTS ( 8.0 1024.0 )\n\
             POINTS ( 8.0 4096.0 )\n\nREGION halo\nMETRIC time\nDATA 4000000.0 4000000.0\n\
             DATA 4000000.0 4000000.0\nDATA 8000000.0 8000000.0\nDATA 8000000.0 8000000.0\n\
             DATA 16000000.0 16000000.0\nDATA 16000000.0 16000000.0\n"
        ),
        "{both}"
    );
    // fit: every series over its own parameters, and says which.
    let fit = ok(&dir, &["fit", "blocks.txt"]);
    let lines: Vec<&str> = fit.lines().collect();
    assert_eq!(lines.len(), 2, "{fit}");
    assert!(lines[0].starts_with("sort; time; 999999.99"), "{fit}");
    assert!(
        lines[0].ends_with(" * x^(1); SMAPE 0.000%; over (x)"),
        "{fit}"
    );
    assert!(lines[1].starts_with("halo; time; 20000"), "{fit}");
    assert!(
        lines[1].ends_with(" * p^(1); SMAPE 0.000%; over (p, n)"),
        "{fit}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&ok(&dir, &["fit", "--json", "blocks.txt"])).unwrap();
    assert_eq!(v["models"][0]["parameters"], serde_json::json!(["x"]));
    assert_eq!(v["models"][1]["parameters"], serde_json::json!(["p", "n"]));
    // A basis goes to the series over its parameters.
    let basis = ok(&dir, &["fit", "--basis", "1, x", "blocks.txt"]);
    assert_eq!(basis.lines().count(), 1, "{basis}");
    assert!(basis.starts_with("sort; time; "), "{basis}");
    let err = fails(&dir, &["fit", "--basis", "1, y", "blocks.txt"]);
    assert!(
        err.contains("--basis `1, y`: no series is over the parameters it uses"),
        "{err}"
    );
    // A components file picks each block out of the file, over its own parameters.
    let toml = "[components.sort]\nmeasurements = \"blocks.txt\"\ncallpath = \"sort\"\n\n\
                [components.halo]\nmeasurements = \"blocks.txt\"\ncallpath = \"halo\"\n";
    std::fs::write(dir.join("blocks.toml"), toml).unwrap();
    let p = ok(
        &dir,
        &[
            "predict",
            "--components",
            "blocks.toml",
            "seq(sort, halo)",
            "--at",
            "x=1000",
            "--at",
            "p=4",
        ],
    );
    assert!(
        p.contains("model:       2000000 * p + 1000000 * x\n"),
        "{p}"
    );
    assert!(p.contains("| 1000   4   1008000000   "), "{p}");
    // Another run adds repetitions to halo, in its place.
    measure_printed(
        &dir,
        "halo",
        &["p=8", "n=4096"],
        "blocks.txt",
        &["./halo", "{p}", "{n}"],
    );
    let again = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    assert!(again.starts_with(alone.as_str()), "{again}");
    assert!(
        again.ends_with("DATA 16000000.0 16000000.0 16000000.0 16000000.0\n"),
        "{again}"
    );
    // The same block over other parameters: refused at its place in the file, nothing run.
    let err = fails(
        &dir,
        &[
            "measure",
            "--name",
            "halo",
            "--at",
            "x=1",
            "-o",
            "blocks.txt",
            "--shell",
            "--",
            "touch ran",
        ],
    );
    assert!(
        err.contains("`halo / time` is in the file over (p, n), these measurements are over (x)"),
        "{err}"
    );
    assert!(err.contains("blocks.txt:25:1"), "{err}");
    assert!(!dir.join("ran").exists());
    // JSON Lines files hold blocks over different parameters the same way.
    measure_printed(
        &dir,
        "sort",
        sort_at,
        "blocks.jsonl",
        &["./mysort", "--n", "{x}"],
    );
    measure_printed(
        &dir,
        "halo",
        halo_at,
        "blocks.jsonl",
        &["./halo", "{p}", "{n}"],
    );
    assert_eq!(ok(&dir, &["fit", "blocks.jsonl"]), fit);
}

/// `perfcompose ARGS` in `dir`, started as a process group of its own (as a shell starts
/// a job) with SIGINT's default action whatever the test runner's; its stderr piped.
fn spawn_interruptible(dir: &Path, args: &[&str]) -> Child {
    use std::os::unix::process::CommandExt as _;
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut c = command_in(dir, &args);
    c.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: between fork and exec the child only calls signal(2), which is
    // async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    c.spawn().expect("start perfcompose")
}

/// Wait until the text of `path` satisfies `done` (a guard against hanging, not a
/// timing assertion: the deadline is far beyond any run).
fn wait_for(path: &Path, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !std::fs::read_to_string(path).is_ok_and(|t| done(&t)) {
        assert!(Instant::now() < deadline, "{} never came", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A block that waits at each point x until the file `go{x}` exists, then prints x ms.
const GATED: &[&str] = &[
    "--warmup",
    "0",
    "--reps",
    "1",
    "--max-reps",
    "1",
    "--shell",
    "--time-from",
    r"took (\d+) (ms)",
    "--",
    "while [ ! -e go{x} ]; do sleep 0.01; done; echo took {x} ms",
];

/// Interrupt `measure --name NAME --at x=1,2,3 -o FILE [GATED]` while it waits at x = 2,
/// after x = 1 is in `written`: with SIGINT to perfcompose alone, or to its process
/// group as Ctrl-C on a terminal does. It ends by the signal.
fn interrupt_at_the_second_point(dir: &Path, name: &str, file: &str, written: &str, group: bool) {
    std::fs::write(dir.join("go1"), "").unwrap();
    let mut args = vec!["measure", "--name", name, "--at", "x=1,2,3", "-o", file];
    args.extend_from_slice(GATED);
    let mut child = spawn_interruptible(dir, &args);
    let pid = child.id() as libc::pid_t;
    wait_for(&dir.join(written), |t| t.contains("DATA 1000000.0\n"));
    // SAFETY: kill(2) on the process (group) started above.
    let sent = unsafe { libc::kill(if group { -pid } else { pid }, libc::SIGINT) };
    assert_eq!(sent, 0);
    let status = child.wait().unwrap();
    // The shell left waiting (SIGINT to perfcompose alone) goes too.
    // SAFETY: as above.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read as _;
        let _ = e.read_to_string(&mut stderr);
    }
    use std::os::unix::process::ExitStatusExt as _;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}: {stderr}");
    std::fs::remove_file(dir.join("go1")).unwrap();
}

#[test]
fn an_interrupt_keeps_the_points_finished_before_it() {
    let dir = temp_dir("interrupt");
    let one_point = "PARAMETER x\nPOINTS ( 1.0 )\n\nREGION slow\nMETRIC time\nDATA 1000000.0\n";
    for group in [false, true] {
        let _ = std::fs::remove_file(dir.join("slow.txt"));
        interrupt_at_the_second_point(&dir, "slow", "slow.txt", "slow.txt", group);
        // The file holds the finished point, complete, and nothing else.
        assert_eq!(
            std::fs::read_to_string(dir.join("slow.txt")).unwrap(),
            one_point
        );
        assert!(!dir.join(".slow.txt.perfcompose-tmp").exists());
        let fit = ok(&dir, &["fit", "slow.txt"]);
        assert!(fit.starts_with("slow; time; 1000000"), "{fit}");
    }

    // A block that shares a file with others, over its own parameters and others':
    // interrupted, its finished points wait beside the file, which is left as it was;
    // the next run measures the rest and merges them.
    script(&dir, "halo", "echo \"took $(($1 * 2)) ms\"");
    measure_printed(
        &dir,
        "sort",
        &["x=1,2,3"],
        "blocks.txt",
        &["echo", "took", "{x}", "ms"],
    );
    measure_printed(
        &dir,
        "halo",
        &["p=2,4", "n=8"],
        "blocks.txt",
        &["./halo", "{p}", "{n}"],
    );
    let before = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    let partial = ".blocks.txt.sum.partial";
    interrupt_at_the_second_point(&dir, "sum", "blocks.txt", partial, true);
    assert_eq!(
        std::fs::read_to_string(dir.join("blocks.txt")).unwrap(),
        before
    );
    let fit = ok(&dir, &["fit", partial]);
    assert!(fit.starts_with("sum; time; 1000000"), "{fit}");
    for x in [2, 3] {
        std::fs::write(dir.join(format!("go{x}")), "").unwrap();
    }
    let mut args = vec![
        "measure",
        "--name",
        "sum",
        "--at",
        "x=2,3",
        "-o",
        "blocks.txt",
    ];
    args.extend_from_slice(GATED);
    ok(&dir, &args);
    assert!(!dir.join(partial).exists());
    let both = perfcompose_core::measure::read_experiments(dir.join("blocks.txt")).unwrap();
    assert_eq!(both.len(), 2);
    let sum = &both[0].series[&perfcompose_core::measure::SeriesKey::new("sum", "time")];
    let got: Vec<(f64, Vec<f64>)> = sum
        .iter()
        .map(|p| (p.coordinate[0], p.values.clone()))
        .collect();
    assert_eq!(got, [(1.0, vec![1e6]), (2.0, vec![2e6]), (3.0, vec![3e6])]);
}

/// The C example, built with gcc into `dir`.
fn build_c_example(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c-pipeline");
    for (exe, main) in [("block", "block.c"), ("app", "app.c")] {
        let out = std::process::Command::new("gcc")
            .args(["-O2", "-Wall", "-Wextra", "-pthread", "-o"])
            .arg(dir.join(exe))
            .arg(src.join(main))
            .arg(src.join("blocks.c"))
            .output()
            .expect("gcc is needed to build examples/c-pipeline");
        assert!(out.status.success(), "gcc {main}: {}", text(&out.stderr));
    }
}

#[test]
fn the_c_example_goes_through_the_whole_loop() {
    let dir = temp_dir("c-example");
    build_c_example(&dir);
    let xs = "x=200,400,800";
    let time_from = r"([0-9.]+) (ns) per item";
    for (name, block, how) in [
        ("gen", "gen", "alone"),
        ("sort", "sort", "remote"),
        ("checksum", "checksum", "alone"),
        ("gen_loaded", "gen", "loaded"),
        ("sort_loaded", "sort", "loaded"),
        ("checksum_loaded", "checksum", "loaded"),
    ] {
        ok(
            &dir,
            &[
                "measure",
                "--name",
                name,
                "--at",
                xs,
                "-o",
                "blocks.txt",
                "--reps",
                "2",
                "--max-reps",
                "2",
                "--time-from",
                time_from,
                "--",
                "./block",
                block,
                "{x}",
                how,
                "8",
            ],
        );
    }
    let fit = ok(&dir, &["fit", "blocks.txt"]);
    assert_eq!(fit.lines().count(), 6, "{fit}");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c-pipeline/blocks.toml"),
        dir.join("blocks.toml"),
    )
    .unwrap();
    let pipe = "pipe(gen, seq(sort, checksum))";
    let pool = "tpool(2, seq(gen_loaded, sort_loaded, checksum_loaded))";
    let p = ok(
        &dir,
        &[
            "predict",
            "--components",
            "blocks.toml",
            pipe,
            "--at",
            "x=400,1600",
        ],
    );
    assert!(p.contains("dominant:"), "{p}");
    ok(&dir, &["check", "--components", "blocks.toml", pipe, pool]);
    for (term, design) in [(pipe, "pipe"), (pool, "pool")] {
        let out = ok(
            &dir,
            &[
                "validate",
                "--components",
                "blocks.toml",
                "--term",
                term,
                "--at",
                xs,
                "--reps",
                "2",
                "--max-reps",
                "2",
                "--time-from",
                time_from,
                "--json",
                "--",
                "./app",
                design,
                "{x}",
                "8",
            ],
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["rows"][0]["configuration"], term);
        assert!(
            v["rows"][0]["time_error"].as_f64().unwrap().is_finite(),
            "{out}"
        );
    }
    // The blocks and the program refuse bad arguments with status 2, and measure says so.
    let err = fails(
        &dir,
        &[
            "measure", "--name", "x", "--at", "x=0", "-o", "bad.txt", "--", "./block", "sort",
            "{x}",
        ],
    );
    assert!(
        err.contains("`./block sort 0` failed at x=0 (exit status: 2)"),
        "{err}"
    );
    assert!(
        err.contains("| X: `0` is not a positive whole number"),
        "{err}"
    );
    // No progress bar without a terminal: nothing on stderr.
    let args: Vec<String> = [
        "measure",
        "--name",
        "g",
        "--at",
        "x=100",
        "-o",
        "g.txt",
        "--reps",
        "1",
        "--max-reps",
        "1",
        "--",
        "./block",
        "gen",
        "{x}",
        "alone",
        "4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = command_in(&dir, &args).output().unwrap();
    assert!(out.status.success());
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
}
