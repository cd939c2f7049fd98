//! `perfcompose report` end to end: each page kind from the repository's test data, the
//! page self-contained (no script, nothing loaded from elsewhere), `--svg-dir`, and bad
//! input answered with a located error and exit status 2. What a browser makes of the
//! pages is checked by `scripts/test-browser`.

mod common;

use std::path::{Path, PathBuf};

use common::{run, testdata};

/// A scratch directory under the target directory, emptied first.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-{name}"));
    std::fs::remove_dir_all(&d).ok();
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Run `report` with `args` plus `-o OUT --svg-dir DIR`, expect success, and check the
/// page: self-contained, `figures` pictures inline and as files. Returns the HTML.
fn page(name: &str, args: &[&str], figures: usize) -> String {
    let dir = scratch(name);
    let out = dir.join("page.html");
    let svgs = dir.join("svg");
    let mut all: Vec<String> = vec!["report".into()];
    all.extend(args.iter().map(|a| a.to_string()));
    all.extend(["-o".into(), s(&out), "--svg-dir".into(), s(&svgs)]);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let o = run(&refs);
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        html.matches("<svg").count(),
        figures,
        "{name}: inline pictures"
    );
    let files = std::fs::read_dir(&svgs).unwrap().count();
    assert_eq!(files, figures, "{name}: SVG files");
    // Self-contained: no script, no stylesheet or image fetched from anywhere.
    let lower = html.to_lowercase();
    for bad in [
        "<script", "<link", "<img", "<iframe", "src=", "url(", "@import",
    ] {
        assert!(!lower.contains(bad), "{name}: contains {bad}");
    }
    for svg in std::fs::read_dir(&svgs).unwrap() {
        let text = std::fs::read_to_string(svg.unwrap().path()).unwrap();
        assert!(text.starts_with("<svg"), "{name}: standalone SVG");
        assert!(text.trim_end().ends_with("</svg>"));
    }
    html
}

#[test]
fn designs_page_compares_terms_over_a_range() {
    let html = page(
        "designs",
        &[
            "--term",
            "pipe(tpool(4, qsort), inc)",
            "--term",
            "tpool(4, seq(qsort, inc))",
            "--term",
            "pipe(qsort, inc)",
            "--at",
            "x=1..2^20",
        ],
        4,
    );
    // The crossover of pipe(qsort, inc) (inc leads below x ≈ 1.6) is marked and listed.
    assert!(html.contains("crossovers"), "crossovers listed");
    assert!(
        html.contains("inc → qsort"),
        "the switch of pipe(qsort, inc)"
    );
    assert!(html.contains("No prediction intervals are drawn"));
    assert!(html.contains("smallest model"));
}

#[test]
fn designs_page_reads_a_components_file() {
    let html = page(
        "components",
        &[
            "--components",
            "cli/predict-measurements/design.toml",
            "--term",
            "pipe(qsort, inc)",
            "--at",
            "x=2^10..2^16",
        ],
        1,
    );
    assert!(html.contains("design.toml"));
}

#[test]
fn models_page_draws_each_series() {
    let html = page(
        "models",
        &["--fit", "cli/predict-measurements/qsort.txt"],
        1,
    );
    assert!(html.contains("SMAPE"));
    assert!(html.contains("x * log2(x)") || html.contains("x^(1) * log2(x)^(1)"));
    // The dots are the statistic the model was fitted to: by default the minimum, with
    // Extra-P's modeler Extra-P's mean, or the one asked for.
    assert!(
        html.contains("reduced by the minimum for fitting"),
        "{html}"
    );
    assert!(html.contains("measured (minimum, range)"));
    let qsort = "cli/predict-measurements/qsort.txt";
    let extrap = page("models-extrap", &["--fit", qsort, "--modeler", "extrap"], 1);
    assert!(extrap.contains("reduced by the mean for fitting"));
    assert!(extrap.contains("measured (mean, range)"));
    let median = page("models-median", &["--fit", qsort, "--measure", "median"], 1);
    assert!(median.contains("measured (median, range)"));
}

#[test]
fn validation_page_from_a_saved_run() {
    let html = page(
        "validation",
        &["--validate", "validate/intel-seq-inc-nop"],
        2,
    );
    assert!(html.contains("seq(inc, nop)"));
    // A run saved before rounds: read, drawn, and undecided.
    assert!(html.contains("undecided"), "{html}");
}

