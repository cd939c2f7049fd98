//! Integration tests of the `perfcompose` binary: golden cases in `testdata/cli/`, plus
//! properties of every command (errors exit 2 with a located message, never a panic).

mod common;

use std::io::BufRead as _;
use std::path::Path;
use std::process::Stdio;

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

/// Output large enough that no pipe holds it all (Linux pipes hold 64 KiB by default):
/// the command must go on writing after its reader has closed the pipe, whenever that
/// happens, so the closed-pipe error is certain rather than a race.
const MORE_THAN_A_PIPE_HOLDS: usize = 256 * 1024;

/// `perfcompose ... | head -1`: when the reader of stdout goes away, the command ends
/// quietly with status 0 (no panic, no message), like ripgrep — whether the pipe closes
/// before the first write or after a line was read, and whether the command prints one
/// big string (`predict`) or line by line (`fit --stats`).
#[test]
fn closed_stdout_ends_quietly_with_status_0() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("closed-stdout");
    std::fs::create_dir_all(&dir).unwrap();
    // 400 series of 13 lines each with --stats: about 330 KB.
    let mut text = String::from("PARAMETER x\n");
    let xs: Vec<u64> = (10..19).map(|k| 1 << k).collect();
    for x in &xs {
        text.push_str(&format!("POINTS ( {x} )\n"));
    }
    for r in 0..400u64 {
        text.push_str(&format!("\nREGION r{r:04}\nMETRIC time\n"));
        for x in &xs {
            let v = ((r + 1) * x + 1000) as f64;
            text.push_str(&format!("DATA {} {v} {}\n", v * 0.99, v * 1.01));
        }
    }
    let file = dir.join("many-series.txt");
    std::fs::write(&file, text).unwrap();
    // A 20,000-point grid: about 700 KB in one `write`.
    let grid = format!(
        "x={}",
        (1..=20_000)
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    // (name for messages, arguments, start of the first line)
    let commands: [(&str, Vec<String>, &str); 2] = [
        (
            "predict on a 20,000-point grid",
            vec![
                "predict".into(),
                "pipe(qsort, inc)".into(),
                "--at".into(),
                grid,
            ],
            "term:",
        ),
        (
            "fit --stats on 400 series",
            vec!["fit".into(), "--stats".into(), file.display().to_string()],
            "r0000; time; ",
        ),
    ];
    for (name, args, first_line) in &commands {
        let full = common::command_in(&dir, args).output().unwrap();
        let full_stderr = String::from_utf8_lossy(&full.stderr);
        assert!(full.status.success(), "{name}: {full_stderr}");
        assert!(
            full.stdout.len() > MORE_THAN_A_PIPE_HOLDS,
            "{name}: only {} bytes of output, too few to be sure the pipe is closed while the command writes",
            full.stdout.len()
        );
        for read_a_line in [false, true] {
            let mut child = common::command_in(&dir, args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let stdout = child.stdout.take().unwrap();
            let how = if read_a_line {
                let mut line = String::new();
                std::io::BufReader::new(stdout)
                    .read_line(&mut line)
                    .unwrap();
                assert!(line.starts_with(first_line), "{name}: {line}");
                "closed after one line"
            } else {
                drop(stdout);
                "closed at once"
            };
            // The read end is closed now: the rest of the output meets a broken pipe.
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("panicked"), "{name} ({how}): {stderr}");
            assert_eq!(out.status.code(), Some(0), "{name} ({how}): {stderr}");
            assert_eq!(stderr, "", "{name} ({how})");
        }
    }
}

/// An error written to a standard error that cannot take it (`2>/dev/full`, or stdout and
/// stderr on one pipe whose reader went away: `2>&1 | true`) loses the message, not the
/// exit status: 2 for the bad input, never a panic's 101.
#[test]
fn unwritable_stderr_keeps_the_exit_status() {
    let dir = common::testdata();
    let args = ["predict".to_string(), "nosuch".to_string()];
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = common::command_in(&dir, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(full))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "2>/dev/full");

    // Both streams to readers that went away before the command writes its error.
    let mut child = common::command_in(&dir, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "2>&1 | true");
}

