//! The case studies of real programs (docs/case-studies.md): `scripts/install-cases`
//! says what is missing, and `scripts/bench-cases --smoke` runs the whole chain of
//! commands (inputs, blocks measured alone, components file, validate against the
//! programs at 1, 2 and 4 workers) at tiny sizes. No assertion depends on how fast
//! anything runs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `bash`, found on this process's PATH (the scripts run under a PATH of stubs only).
fn bash() -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .expect("bash on PATH")
}

/// A directory holding one executable stub per name, each printing `version`.
fn stubs(name: &str, tools: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for tool in tools {
        let p = dir.join(tool);
        std::fs::write(&p, "#!/bin/sh\necho version\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// `install-cases --check` under a PATH of `tools` alone: its status and output.
fn check_with(name: &str, tools: &[&str]) -> (Option<i32>, String) {
    let path = stubs(name, tools);
    let out = Command::new(bash())
        .arg(repo().join("scripts/install-cases"))
        .arg("--check")
        .env("PATH", &path)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    )
}

/// Each missing command is named by the Debian package that brings it, in the order the
/// script checks them, and nothing is installed (exit status 1).
#[test]
fn install_cases_check_names_the_missing_packages() {
    let (status, out) = check_with("cases-no-xz", &["pbzip2", "bzip2", "sort", "python3"]);
    assert_eq!(status, Some(1), "{out}");
    assert_eq!(out, "missing: xz-utils");

    let (status, out) = check_with("cases-bare", &["sort"]);
    assert_eq!(status, Some(1), "{out}");
    assert_eq!(out, "missing: pbzip2 bzip2 xz-utils python3");

    let (status, out) = check_with("cases-no-pbzip2", &["bzip2", "xz", "sort", "python3"]);
    assert_eq!(status, Some(1), "{out}");
    assert_eq!(out, "missing: pbzip2");
}

/// The case studies' whole chain at tiny sizes, two repetitions a point; skipped (saying
/// so) where the programs are not installed.
#[test]
fn bench_cases_smoke_runs_every_case_end_to_end() {
    let check = Command::new(bash())
        .arg(repo().join("scripts/install-cases"))
        .arg("--check")
        .output()
        .unwrap();
    if !check.status.success() {
        eprintln!(
            "skipped: the case-study programs are not installed ({}); run scripts/install-cases",
            String::from_utf8_lossy(&check.stdout).trim()
        );
        return;
    }
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cases-smoke");
    let _ = std::fs::remove_dir_all(&out_dir);
    let out = Command::new(bash())
        .arg(repo().join("scripts/bench-cases"))
        .arg("--smoke")
        .arg("--out")
        .arg(&out_dir)
        .env("PERFCOMPOSE", common::bin())
        .env("NO_COLOR", "1")
        .env(
            "XDG_CONFIG_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-calibration"),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = std::fs::read_to_string(out_dir.join("results.md")).unwrap();
    for (case, blocks, terms) in [
        (
            "pbzip2",
            &["read", "compress", "write"][..],
            [
                "seq(read, compress, write)",
                "pipe(read, tpool(2, compress), write)",
                "pipe(read, tpool(4, compress), write)",
            ],
        ),
        (
            "xz",
            &["read", "compress", "write"][..],
            [
                "seq(read, compress, write)",
                "pipe(seq(read, write), tpool(2, compress))",
                "pipe(seq(read, write), tpool(4, compress))",
            ],
        ),
        (
            "sort",
            &["sort_half", "merge"][..],
            [
                "seq(sort_half, merge)",
                "seq(tpool(2, sort_half), merge)",
                "seq(tpool(4, sort_half), merge)",
            ],
        ),
    ] {
        let dir = out_dir.join(case);
        let toml = std::fs::read_to_string(dir.join("blocks.toml")).unwrap();
        for block in blocks {
            assert!(toml.contains(&format!("[components.{block}]")), "{toml}");
            let m: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("measure-{block}.json"))).unwrap(),
            )
            .unwrap();
            assert_eq!(m["points"].as_array().unwrap().len(), 3, "{case} {block}");
            assert_eq!(m["timed"], "printed");
        }
        for (workers, term) in [1, 2, 4].into_iter().zip(terms) {
            let text =
                std::fs::read_to_string(dir.join(format!("validate-{workers}.json"))).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let row = &v["rows"][0];
            assert_eq!(row["configuration"], term, "{case}");
            assert_eq!(row["points"].as_array().unwrap().len(), 3, "{text}");
            // More workers than the 2 cores a CI machine has: reported only.
            if workers > 2 && v["cores"].as_u64() == Some(2) {
                assert_eq!(row["verdict"], "reported_only", "{text}");
            }
            assert!(results.contains(&format!("`{term}`")), "{results}");
        }
    }
    assert!(results.contains("## Verdicts"), "{results}");
    assert!(stdout.contains("results in "), "{stdout}");
}
