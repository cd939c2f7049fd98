//! `validate` end to end on tiny suites: what a saved run keeps, and what reading it back
//! gives. The assertions are about structure (rows, files, names), never about times.

use std::path::PathBuf;

use perfcompose_runtime::validate::{reanalyze, run_suite, Archive, Options, SavedRun, Suite};
use perfcompose_runtime::{Error, Registry};

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "perfcompose-validate-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Six rounds of two repetitions a point, no host check: seconds, not minutes.
fn tiny(cases: &[&str]) -> Suite {
    let mut text = String::from(
        "name = \"tiny\"\nhost_check = false\n[budget]\nrounds = 6\nseconds = 1\n[sampling]\nwarmup = 0\nmin_reps = 3\nmax_reps = 3\nmin_sample_us = 100\nmax_point_ms = 200\n",
    );
    for c in cases {
        text += &format!("[[case]]\nterm = \"{c}\"\nsizes = [1024, 2048, 4096]\n");
    }
    Suite::parse("tiny.toml", &text, "tiny").unwrap()
}

fn options() -> Options {
    Options {
        cores: 2,
        memory_limit: 256 << 20,
        ..Options::default()
    }
}

#[test]
fn a_run_stopped_part_way_keeps_its_finished_rows_and_validates_them_again() {
    let mut registry = Registry::builtin();
    registry.register_block("panic", "panics on every element", |_| {
        panic!("the test kernel `panic` was called")
    });
    let suite = tiny(&["seq(inc, nop)", "pipe(inc, nop)", "seq(inc, panic)"]);
    let dir = scratch("stops");
    let opts = options();
    let archive = Archive::create(&dir, &suite, None, &opts).unwrap();
    let err = run_suite(&suite, &registry, &opts, &mut |_| {}, Some(archive)).unwrap_err();
    assert!(err.to_string().contains("panic"), "{err}");
    let rows = std::fs::read_to_string(dir.join("rows.jsonl")).unwrap();
    assert_eq!(rows.lines().count(), 2, "{rows}");
    assert!(
        !dir.join("report.json").exists(),
        "no report for a run that stopped"
    );

    let saved = SavedRun::open(&dir).unwrap();
    assert_eq!(saved.manifest.cases.len(), 3);
    let again = reanalyze(&saved.suite().unwrap(), &saved, &registry, &opts).unwrap();
    let terms: Vec<&str> = again
        .report
        .rows
        .iter()
        .map(|r| r.configuration.as_str())
        .collect();
    assert_eq!(terms, ["seq(inc, nop)", "pipe(inc, nop)"]);
    assert_eq!(again.missing, ["seq(inc, panic)"]);
    // Both halves of each program were saved: the program against itself; and every
    // round, read back as rounds.
    assert!(again.report.rows.iter().all(|r| r.repeat_error.is_some()));
    assert!(again
        .report
        .rows
        .iter()
        .all(|r| r.rounds.as_ref().is_some_and(|r| r.count == 6)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_finished_run_reads_back_as_it_was_reported() {
    let registry = Registry::builtin();
    let suite = tiny(&["seq(inc, nop)", "tpool(2, inc)"]);
    let dir = scratch("finished");
    let opts = options();
    let archive = Archive::create(&dir, &suite, None, &opts).unwrap();
    let live = run_suite(&suite, &registry, &opts, &mut |_| {}, Some(archive)).unwrap();
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
    let saved = SavedRun::open(&dir).unwrap();
    let again = reanalyze(&saved.suite().unwrap(), &saved, &registry, &opts).unwrap();
    assert!(again.missing.is_empty());
    // The same data, modeler and statistic: the same models and errors.
    for (a, b) in live.rows.iter().zip(&again.report.rows) {
        assert_eq!(a.configuration, b.configuration);
        assert_eq!(a.modular.to_string(), b.modular.to_string());
        assert_eq!(a.monolithic.to_string(), b.monolithic.to_string());
        assert_eq!(a.time_error.to_bits(), b.time_error.to_bits());
        assert_eq!(a.repeat_error, b.repeat_error);
        assert_eq!(a.rounds, b.rounds);
        assert_eq!(a.verdict(), b.verdict());
        assert_eq!(a.coverage, b.coverage);
    }
    // Rounds: at least six, the budget's at most, every size's error in each.
    for r in &live.rows {
        let rounds = r.rounds.as_ref().unwrap();
        assert_eq!(rounds.count, 6, "{}", r.configuration);
        assert_eq!(rounds.at.len(), 3);
        assert!(rounds.at.iter().all(|a| a.errors.len() == 6));
        assert_eq!(rounds.budget, Some(suite.budget));
        // One-run intervals on every point, and the runs counted against them.
        assert!(
            r.points.iter().all(|p| p.interval.is_some()),
            "{:?}",
            r.points
        );
        assert!(r.coverage.runs > 0);
    }
    let s = live.summary();
    assert_eq!(s.budget, Some(suite.budget));
    assert_eq!(
        s.coverage.runs,
        live.rows.iter().map(|r| r.coverage.runs).sum::<usize>()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_run_saved_before_rounds_still_reads_and_decides_nothing() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/validate/intel-seq-inc-nop");
    let saved = SavedRun::open(&dir).unwrap();
    assert_eq!(saved.manifest.version, 1);
    assert_eq!(saved.manifest.budget, None);
    let opts = Options {
        cores: saved.manifest.cores,
        caches: saved.manifest.caches_bytes.clone(),
        ..options()
    };
    let again = reanalyze(&saved.suite().unwrap(), &saved, &Registry::builtin(), &opts).unwrap();
    let row = &again.report.rows[0];
    // Saved without its halves: its program as one round.
    assert_eq!(row.rounds.as_ref().map(|r| r.count), Some(1));
    // Two rounds cannot decide at 95%.
    assert_eq!(
        row.verdict(),
        perfcompose_runtime::validate::Verdict::Undecided
    );
}

#[test]
fn a_folder_of_another_layout_is_refused_with_the_reason() {
    let dir = scratch("layout");
    std::fs::create_dir_all(&dir).unwrap();
    let e = SavedRun::open(&dir).expect_err("a folder without run.json is not a saved run");
    let Error::NotSaved { path, source, .. } = &e else {
        panic!("not the error of a folder without a saved run: {e:?}");
    };
    assert_eq!(path, &dir.join("run.json"));
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    assert!(
        e.to_string().contains("is not a saved validation run"),
        "{e}"
    );
    // The reason travels as the error's source, for the CLI's cause chain.
    let cause = std::error::Error::source(&e).expect("the read's error is the source");
    assert_eq!(
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind),
        Some(std::io::ErrorKind::NotFound)
    );
    std::fs::write(
        dir.join("run.json"),
        "{\"format\": \"perfcompose validate run\", \"version\": 99}\n",
    )
    .unwrap();
    let Err(Error::Input(d)) = SavedRun::open(&dir) else {
        panic!("another version is refused");
    };
    assert!(
        d.message
            .contains("layout version 99, this build reads versions 1 and 2"),
        "{}",
        d.message
    );
    std::fs::write(
        dir.join("run.json"),
        "{\"format\": \"perfcompose validate run\",\n \"version\": 1,\n \"suite\": 3}\n",
    )
    .unwrap();
    let Err(Error::Input(d)) = SavedRun::open(&dir) else {
        panic!("a malformed manifest is a located error");
    };
    assert_eq!(d.line_col().0, 3, "{d:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn measurements_that_cannot_be_written_name_the_file_and_keep_the_reason() {
    let dir = scratch("unwritable");
    // The folder is never made: writing into it fails.
    let path = dir.join("blocks.txt");
    let series = perfcompose_runtime::bench::Series::kernel(
        "inc",
        vec![perfcompose_runtime::bench::PointStats::of(
            1024,
            vec![1.0, 2.0],
        )],
    );
    let e = perfcompose_runtime::validate::write_measurements(&path, &[series])
        .expect_err("the folder does not exist");
    let Error::File {
        action,
        path: written,
        source,
    } = &e
    else {
        panic!("not a file's error: {e:?}");
    };
    assert_eq!(*action, perfcompose_runtime::FileAction::Write);
    assert!(written.starts_with(&dir), "{}", written.display());
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
}
