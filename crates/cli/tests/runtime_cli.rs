//! `perfcompose bench` and `perfcompose validate` end to end: outputs parse, bad input
//! exits with status 2 and a clear message, nothing hangs. No timing assertions.

use std::path::PathBuf;
use std::process::{Command, Output};

fn perfcompose(args: &[&str]) -> Output {
    // Keep any stored calibration of the machine out of the tests.
    perfcompose_configured(args, &scratch("config"))
}

/// `perfcompose` with `config` as its configuration directory (`XDG_CONFIG_HOME`).
fn perfcompose_configured(args: &[&str], config: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .env("PERFCOMPOSE_TEST_KERNELS", "1")
        .env("XDG_CONFIG_HOME", config)
        .output()
        .expect("run perfcompose")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfcompose-rt-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

/// `args` then `extra`, with `--measure minimum` unless `extra` names a statistic: the
/// default, `auto`, chooses from the cores' speed states as the test finds them, and the
/// tests of other things check what the minimum gives (the choice itself:
/// `validate_measure_auto_chooses_the_statistic_from_the_cores_speed_states`).
fn with_statistic<'a>(args: &mut Vec<&'a str>, extra: &[&'a str]) {
    if !extra.contains(&"--measure") {
        args.extend_from_slice(&["--measure", "minimum"]);
    }
    args.extend_from_slice(extra);
}

/// `validate --suite tiny --no-overhead --protocol PROTOCOL --save DIR EXTRA...`
/// ([`with_statistic`]), which must succeed.
fn tiny_saved(dir: &std::path::Path, protocol: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "validate",
        "--suite",
        "tiny",
        "--no-overhead",
        "--protocol",
        protocol,
        "--save",
        dir.to_str().unwrap(),
    ];
    with_statistic(&mut args, extra);
    let o = perfcompose(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

/// `perfcompose validate --suite tiny --no-overhead --from DIR EXTRA...`
/// ([`with_statistic`]), which must succeed (validating saved measurements again runs
/// nothing).
fn tiny_again(dir: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = Vec::new();
    with_statistic(&mut args, extra);
    tiny_again_by_default(dir, &args)
}

/// [`tiny_again`] with the statistic left to the default (`auto`) unless `extra` names one.
fn tiny_again_by_default(dir: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "validate",
        "--suite",
        "tiny",
        "--no-overhead",
        "--from",
        dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = perfcompose(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

#[test]
fn bench_lists_kernels() {
    let o = perfcompose(&["bench", "--list"]);
    assert!(o.status.success());
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
}

#[test]
fn bench_writes_extrap_text_that_reads_back() {
    let dir = scratch("bench");
    let file = dir.join("blocks.txt");
    let o = perfcompose(&[
        "bench",
        "inc",
        "qsort",
        "--sizes",
        "256,512,1024",
        "--reps",
        "3",
        "--fixed",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    let exp = perfcompose_core::measure::text::read_str("blocks.txt", &text, &Default::default())
        .unwrap_or_else(|d| panic!("{}\n{text}", d.render()));
    assert_eq!(exp.parameters, vec!["x".to_string()]);
    assert_eq!(exp.series.len(), 2);
    for points in exp.series.values() {
        assert_eq!(points.len(), 3);
        assert!(points
            .iter()
            .all(|p| p.values.len() == 3 && p.values.iter().all(|v| *v > 0.0)));
    }
}

/// `perfcompose bench ARGS --sizes SIZES` with three fixed repetitions and `--json`: it
/// must succeed; its JSON.
fn quick_bench(args: &[&str], sizes: &str) -> serde_json::Value {
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--sizes", sizes, "--reps", "3", "--fixed", "--json"]);
    let o = perfcompose(&all);
    assert!(o.status.success(), "{all:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn bench_json_and_whole_program() {
    let v = quick_bench(&["--term", "pipe(tpool(2, qsort), inc)"], "512,1024");
    let s = &v[0];
    assert_eq!(s["name"], "pipe(tpool(2, qsort), inc)");
    assert_eq!(s["kind"], "program");
    assert_eq!(s["points"].as_array().unwrap().len(), 2);
    assert!(s["points"][0]["median"].as_f64().unwrap() > 0.0);

    // A kernel timed with its input handed over by another thread (a pipe's next stage).
    let v = quick_bench(&["inc", "--remote"], "512");
    assert_eq!(v[0]["name"], "inc");
    assert!(v[0]["points"][0]["median"].as_f64().unwrap() > 0.0);
    let o = perfcompose(&["bench", "inc", "--remote", "--warm"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // A kernel timed while another thread runs it too (a worker of a task pool).
    let v = quick_bench(&["inc", "--warm", "--siblings", "1"], "512");
    assert!(v[0]["points"][0]["median"].as_f64().unwrap() > 0.0);
    let o = perfcompose(&["bench", "inc", "--siblings", "-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn bench_batch_fixes_the_calls_per_repetition() {
    // Without it the batch is sized from a probe: warm `inc` at x = 64 takes far less
    // than a 200 µs sample, so many calls; cold, a program's repetition.
    let sized = quick_bench(&["inc", "--warm"], "64");
    assert!(
        sized[0]["points"][0]["batch"].as_u64().unwrap() > 5,
        "{sized}"
    );
    for state in [&["--warm"][..], &[][..], &["--remote"][..]] {
        let mut args = vec!["inc", "--batch", "5"];
        args.extend_from_slice(state);
        let v = quick_bench(&args, "64,128");
        for p in v[0]["points"].as_array().unwrap() {
            assert_eq!(p["batch"], 5, "{state:?}: {v}");
            assert!(p["median"].as_f64().unwrap() > 0.0, "{v}");
        }
    }
    // A per-key reduction, warm: the keys it gathers and reduces per repetition.
    let v = quick_bench(
        &[
            "reduce_per_key",
            "--warm",
            "--siblings",
            "1",
            "--batch",
            "3",
        ],
        "4",
    );
    assert_eq!(v[0]["points"][0]["batch"], 3, "{v}");
    // Within the memory the inputs may take: 1 MiB holds 16 inputs of 64 KiB.
    let v = quick_bench(&["inc", "--batch", "1000", "--memory-limit", "1"], "16384");
    assert_eq!(v[0]["points"][0]["batch"], 16, "{v}");
    for bad in [
        vec!["bench", "inc", "--batch", "0"],
        vec!["bench", "inc", "--batch", "many"],
        vec!["bench", "--term", "pipe(inc, inc)", "--batch", "4"],
    ] {
        let o = perfcompose(&bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("batch"), "{bad:?}: {}", stderr(&o));
    }
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
    // validate picks the stored calibration up.
    let o = perfcompose(&[
        "validate",
        "--suite",
        "tiny",
        "--calibration",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("included (calibrated)"));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // The tiny suite has designs of two threads: with two cores, the host check runs
    // around each and the report gives the first and the last.
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    let host_check = "host check, a busy core next to the one timing a block";
    if two_cores {
        assert!(out.contains(host_check), "{out}");
        let line = out.lines().find(|l| l.contains(host_check)).unwrap();
        assert_eq!(line.matches("`inc` x=65536 (x100)").count(), 2, "{line}");
        assert_eq!(line.matches("`qsort` x=65536 (x4)").count(), 2, "{line}");
        // And the cores' speed states sampled around each design of the suite.
        let states = "cores' speed states, `inc` x=4096 on every core at once for 1 s at each end of the designs within the cores: every core in its fast state at once in ";
        assert!(out.contains(states), "{out}");
    }
    // The calibration says the workers were pinned (the default); a run that does not
    // pin them is told that the calibration does not match it. (No host check there.)
    let o = perfcompose(&[
        "validate",
        "--suite",
        "tiny",
        "--no-pin",
        "--no-host-check",
        "--calibration",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains(host_check),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        stderr(&o).contains("measured with the workers pinned, this run has them not pinned")
            && stderr(&o).contains("calibrate overhead --no-pin"),
        "{}",
        stderr(&o)
    );
    let o = perfcompose(&["validate", "--suite", "tiny", "--pin", "--no-pin"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // predict adds the calibrated overhead of the design when asked (and says which).
    let cal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let nop = cal["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["term"] == "nop")
        .map(|p| p["stream_ns_per_element"].as_f64().unwrap())
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
    // less the call its unit test counted too (`predict` composes with medians).
    let expected = (nop - call_ns).max(0.0);
    assert!(
        (a - b - expected).abs() <= 1e-9 * a,
        "{a} - {b} != {nop} - {call_ns}"
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
fn validate_tiny_suite_json_schema() {
    let o = perfcompose(&[
        "validate",
        "--suite",
        "tiny",
        "--json",
        "--no-overhead",
        "--cores",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cores"], 1);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    // The stable keys, and the documented added field of the host check (a row within
    // the cores, on a machine of two cores or more).
    let mut keys: Vec<&String> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "host_check")
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "coefficient_error",
            "configuration",
            "modular",
            "monolithic",
            "threads",
            "time_error",
            "within_cores"
        ]
    );
    // tpool(2, inc) on one core: run anyway, flagged, predicted with the cap.
    let tp = rows
        .iter()
        .find(|r| r["configuration"] == "tpool(2, inc)")
        .unwrap();
    assert_eq!(tp["threads"], 2);
    assert_eq!(tp["within_cores"], false);
    assert!(tp.get("host_check").is_none(), "{tp}");
    // The rows of one thread: the host's speed around each (no neighbour on one core).
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    for r in rows.iter().filter(|r| r["threads"] == 1) {
        if two_cores {
            assert_eq!(r["host_check"]["before"].as_f64(), Some(1.0), "{r}");
            assert!(r["host_check"]["speed_change"].as_f64().is_some(), "{r}");
            // The cores' speed states at both ends, one share per core, judged against
            // each core's fastest window in the run.
            let states = &r["host_check"]["core_states"];
            let cores = states["fastest_ns"].as_array().unwrap();
            assert!(cores.len() >= 2, "{r}");
            assert!(cores.iter().all(|t| t.as_f64().unwrap() > 0.0), "{r}");
            for end in ["before", "after"] {
                assert_eq!(
                    states[end]["each"].as_array().unwrap().len(),
                    cores.len(),
                    "{r}"
                );
                assert_eq!(
                    states[end]["median_ns"].as_array().unwrap().len(),
                    cores.len(),
                    "{r}"
                );
                let every = states[end]["every"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&every), "{r}");
            }
        }
    }
    for r in rows {
        assert!(r["time_error"].as_f64().unwrap() >= 0.0);
        perfcompose_core::model::parse_model(r["modular"].as_str().unwrap()).unwrap();
        perfcompose_core::model::parse_model(r["monolithic"].as_str().unwrap()).unwrap();
    }
}

#[test]
fn validate_unloaded_times_every_block_alone() {
    let dir = scratch("unloaded");
    tiny_saved(&dir, "interleaved", &["--unloaded"]);
    let text = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    for block in [
        "tpool(2, inc)->inc",
        "pipe(inc, nop)->inc",
        "pipe(inc, nop)->nop_remote",
    ] {
        assert!(
            text.contains(&format!("REGION {block}\n")),
            "{block}: {text}"
        );
    }
    assert!(!text.contains("_par") && !text.contains("_stage"), "{text}");
}

/// The notes of every row a `--save DIR` run wrote to `DIR/rows.jsonl`.
fn saved_notes(dir: &std::path::Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(dir.join("rows.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).unwrap();
            row["notes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn disturbed_points_are_measured_again_unless_told_not_to() {
    // Without revisits no row says it measured a point again.
    let dir = scratch("no-revisit");
    tiny_saved(&dir, "interleaved", &["--no-revisit"]);
    let rows = saved_notes(&dir);
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter().flatten().all(|n| !n.starts_with("measured ")),
        "{rows:?}"
    );
    // With them (the default), whatever this machine disturbed: each revisit names a
    // size of the sweep, both visits and which was kept (the faster, under the default
    // statistic, the minimum), at most two of four; a size measured a third time (still
    // off its neighbours after its second visit) says so, after its second visit; and
    // the saved program keeps one point per size.
    let dir = scratch("revisit");
    tiny_saved(&dir, "interleaved", &[]);
    for notes in saved_notes(&dir) {
        let mut seconds: Vec<&str> = Vec::new();
        let mut thirds: Vec<&str> = Vec::new();
        for rest in notes.iter().filter_map(|n| n.strip_prefix("measured x=")) {
            let x = rest.split(' ').next().unwrap();
            if rest.contains(" again, blocks and program: the program still took ") {
                assert!(
                    rest.contains("(the visit kept of the first two)")
                        && (rest.ends_with("the third time; kept the earlier visit, the faster")
                            || rest.ends_with("the third time; kept the third visit, the faster")),
                    "{rest}"
                );
                assert!(
                    seconds.contains(&x),
                    "a third visit after a second: {notes:?}"
                );
                thirds.push(x);
            } else {
                assert!(
                    rest.contains(" again, blocks and program: the program took ")
                        && (rest.ends_with("kept the first visit, the faster")
                            || rest.ends_with("kept the second visit, the faster")),
                    "{rest}"
                );
                seconds.push(x);
            }
        }
        assert!(seconds.len() + thirds.len() <= 2, "{notes:?}");
        let xs = seconds;
        // Block points measured again with their program (the default `--block-revisit
        // visit`): a block of the row, a size, both values of the block, which was kept,
        // then the program's two visits and which of them was kept.
        for rest in notes
            .iter()
            .filter_map(|n| n.strip_prefix("measured block `"))
        {
            let (block, rest) = rest
                .split_once("` at x=")
                .expect("names the block and size");
            assert!(!block.is_empty(), "{rest}");
            let (block_part, program_part) = rest
                .split_once("; the program took ")
                .unwrap_or_else(|| panic!("names the program's visits: {rest}"));
            let kept = ["first", "second", "earlier", "third"];
            assert!(
                (block_part.contains(" again with its program: it took ")
                    || block_part.contains(" again with its program: it still took "))
                    && kept
                        .iter()
                        .any(|k| block_part.ends_with(&format!("kept the {k} visit, the faster"))),
                "{rest}"
            );
            assert!(
                program_part.contains(" per element, then ")
                    && kept
                        .iter()
                        .any(|k| program_part.ends_with(&format!("kept the {k} visit"))),
                "{rest}"
            );
        }
        let mut unique = xs.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), xs.len(), "{notes:?}");
        for x in xs {
            assert!(
                ["1024", "2048", "4096", "8192", "2", "4", "6", "8"].contains(&x),
                "{x}"
            );
        }
    }
    let text = std::fs::read_to_string(dir.join("programs.txt")).unwrap();
    let exp = perfcompose_core::measure::text::read_str("programs.txt", &text, &Default::default())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    for s in perfcompose_runtime::validate::series_from_experiment(&exp) {
        assert_eq!(s.points.len(), 4, "{}", s.name);
    }
}

#[test]
fn validate_saves_measurements() {
    let dir = scratch("save");
    // Under the minimum, as `tiny_again` validates it again ([`with_statistic`]).
    let o = perfcompose(&[
        "validate",
        "--suite",
        "tiny",
        "--no-overhead",
        "--measure",
        "minimum",
        "--save",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("seq(inc, nop)") && out.contains("not included"),
        "{out}"
    );
    for f in ["blocks.txt", "programs.txt", "report.json", "points.json"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    let text = std::fs::read_to_string(dir.join("programs.txt")).unwrap();
    perfcompose_core::measure::text::read_str("programs.txt", &text, &Default::default())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    // Interleaved (the default): each configuration's own block measurements, saved
    // under `configuration->block`, and the models each row was composed from.
    let text = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    perfcompose_core::measure::text::read_str("blocks.txt", &text, &Default::default())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(text.contains("REGION seq(inc, nop)->inc\n"), "{text}");
    // With two cores or more, the pool's block is timed next to a sibling (`_par2`).
    assert!(
        text.contains("REGION tpool(2, inc)->inc\n")
            || text.contains("REGION tpool(2, inc)->inc_par2\n"),
        "{text}"
    );
    // ... and a pipeline's stages as stages, the other one running next to it.
    assert!(
        text.contains("REGION pipe(inc, nop)->inc\n")
            || (text.contains("REGION pipe(inc, nop)->inc_stage1_of_inc_then_nop\n")
                && text.contains("REGION pipe(inc, nop)->nop_remote_stage2_of_inc_then_nop\n")),
        "{text}"
    );
    let points: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("points.json")).unwrap()).unwrap();
    let comps = &points[0]["components"];
    assert!(
        comps["inc"].is_string() && comps["nop_warm"].is_string(),
        "{points}"
    );
    // A MapReduce is saved under its image, as one term runs on several.
    let saved: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        saved.iter().any(|t| {
            t.contains(
            "REGION mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)@small\n"
        )
        }),
        "no MapReduce program under its image"
    );

    // Validated again from the saved measurements: the same rows, nothing run.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let again = tiny_again(&dir, &["--json"]);
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let rows = |r: &serde_json::Value| {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                (
                    row["configuration"].as_str().unwrap().to_string(),
                    row["time_error"].as_f64().unwrap(),
                    row["modular"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&again), rows(&report));
    // The default modeler of `validate` is the segmented one; the single-model one is
    // there by name.
    let segmented = tiny_again(&dir, &["--modeler", "segmented", "--json"]);
    let segmented: serde_json::Value = serde_json::from_slice(&segmented.stdout).unwrap();
    assert_eq!(rows(&segmented), rows(&again));
    tiny_again(&dir, &["--modeler", "perfcompose", "--json"]);

    // A pipeline's stages timed as stages record their phases, which blocks.txt cannot
    // hold: DIR/phases.json, read back above (the same modular models).
    if text.contains("REGION pipe(inc, nop)->inc_stage1_of_inc_then_nop\n") {
        let phases: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("phases.json")).unwrap())
                .unwrap();
        assert_eq!(phases["window"], 64, "{phases}");
        let stage = &phases["series"]["pipe(inc, nop)->inc_stage1_of_inc_then_nop"];
        let at = stage[0]["phases"].as_array().unwrap();
        assert!(!at.is_empty() && at.len() <= 64, "{phases}");
        // And both stages' mean call in every repetition of the test, in pipeline order.
        let reps = stage[0]["stages"].as_array().unwrap();
        assert!(reps.len() >= 2, "{phases}");
        for r in reps {
            let r = r.as_array().unwrap();
            assert_eq!(r.len(), 2, "{phases}");
            assert!(r.iter().all(|v| v.as_f64().unwrap() > 0.0), "{phases}");
        }
        // Composed without them, the pipeline's model is the shorter.
        let modular = |o: &Output| -> String {
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let rows = v["rows"].as_array().unwrap();
            let row = rows.iter().find(|r| r["configuration"] == "pipe(inc, nop)");
            row.unwrap()["modular"].as_str().unwrap().to_string()
        };
        let with = modular(&tiny_again(&dir, &["--json"]));
        let without = modular(&tiny_again(&dir, &["--no-phases", "--json"]));
        assert!(without.len() < with.len(), "{without}\nvs\n{with}");
        let dir_arg = dir.to_str().unwrap();
        // A malformed file is the user's error, located.
        std::fs::write(
            dir.join("phases.json"),
            "{\"window\": 64,\n \"series\": 3}\n",
        )
        .unwrap();
        assert_user_error(
            &[
                "validate",
                "--suite",
                "tiny",
                "--no-overhead",
                "--from",
                dir_arg,
            ],
            "phases.json:2:",
        );
    }

    // Separate: every block once, under its own name.
    let dir = scratch("save-separate");
    tiny_saved(&dir, "separate", &[]);
    let text = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
    assert!(
        text.contains("REGION inc\n") && !text.contains("->"),
        "{text}"
    );
    tiny_again(&dir, &["--protocol", "separate"]);
}

#[test]
fn validate_measure_auto_chooses_the_statistic_from_the_cores_speed_states() {
    let dir = scratch("measure-auto");
    let live = tiny_saved(&dir, "interleaved", &["--measure", "auto", "--json"]);
    let live: serde_json::Value = serde_json::from_slice(&live.stdout).unwrap();
    let auto = &live["auto_measure"];
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    // Whatever the host read, the choice follows the rule: the mean under a half.
    let chosen = match auto["fast_share"].as_f64() {
        Some(share) => {
            assert!((0.0..=1.0).contains(&share), "{auto}");
            // Both ends of the four designs within the cores.
            assert_eq!(auto["samples"], 8, "{auto}");
            if share < 0.5 {
                "mean"
            } else {
                "minimum"
            }
        }
        None => {
            assert!(!two_cores, "no samples on {auto}");
            assert_eq!(auto["samples"], 0, "{auto}");
            "minimum"
        }
    };
    assert_eq!(auto["measure"], chosen, "{auto}");
    assert_eq!(live["measure"], chosen, "{live}");
    // With a statistic named the report names it and has no choice in it.
    let plain = tiny_again(&dir, &["--measure", "minimum", "--json"]);
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(plain["measure"], "minimum");
    assert!(plain.get("auto_measure").is_none(), "{plain}");
    // Without one, auto chooses (the default since run BI).
    let default = tiny_again_by_default(&dir, &["--json"]);
    let default: serde_json::Value = serde_json::from_slice(&default.stdout).unwrap();
    assert_eq!(default["auto_measure"], *auto, "{default}");
    assert_eq!(default["measure"], chosen, "{default}");

    // From the saved run: the same choice, from report.json's samples, and the rows of
    // the statistic chosen.
    let rows = |o: &Output| -> Vec<(String, f64)> {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["configuration"].as_str().unwrap().to_string(),
                    r["time_error"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let again = tiny_again(&dir, &["--measure", "auto", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["auto_measure"], *auto);
    assert_eq!(
        rows(&again),
        rows(&tiny_again(&dir, &["--measure", chosen, "--json"]))
    );
    if !two_cores {
        return;
    }
    // Both branches, whatever this host read: every core slow at every end, then fast.
    let report_path = dir.join("report.json");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let with_shares = |share: f64| {
        let mut r = report.clone();
        for row in r["rows"].as_array_mut().unwrap() {
            let Some(states) = row.pointer_mut("/host_check/core_states") else {
                continue;
            };
            for end in ["before", "after"] {
                for s in states[end]["each"].as_array_mut().unwrap() {
                    *s = serde_json::json!(share);
                }
            }
        }
        std::fs::write(&report_path, r.to_string()).unwrap();
    };
    for (share, measure) in [(0.1, "mean"), (0.9, "minimum")] {
        with_shares(share);
        let o = tiny_again(&dir, &["--measure", "auto", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["auto_measure"]["measure"], measure, "{v}");
        assert_eq!(v["auto_measure"]["fast_share"], share, "{v}");
        assert_eq!(v["measure"], measure, "{v}");
        assert_eq!(
            rows(&o),
            rows(&tiny_again(&dir, &["--measure", measure, "--json"]))
        );
        // The human report says which and why.
        let o = tiny_again(&dir, &["--measure", "auto"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(&format!("statistic: the {measure}, chosen by --measure auto: each core in its fast state in a median {:.0}% of the windows over 8 samples", share * 100.0)),
            "{out}"
        );
    }
    // A run stopped before its report: the rows written as it went.
    std::fs::remove_file(&report_path).unwrap();
    let o = tiny_again(&dir, &["--measure", "auto", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["auto_measure"]["samples"], 8, "{v}");
    // A malformed report is the user's error, located.
    std::fs::write(&report_path, "{\"rows\":\n [1,}\n").unwrap();
    let dir_arg = dir.to_str().unwrap();
    assert_user_error(
        &[
            "validate",
            "--suite",
            "tiny",
            "--no-overhead",
            "--from",
            dir_arg,
            "--measure",
            "auto",
        ],
        "report.json:2:",
    );
    assert_user_error(
        &["validate", "--suite", "tiny", "--measure", "fastest"],
        "--measure: ",
    );
}

/// `validate --suite paper --only 'seq(inc, nop)' --from DIR --json EXTRA...`, which
/// must succeed: its row and its standard error.
fn seq_inc_nop_again(dir: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let mut args = vec![
        "validate",
        "--suite",
        "paper",
        "--only",
        "seq(inc, nop)",
        "--from",
        dir,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = perfcompose(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["rows"][0].clone(), stderr(&o))
}

#[test]
fn validate_breaks_a_block_model_at_the_cache_where_its_measurements_step_by_default() {
    // Run AG's `seq(inc, nop)` (Intel guest, 48 KiB L1d): `inc` steps up where its
    // arrays outgrow the level-1 cache. The default modeler of `validate` breaks the
    // block's model there; one model per block misses the program by more.
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/validate/intel-seq-inc-nop"
    );
    let run = |extra: &[&str]| -> (f64, String) {
        let (row, _) = seq_inc_nop_again(dir, extra);
        (
            row["time_error"].as_f64().unwrap(),
            row["modular"].as_str().unwrap().to_string(),
        )
    };
    let default = run(&[]);
    assert_eq!(default, run(&["--modeler", "segmented"]));
    assert!(default.1.contains("piecewise(x"), "{}", default.1);
    let single = run(&["--modeler", "perfcompose"]);
    assert!(!single.1.contains("piecewise"), "{}", single.1);
    assert!(
        default.0 < 0.10 && single.0 > default.0,
        "{default:?} {single:?}"
    );
}

#[test]
fn validating_a_saved_run_whose_calibration_has_no_version_asks_to_recalibrate() {
    // Run AG's folder, its calibration as the builds before versioned calibrations
    // wrote it: an error naming the file, before anything is analysed.
    let saved = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/validate/intel-seq-inc-nop"
    );
    let copy = scratch("unversioned");
    for f in ["blocks.txt", "programs.txt", "machine.json"] {
        std::fs::copy(format!("{saved}/{f}"), copy.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(format!("{saved}/overhead-calibration.json")).unwrap();
    let mut cal: serde_json::Value = serde_json::from_str(&text).unwrap();
    cal.as_object_mut().unwrap().remove("version");
    let file = copy.join("overhead-calibration.json");
    std::fs::write(&file, cal.to_string()).unwrap();
    let dir = copy.to_str().unwrap();
    let args = [
        "validate",
        "--suite",
        "paper",
        "--only",
        "seq(inc, nop)",
        "--from",
        dir,
    ];
    assert_user_error(
        &args,
        "overhead-calibration.json: an overhead calibration without a version",
    );
    assert_user_error(&args, "recalibrate with `perfcompose calibrate overhead`");
    // Told to leave the overhead out, it runs.
    let mut without = args.to_vec();
    without.push("--no-overhead");
    let o = perfcompose(&without);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_saved_run_says_its_caches_and_validating_it_again_uses_them() {
    let dir = scratch("machine");
    tiny_saved(&dir, "interleaved", &["--no-revisit", "--caches", "16K,1M"]);
    let machine: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("machine.json")).unwrap()).unwrap();
    assert_eq!(machine["caches_bytes"], serde_json::json!([16384, 1048576]));
    // Again with the segmented modeler: the saved caches, no note; without the file,
    // a note that this machine's are used.
    let again = tiny_again(&dir, &["--modeler", "segmented"]);
    assert!(
        !stderr(&again).contains("machine.json"),
        "{}",
        stderr(&again)
    );
    std::fs::remove_file(dir.join("machine.json")).unwrap();
    let again = tiny_again(&dir, &["--modeler", "segmented"]);
    assert!(
        stderr(&again).contains("has no machine.json"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn a_saved_run_that_stops_part_way_keeps_its_finished_rows_measurements() {
    // The hidden suite's third configuration panics: the run stops there (status 2),
    // after two rows. (The separate protocol times every block before the first row,
    // so it stops with none.)
    for protocol in ["interleaved", "sandwich"] {
        let dir = scratch(&format!("stops-{protocol}"));
        let dir_s = dir.to_str().unwrap();
        let o = perfcompose(&[
            "validate",
            "--suite",
            "tiny-stops",
            "--no-overhead",
            "--protocol",
            protocol,
            "--no-revisit",
            "--save",
            dir_s,
        ]);
        assert_eq!(o.status.code(), Some(2), "{protocol}: {}", stderr(&o));
        assert!(stderr(&o).contains("panic"), "{protocol}: {}", stderr(&o));
        // The finished rows, and their measurements: saved although the run never
        // reached its end (where report.json is written).
        assert!(!dir.join("report.json").exists(), "{protocol}");
        let finished: Vec<String> = std::fs::read_to_string(dir.join("rows.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let row: serde_json::Value = serde_json::from_str(l).unwrap();
                row["configuration"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(finished, ["seq(inc, nop)", "tpool(2, inc)"], "{protocol}");
        let programs = std::fs::read_to_string(dir.join("programs.txt")).unwrap();
        assert!(
            programs.contains("REGION seq(inc, nop)\n")
                && programs.contains("REGION tpool(2, inc)\n")
                && !programs.contains("panic"),
            "{protocol}: {programs}"
        );
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.ends_with(".partial")),
            "{protocol}: {names:?}"
        );
        // Validated again from them: the two rows, the tiny suite's other two named
        // as missing.
        let again = tiny_again(&dir, &["--json"]);
        let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        let rows: Vec<&str> = report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["configuration"].as_str().unwrap())
            .collect();
        assert_eq!(rows, ["seq(inc, nop)", "tpool(2, inc)"], "{protocol}");
        assert!(
            stderr(&again).contains("no measurements of 2 of the suite's configurations"),
            "{protocol}: {}",
            stderr(&again)
        );
    }
}

#[test]
fn the_sandwich_and_rounds_protocols_report_how_far_the_program_is_from_itself() {
    let repeats = |r: &serde_json::Value| -> Vec<f64> {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["repeat_error"].as_f64().expect("repeat_error"))
            .collect()
    };
    for (protocol, halves) in [
        ("sandwich", ["[before blocks]", "[after blocks]"]),
        ("rounds", ["[early rounds]", "[late rounds]"]),
    ] {
        let dir = scratch(&format!("save-{protocol}"));
        let o = tiny_saved(&dir, protocol, &["--json"]);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let first = repeats(&report);
        assert!(!first.is_empty());
        assert!(
            first.iter().all(|e| e.is_finite() && *e >= 0.0),
            "{protocol}: {first:?}"
        );
        // Both halves are saved next to the pooled program, and the blocks under the
        // configuration's name.
        let text = std::fs::read_to_string(dir.join("programs.txt")).unwrap();
        for region in [
            "REGION seq(inc, nop)\n".to_string(),
            format!("REGION seq(inc, nop) {}\n", halves[0]),
            format!("REGION seq(inc, nop) {}\n", halves[1]),
        ] {
            assert!(text.contains(&region), "{protocol}, {region}: {text}");
        }
        let blocks = std::fs::read_to_string(dir.join("blocks.txt")).unwrap();
        assert!(blocks.contains("REGION seq(inc, nop)->inc\n"), "{blocks}");
        // Validated again from them: the same figures.
        let again = tiny_again(&dir, &["--json"]);
        let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
        assert_eq!(repeats(&again), first, "{protocol}");
        // The human report has the column.
        let human = tiny_again(&dir, &[]);
        assert!(
            String::from_utf8_lossy(&human.stdout).contains("program vs itself"),
            "{}",
            String::from_utf8_lossy(&human.stdout)
        );
    }
    // The other protocols print no such field.
    let plain = perfcompose(&["validate", "--suite", "tiny", "--no-overhead", "--json"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(plain["rows"][0].get("repeat_error").is_none(), "{plain}");
    // With two cores, every row within them carries the host check taken right before
    // and right after it (no wait asked for): the host's speed, and for two threads
    // the neighbours' slowdowns (none claimed for one thread).
    let two_cores = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    for row in plain["rows"].as_array().unwrap() {
        let host = row.get("host_check");
        if two_cores && row["within_cores"] == true {
            let host = host.unwrap_or_else(|| panic!("{row}"));
            for end in ["before", "after"] {
                let worst = host[end].as_f64();
                if row["threads"] == 1 {
                    assert_eq!(worst, Some(1.0), "{row}");
                } else {
                    assert!(worst.is_some_and(|w| w >= 1.0), "{row}");
                }
            }
            assert_eq!(host["waited_s"].as_f64(), Some(0.0), "{row}");
            for ratio in ["speed_change", "slowdown"] {
                assert!(host[ratio].as_f64().is_some_and(|r| r > 0.0), "{row}");
            }
        }
    }
}

#[test]
fn validating_again_needs_saved_measurements() {
    let empty = scratch("from-empty");
    assert_user_error(
        &["validate", "--from", empty.to_str().unwrap()],
        "has no measurements",
    );
    assert_user_error(
        &["validate", "--from", "/nonexistent/run"],
        "cannot read /nonexistent/run",
    );
    // A saved run of other configurations.
    let other = scratch("from-other");
    let from_other = [
        "validate",
        "--suite",
        "tiny",
        "--from",
        other.to_str().unwrap(),
    ];
    std::fs::write(
        other.join("programs.txt"),
        "PARAMETER x\nPOINTS ( 1024 )\nREGION pipe(qsort, qsort)\nMETRIC time\nDATA 5 6 7\n",
    )
    .unwrap();
    assert_user_error(&from_other, "none of the");
    // A damaged file: located.
    std::fs::write(
        other.join("blocks.txt"),
        "PARAMETER x\nPOINTS ( 1024 )\nDATA x\n",
    )
    .unwrap();
    assert_user_error(&from_other, "blocks.txt:3");
}

#[test]
fn bad_input_is_a_clear_error_with_status_2() {
    for bad in ["48Q", "K", "0", "1.5M", "99999999999G"] {
        assert_user_error(
            &["validate", "--suite", "tiny", "--caches", bad],
            &format!("--caches: `{bad}`"),
        );
    }
    let broken = scratch("broken-machine");
    std::fs::write(
        broken.join("machine.json"),
        "{\"caches_bytes\": [49152,\n  \"x\"]}",
    )
    .unwrap();
    assert_user_error(
        &[
            "validate",
            "--suite",
            "tiny",
            "--from",
            broken.to_str().unwrap(),
        ],
        "machine.json:2:",
    );
    assert_user_error(
        &["validate", "--suite", "tiny", "--wait-quiet", "soon"],
        "--wait-quiet",
    );
    assert_user_error(
        &[
            "validate",
            "--suite",
            "tiny",
            "--wait-quiet",
            "60",
            "--no-host-check",
        ],
        "cannot be used with",
    );
    assert_user_error(&["bench", "qsrot"], "unknown kernel `qsrot`");
    assert_user_error(
        &["bench", "--term", "pipe(qsort, nosuch)", "--sizes", "64"],
        "unknown kernel `nosuch`",
    );
    assert_user_error(&["bench", "--term", "tpool(0, inc)", "--sizes", "64"], "");
    assert_user_error(
        &[
            "bench",
            "--term",
            "dc(a, b, c, procs=4, exchange=e)",
            "--sizes",
            "64",
        ],
        "no runtime implementation",
    );
    assert_user_error(
        &[
            "bench",
            "--term",
            "mapreduce(map, reduce_per_key, nodes=2, threads=2, keys=768, per_key=x)",
            "--sizes",
            "4",
        ],
        "one node",
    );
    assert_user_error(
        &[
            "bench",
            "--term",
            "seq(pipe(inc, nop), nop)",
            "--sizes",
            "64",
        ],
        "no runtime implementation",
    );
    assert_user_error(
        &["bench", "--term", "pipe(map, inc)", "--sizes", "64"],
        "map kernel",
    );
    assert_user_error(
        &["bench", "--term", "pipe(qsort,", "--sizes", "64"],
        "<term>",
    );
    assert_user_error(&["bench", "qsort", "--sizes", "0"], "not positive");
    assert_user_error(&["bench", "qsort", "--sizes", "1099511627776"], "bytes");
    assert_user_error(&["bench", "panic", "--sizes", "64"], "panicked");
    assert_user_error(
        &["bench", "--term", "tpool(2, panic)", "--sizes", "64"],
        "panicked on element",
    );
    assert_user_error(&["calibrate", "overhead", "--elements", "0"], "at least 1");
    assert_user_error(&["calibrate", "overhead", "--reps", "0"], "at least 1");
    assert_user_error(
        &["calibrate", "overhead", "--no-save", "-o", "cal.json"],
        "cannot be used with",
    );
    // The calibration is a command of its own, no longer a flag of `bench`.
    assert_user_error(&["bench", "--overhead"], "--overhead");
    assert_user_error(&["validate", "--term", "tpool(2, qsrot)"], "unknown kernel");
    assert_user_error(
        &[
            "validate",
            "--term",
            "pipe(inc, panic)",
            "--sizes",
            "64,128",
        ],
        "panicked",
    );
    assert_user_error(&["validate", "--cores", "0"], "at least 1");
    assert_user_error(&["validate", "--measure", "mode"], "unknown measure");
    assert_user_error(&["validate", "--protocol", "both"], "unknown protocol");
    assert_user_error(
        &["validate", "--block-revisit", "both"],
        "unknown block revisit",
    );
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
}

#[test]
fn validate_pin_lone_tests_times_the_lone_blocks_on_the_first_core_and_runs_every_row() {
    let dir = scratch("pin-lone-tests");
    let o = tiny_saved(&dir, "interleaved", &["--pin-lone-tests", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let plain = tiny_again(&dir, &["--json"]);
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{v}");
    assert_eq!(rows.len(), plain["rows"].as_array().unwrap().len());
    for r in rows {
        assert!(r["time_error"].as_f64().is_some_and(f64::is_finite), "{r}");
    }
    // It says how blocks are measured, so it means nothing for saved measurements.
    assert_user_error(
        &[
            "validate",
            "--suite",
            "tiny",
            "--from",
            dir.to_str().unwrap(),
            "--pin-lone-tests",
        ],
        "cannot be used with",
    );
}