#[test]
fn replay_page_from_simulate_timeline_and_json() {
    let dir = scratch("replay-input");
    let timeline = dir.join("run.json");
    let o = run(&[
        "simulate",
        "--platform",
        "sim/two-hosts/platform.xml",
        "--trace",
        "sim/two-hosts/index.txt",
        "--timeline",
        &s(&timeline),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = page("replay", &["--simulate", &s(&timeline)], 2);
    assert!(html.contains("rank 1"));
    assert!(!html.contains("has no timeline"));

    let o = run(&[
        "simulate",
        "--platform",
        "sim/two-hosts/platform.xml",
        "--trace",
        "sim/two-hosts/index.txt",
        "--json",
    ]);
    let json = dir.join("report.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let html = page("replay-json", &["--simulate", &s(&json)], 1);
    assert!(html.contains("has no timeline"));
}

/// Expect exit status 2 and every `needles` in stderr.
fn fails(args: &[&str], needles: &[&str]) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in\n{err}");
    }
}

#[test]
fn bad_input_is_located_and_exits_2() {
    let dir = scratch("bad");
    let out = s(&dir.join("x.html"));
    let bad_json = dir.join("bad.json");
    std::fs::write(
        &bad_json,
        "{\n  \"simulated_time_s\": 1.0,\n  \"ranks\": [oops]\n}\n",
    )
    .unwrap();
    fails(
        &["report", "--simulate", &s(&bad_json), "-o", &out],
        &["bad.json:3:"],
    );
    let not_replay = dir.join("other.json");
    std::fs::write(&not_replay, "{\"traceEvents\": []}").unwrap();
    fails(
        &["report", "--simulate", &s(&not_replay), "-o", &out],
        &["other.json", "otherData"],
    );
    // A saved run whose manifest is broken.
    let run_dir = dir.join("saved");
    std::fs::create_dir_all(&run_dir).unwrap();
    for f in ["blocks.txt", "programs.txt", "overhead-calibration.json"] {
        std::fs::copy(
            testdata().join("validate/intel-seq-inc-nop").join(f),
            run_dir.join(f),
        )
        .unwrap();
    }
    std::fs::write(
        run_dir.join("run.json"),
        "{\"format\": \"perfcompose-validate\",\n \"version\": }",
    )
    .unwrap();
    fails(
        &["report", "--validate", &s(&run_dir), "-o", &out],
        &["run.json"],
    );
    fails(
        &["report", "--validate", &s(&dir.join("missing")), "-o", &out],
        &["missing"],
    );
    fails(
        &["report", "--term", "pipe(qsort, nosuch)", "-o", &out],
        &["nosuch"],
    );
    fails(
        &["report", "--term", "qsort", "--at", "x=8..2", "-o", &out],
        &["must go up", "--at"],
    );
    fails(
        &[
            "report", "--term", "qsort", "--at", "x=1..8", "--at", "p=1,2", "-o", &out,
        ],
        &["varies one parameter"],
    );
    let bad_fit = dir.join("bad.txt");
    std::fs::write(
        &bad_fit,
        "PARAMETER x\nPOINTS 1 2\nREGION r\nMETRIC time\nDATA 1 zwei\n",
    )
    .unwrap();
    fails(&["report", "--fit", &s(&bad_fit), "-o", &out], &["bad.txt"]);
    fails(&["report", "-o", &out], &[]);
}

#[test]
fn bench_design_writes_the_timeline_of_one_run() {
    let dir = scratch("bench-timeline");
    let trace = dir.join("threads.json");
    let o = run(&[
        "bench",
        "design",
        "pipe(inc, nop)",
        "--sizes",
        "1024",
        "--reps",
        "1",
        "--max-reps",
        "1",
        "--timeline",
        &s(&trace),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let calls = |name: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name)
            .count()
    };
    // 64 elements through both stages, each stage on its own named thread.
    assert_eq!(calls("inc"), 64);
    assert_eq!(calls("nop"), 64);
    let threads = events.iter().filter(|e| e["name"] == "thread_name").count();
    assert_eq!(threads, 2);
}

/// What the pictures must show: units on the y axes, short coefficients, the composed
/// model in black over its band, components beyond their measured range marked, the
/// replay's words as `simulate` says them, each swatch kept with its name.
#[test]
fn pictures_say_their_units_and_mark_what_matters() {
    let dir = scratch("marks-input");
    std::fs::write(
        dir.join("c.toml"),
        "[components.a]\nmodel = \"5.123456789 + 2.987654321 * x\"\nrelative_error = 0.1\nmeasured = { x = [1, 100] }\n[components.b]\nmodel = \"3 * x\"\n",
    )
    .unwrap();
    let html = page(
        "marks",
        &[
            "--components",
            &s(&dir.join("c.toml")),
            "--term",
            "pipe(a, b)",
            "--at",
            "x=1..10000",
        ],
        1,
    );
    assert!(html.contains("predicted time [ns]"), "y axis unit");
    assert!(!html.contains("model value"));
    assert!(html.contains("2.988 * x"), "4 significant digits");
    assert!(!html.contains("2.987654321"));
    assert!(
        html.contains("opacity=\"1\" stroke=\"#000000\" stroke-width=\"3\""),
        "the composed model in black, not faint"
    );
    assert!(
        html.contains("Beyond their measured range")
            && html.contains("components beyond their measured range"),
        "extrapolation marked"
    );
    let models = page(
        "marks-models",
        &["--fit", "cli/predict-measurements/qsort.txt"],
        1,
    );
    assert!(
        models.contains("time (minimum), the file"),
        "y axis names the metric"
    );
    let timeline = dir.join("run.json");
    let o = run(&[
        "simulate",
        "--platform",
        "sim/two-hosts/platform.xml",
        "--trace",
        "sim/two-hosts/index.txt",
        "--timeline",
        &s(&timeline),
    ]);
    assert!(o.status.success());
    // The timeline, a saved result, has its provenance beside it.
    let provenance = std::fs::read_to_string(dir.join("run.json.provenance.jsonl")).unwrap();
    assert!(provenance.contains("\"command_line\":[") && provenance.contains("simulate"));
    let replay = page("marks-replay", &["--simulate", &s(&timeline)], 2);
    assert!(
        replay.contains("<span class=\"key\">"),
        "swatch and name kept together"
    );
    assert!(replay.contains("</span>waiting</span>"), "simulate's word");
    assert!(!replay.contains("</span>late</span>"));
}
