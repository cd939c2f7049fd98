//! `perfcompose bench` and `perfcompose validate` end to end: outputs parse, saved runs
//! read back, bad input exits with status 2 and a clear message, nothing hangs. Every
//! assertion is about structure, never about how fast something ran.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn perfcompose(args: &[&str]) -> Output {
    // Keep any stored calibration of the machine out of the tests.
    perfcompose_configured(args, &scratch("config"))
}

/// `perfcompose` with `config` as its configuration directory (`XDG_CONFIG_HOME`).
fn perfcompose_configured(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
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
fn overhead_calibration_prints_the_documented_schema_and_stores_it() {
    let dir = scratch("overhead");
    let file = dir.join("cal.json");
    let o = perfcompose(&[
        "calibrate",
        "overhead",
        "--json",
        "--elements",
        "300",
        "--reps",
        "2",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let patterns = v["patterns"].as_array().unwrap();
    let terms: Vec<&str> = patterns
        .iter()
        .map(|p| p["term"].as_str().unwrap())
        .collect();
    for t in ["nop", "seq(nop, nop)", "pipe(nop, nop)", "tpool(2, nop)"] {
        assert!(terms.contains(&t), "{terms:?}");
    }
    for p in patterns {
        // The documented keys, plus the stream driver's pair and its fastest repetition
        // (what composition adds, with the median or the minimum).
        for key in [
            "ns_per_element",
            "baseline_ns_per_element",
            "stream_ns_per_element",
            "stream_baseline_ns_per_element",
            "stream_min_ns_per_element",
        ] {
            assert!(p[key].as_f64().unwrap() > 0.0, "{key} in {p}");
        }
        assert!(
            p["stream_min_ns_per_element"].as_f64() <= p["stream_ns_per_element"].as_f64(),
            "{p}"
        );
        assert_eq!(p.as_object().unwrap().len(), 6, "{p}");
    }
    assert!(file.exists());
    // Stored where -o said, not in this machine's configuration directory.
    assert!(!scratch("config").join("perfcompose").exists());
    // The stored busy MapReduce jobs: both styles for one thread and up to the cores,
    // every point at least its ideal time (no worker can map more than its share
    // faster than the spin lasts).
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let busy = stored["mapreduce_busy"].as_array().unwrap();
    for style in ["pairwise", "per_key"] {
        assert!(
            busy.iter()
                .any(|b| b["reduce"] == style && b["threads"] == 1),
            "{busy:?}"
        );
    }
    for b in busy {
        assert!(b["threads"].as_u64().unwrap() <= stored["cores"].as_u64().unwrap());
        let points = b["points"].as_array().unwrap();
        assert_eq!(points.len(), 4, "{b}");
        for p in points {
            let ideal = p["ideal_ns"].as_f64().unwrap();
            let spin = p["spin_ns"].as_f64().unwrap();
            let n = b["threads"].as_f64().unwrap();
            assert!((ideal - 8.0 * spin / n).abs() < 1e-6, "{p}");
            assert!(p["job_ns"].as_f64().unwrap() >= ideal, "{p}");
        }
    }
    // validate picks the given calibration up, and checks the host around each design.
    let suite = dir.join("checked.toml");
    std::fs::write(
        &suite,
        "[budget]\nrounds = 6\nseconds = 1\n[sampling]\nwarmup = 0\nmin_reps = 3\nmax_reps = 3\n\
         [[case]]\nterm = \"seq(inc, nop)\"\nsizes = [1024, 2048, 4096]\n\
         [[case]]\nterm = \"tpool(2, inc)\"\nsizes = [1024, 2048, 4096]\n",
    )
    .unwrap();
    let suite = suite.to_str().unwrap();
    let o = ok(&[
        "validate",
        "--suite",
        suite,
        "--calibration",
        file.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("included (calibrated)"), "{out}");
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // With two cores, the host check runs around each design and the report gives the
    // first and the last check of a design of two threads, and the cores' speed states.
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    let host_check = "host check, a busy core next to the one timing a block";
    if two_cores {
        let line = out
            .lines()
            .find(|l| l.contains(host_check))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(line.matches("`inc` x=65536 (x100)").count(), 2, "{line}");
        assert_eq!(line.matches("`qsort` x=65536 (x4)").count(), 2, "{line}");
        assert!(
            out.contains("cores' speed states (`inc` x=4096 on every core at once"),
            "{out}"
        );
    }
    // The calibration says the workers were pinned (the default); a run that does not
    // pin them is told that the calibration does not match it.
    let tiny = testdata("suites/tiny.toml");
    let o = ok(&[
        "validate",
        "--suite",
        &tiny,
        "--no-pin",
        "--calibration",
        file.to_str().unwrap(),
    ]);
    assert!(
        stderr(&o).contains("measured with the workers pinned, this run has them not pinned")
            && stderr(&o).contains("calibrate overhead --no-pin"),
        "{}",
        stderr(&o)
    );

    // predict adds the calibrated overhead of the design when asked (and says which).
    let cal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let nop = cal["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["term"] == "nop")
        .map(|p| p["stream_min_ns_per_element"].as_f64().unwrap())
        .unwrap();
    // The stored calibration has its version, the pipeline wake-up points and fit and the
    // MapReduce job costs, and says that the workers were pinned.
    assert_eq!(
        cal["version"].as_u64(),
        Some(perfcompose_runtime::overhead::CALIBRATION_VERSION.into()),
        "{cal}"
    );
    assert_eq!(cal["pinned"], serde_json::Value::Bool(true), "{cal}");
    assert!(cal["pipe_wake"]["knots"].is_array(), "{cal}");
    assert_eq!(cal["pipe_wake"]["points"].as_array().unwrap().len(), 9);
    // The busy hand-off: the calibrated slacks and the `nop` neighbour, each with the
    // median and the fastest repetition of the pipeline and of its slower stage alone.
    let handoff = cal["pipe_handoff"]["points"].as_array().unwrap();
    let slacks: Vec<f64> = handoff
        .iter()
        .map(|p| p["slack_ns"].as_f64().unwrap())
        .collect();
    assert_eq!(
        slacks,
        [0.0, 0.0, 0.0, 250.0, 500.0, 1000.0, 2000.0],
        "{cal}"
    );
    for p in handoff {
        for (median, min) in [("stage_ns", "stage_min_ns"), ("pipe_ns", "pipe_min_ns")] {
            let (median, min) = (p[median].as_f64().unwrap(), p[min].as_f64().unwrap());
            assert!(min > 0.0 && min <= median, "{p}");
        }
        // A stage busy for T (±15% per call) takes at least 0.85 T per element.
        let t = p["spin_ns"].as_f64().unwrap();
        assert!(p["stage_min_ns"].as_f64().unwrap() >= 0.85 * t, "{p}");
    }
    assert!(!cal["mapreduce"].as_array().unwrap().is_empty(), "{cal}");
    // The block call: the `nop` unit test at x = 1,024, median and fastest repetition.
    let call = &cal["block_call"];
    assert_eq!(call["x"].as_u64(), Some(1024), "{cal}");
    let (call_ns, call_min) = (
        call["ns"].as_f64().unwrap(),
        call["min_ns"].as_f64().unwrap(),
    );
    assert!(call_min > 0.0 && call_min <= call_ns, "{cal}");
    let blocks = dir.join("blocks.toml");
    std::fs::write(
        &blocks,
        "[components.qsort]\nmodel = \"1034.17 * x * log2(x)\"\n",
    )
    .unwrap();
    let blocks = blocks.to_str().unwrap();
    let predict_in = |config: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["predict", "qsort", "--components", blocks, "--at", "x=1024"];
        args.extend_from_slice(extra);
        let o = perfcompose_configured(&args, config);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let json = |text: String| serde_json::from_str::<serde_json::Value>(&text).unwrap();
    let none = scratch("config");
    let with = json(predict_in(
        &none,
        &["--json", "--calibration", file.to_str().unwrap()],
    ));
    let without = json(predict_in(&none, &["--json"]));
    let (a, b) = (
        with["values"][0]["value"].as_f64().unwrap(),
        without["values"][0]["value"].as_f64().unwrap(),
    );
    // A single block through the runtime costs one stage's hand-off (the `nop` program)
    // less the call its unit test counted too (`predict` composes with the default
    // statistic, the minimum: their fastest repetitions).
    let expected = (nop - call_min).max(0.0);
    assert!(
        (a - b - expected).abs() <= 1e-9 * a,
        "{a} - {b} != {nop} - {call_min}"
    );
    assert!(with["notes"].to_string().contains("runtime's own cost"));
    // The JSON carries the file it added, and nothing without one.
    assert_eq!(with["calibration"].as_str(), file.to_str(), "{with}");
    assert!(without.get("calibration").is_none(), "{without}");
    // A calibration stored for this machine changes nothing unless asked for.
    let config = scratch("stored-calibration");
    let stored = perfcompose_runtime::overhead::Calibration::path_in(&config);
    std::fs::create_dir_all(stored.parent().unwrap()).unwrap();
    std::fs::copy(&file, &stored).unwrap();
    let plain = predict_in(&config, &[]);
    assert_eq!(plain, predict_in(&none, &[]));
    assert!(
        !plain.contains("overhead:") && !plain.contains("runtime's own cost"),
        "{plain}"
    );
    assert_eq!(json(predict_in(&config, &["--json"])), without);
    // --overhead adds it and says which file: a line of the text, the JSON's path.
    let text = predict_in(&config, &["--overhead"]);
    let line = format!(
        "overhead:    added from {} (calibrated on ",
        stored.display()
    );
    assert!(text.contains(&line), "{text}");
    let added = json(predict_in(&config, &["--overhead", "--json"]));
    assert_eq!(added["calibration"].as_str(), stored.to_str(), "{added}");
    assert_eq!(added["values"][0]["value"].as_f64().unwrap(), a);
    // Asked for, an overhead that cannot be added is an error (status 2): none stored,
    // a named file that does not exist, the built-in components (the paper's machine), a
    // block that is not one of the runtime's kernels.
    let bad = |args: &[&str], config: &std::path::Path, needle: &str| {
        let o = perfcompose_configured(args, config);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    };
    let predict_qsort = ["predict", "qsort", "--components", blocks];
    bad(
        &[&predict_qsort[..], &["--overhead"]].concat(),
        &none,
        "calibrate overhead",
    );
    bad(
        &[
            &predict_qsort[..],
            &["--calibration", "/nonexistent/cal.json"],
        ]
        .concat(),
        &config,
        "no overhead calibration at /nonexistent/cal.json",
    );
    bad(
        &["predict", "qsort", "--overhead"],
        &config,
        "built-in components",
    );
    std::fs::write(
        dir.join("mine.toml"),
        "[components.mine]\nmodel = \"3 * x\"\n",
    )
    .unwrap();
    let mine = dir.join("mine.toml");
    bad(
        &[
            "predict",
            "mine",
            "--components",
            mine.to_str().unwrap(),
            "--overhead",
        ],
        &config,
        "`mine` is not one of the runtime's kernels",
    );
}

#[test]
fn validating_a_saved_run_whose_calibration_has_no_version_asks_to_recalibrate() {
    // The saved run's calibration as builds before versioned calibrations wrote it: an
    // error naming the file, before anything is analysed.
    let saved = testdata("validate/intel-seq-inc-nop");
    let copy = scratch("unversioned");
    for f in ["blocks.txt", "programs.txt", "run.json"] {
        std::fs::copy(format!("{saved}/{f}"), copy.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(format!("{saved}/overhead-calibration.json")).unwrap();
    let mut cal: serde_json::Value = serde_json::from_str(&text).unwrap();
    cal.as_object_mut().unwrap().remove("version");
    std::fs::write(copy.join("overhead-calibration.json"), cal.to_string()).unwrap();
    let args = ["validate", "--from", copy.to_str().unwrap()];
    assert_user_error(
        &args,
        "overhead-calibration.json: an overhead calibration without a version",
    );
    assert_user_error(&args, "recalibrate with `perfcompose calibrate overhead`");
    // Told to leave the overhead out, it runs.
    ok(&[
        "validate",
        "--from",
        copy.to_str().unwrap(),
        "--no-overhead",
    ]);
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
            "rounds",
            "coverage",
        ] {
            assert!(r.get(field).is_some(), "{field} in {r}");
        }
        assert!(r["repeat_error"].as_f64().is_some(), "{r}");
        let verdict = r["verdict"].as_str().unwrap();
        assert!(
            ["within", "miss", "undecided", "reported_only"].contains(&verdict),
            "{verdict}"
        );
        // Six rounds (the suite's budget), each size's error with its 95% interval.
        assert_eq!(r["rounds"], 6, "{r}");
        let e = &r["error_interval"];
        assert!(
            e["low"].as_f64().unwrap() <= e["median"].as_f64().unwrap()
                && e["median"].as_f64().unwrap() <= e["high"].as_f64().unwrap(),
            "{e}"
        );
        assert!(r["coverage"]["runs"].as_u64().unwrap() > 0, "{r}");
        for p in r["points"].as_array().unwrap() {
            let i = &p["interval"];
            assert_eq!(i["level"], 0.95, "{p}");
            assert!(
                i["low"].as_f64().unwrap() <= i["high"].as_f64().unwrap(),
                "{p}"
            );
        }
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
    assert_eq!(s["budget"]["rounds"], 6, "{s}");
    assert!(s["coverage"]["runs"].as_u64().unwrap() > 0, "{s}");
    for f in ["decided_pairs", "right", "too_close"] {
        assert!(s["design_choices"][f].is_u64(), "{s}");
    }
    assert_eq!(s["rule"]["misses"], 0.1, "{s}");
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
        programs.contains("REGION seq(inc, nop) [before blocks]")
            && programs.contains("REGION seq(inc, nop) [round 6]"),
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
        assert_eq!(a["verdict"], b["verdict"]);
        assert_eq!(a["error_interval"], b["error_interval"]);
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
    assert!(text.contains("judged:"), "{text}");
    assert!(
        text.contains("rounds: at most 6 rounds or 1 s per configuration"),
        "{text}"
    );
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
        "--max-rounds",
        "6",
        "--max-seconds",
        "1",
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
    assert_user_error(&["calibrate", "overhead", "--elements", "0"], "at least 1");
    assert_user_error(&["calibrate", "overhead", "--reps", "0"], "at least 1");
    assert_user_error(
        &["calibrate", "overhead", "--no-save", "-o", "cal.json"],
        "cannot be used with",
    );
    assert_user_error(&["validate", "--term", "tpool(2, qsrot)"], "unknown kernel");
    assert_user_error(&["validate", "--cores", "0"], "1..=65536");
    assert_user_error(
        &["validate", "--max-rounds", "5"],
        "--max-rounds must be at least 6",
    );
    assert_user_error(&["validate", "--level", "1.5"], "--level 1.5");
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