/// `scripts/install-mpi --check` names libclang-dev as missing when only other libclang
/// packages are present (libclang-cpp alone does not build the `mpi` crate's bindings).
#[test]
fn install_mpi_requires_libclang_dev() {
    let script = common::testdata().join("../scripts/install-mpi");
    let fake = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake-path-install-mpi");
    std::fs::create_dir_all(&fake).unwrap();
    let tools: [(&str, &str); 3] = [
        ("mpicc", "exit 0"),
        ("mpirun", "echo 'mpirun (Open MPI) 4.1.4'"),
        // dpkg's answer for a package that was never installed.
        (
            "dpkg-query",
            "echo 'dpkg-query: no packages found matching libclang-dev' >&2; exit 1",
        ),
    ];
    for (name, body) in tools {
        let p = fake.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", fake.display());
    let out = std::process::Command::new("bash")
        .arg(&script)
        .arg("--check")
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout.trim(), "missing: libclang-dev");
}

/// Where `text` calls a paper by its file number in the project's notes (`seed 000`,
/// `the seed paper`) instead of by its subject ("the pattern-composition paper").
fn seed_numbers(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    ["seed 00", "seeds 00", "seed paper", "the seed's"]
        .iter()
        .filter_map(|needle| {
            lower.find(needle).map(|at| {
                let end = (at + 60).min(lower.len());
                let end = (end..=lower.len())
                    .find(|&i| lower.is_char_boundary(i))
                    .unwrap_or(lower.len());
                lower[at..end].to_string()
            })
        })
        .collect()
}

/// Help texts, golden outputs, the docs and the README name the papers by subject.
#[test]
fn user_facing_text_names_the_papers_not_their_seed_numbers() {
    let mut found = Vec::new();
    for command in [
        "",
        "predict",
        "check",
        "optimize",
        "demo",
        "fit",
        "measure",
        "bench",
        "bench kernels",
        "bench design",
        "calibrate",
        "calibrate overhead",
        "calibrate network",
        "validate",
        "simulate",
        "record",
        "report",
    ] {
        let mut args: Vec<&str> = command.split_whitespace().collect();
        args.push("--help");
        let out = run(&args);
        for hit in seed_numbers(&String::from_utf8_lossy(&out.stdout)) {
            found.push(format!("`perfcompose {command} --help`: {hit}"));
        }
    }
    let root = common::testdata().join("..");
    let mut files: Vec<std::path::PathBuf> = vec![root.join("README.md")];
    for dir in [root.join("docs")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.extension().is_some_and(|e| e == "md") {
                files.push(p);
            }
        }
    }
    for case in common::cases("cli") {
        files.extend(["stdout", "stderr"].map(|f| case.join(f)));
    }
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for hit in seed_numbers(&text) {
            found.push(format!("{}: {hit}", f.display()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `docs/fitting.md` states its figures with the commands that make them, not the
/// dates or the names of the runs they came from.
#[test]
fn the_fitting_document_keeps_no_dates_or_run_names() {
    let path = common::testdata().join("../docs/fitting.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let dates: Vec<&str> = (0..b.len().saturating_sub(10))
        .filter(|&i| {
            digits(i..i + 4) && b[i + 4] == b'-' && digits(i + 5..i + 7) && b[i + 7] == b'-'
        })
        .map(|i| &text[i..i + 10])
        .collect();
    assert!(dates.is_empty(), "dates in {}: {dates:?}", path.display());
    // A run named by letters: "run J", "runs G–L", "run AB".
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
    let named: Vec<String> = words
        .windows(2)
        .filter(|w| {
            (w[0] == "run" || w[0] == "runs")
                && (1..=2).contains(&w[1].len())
                && w[1].chars().all(|c| c.is_ascii_uppercase())
        })
        .map(|w| w.join(" "))
        .collect();
    assert!(
        named.is_empty(),
        "run names in {}: {named:?}",
        path.display()
    );
}

/// The README stays short (at most 300 lines): details go to `docs/`.
#[test]
fn the_readme_stays_within_300_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let lines = std::fs::read_to_string(root.join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(lines <= 300, "README.md has {lines} lines, at most 300");
}
