//! Helpers shared by the CLI integration tests: run the binary, and golden cases.
//!
//! A golden case is a directory under `testdata/cli/` holding
//!
//! * `cmd` — the arguments, one per line (no shell quoting needed);
//! * input files the arguments name (paths are relative to the case directory, which
//!   is the working directory of the run);
//! * `stdout`, `stderr` — the expected output (a missing file means: empty);
//! * `status` — the expected exit status (missing: 0).
//!
//! Run with `PERFCOMPOSE_BLESS=1` to (re)write the expected files from the actual
//! output; review the diff before committing.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `perfcompose` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_perfcompose")
}

/// The repository's `testdata/` directory.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// `perfcompose` with `args` in `dir`, with a stable environment (no colours, fixed
/// width, no backtraces), ready to run.
pub fn command_in(dir: &Path, args: &[String]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env("RUST_BACKTRACE", "0")
        .env_remove("CLICOLOR_FORCE")
        // Keep an overhead calibration stored on this machine out of the golden output.
        .env(
            "XDG_CONFIG_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-calibration"),
        );
    c
}

/// Run `perfcompose` with `args` in `dir`, with a stable environment (no colours, fixed
/// width, no backtraces).
pub fn run_in(dir: &Path, args: &[String]) -> Output {
    command_in(dir, args).output().expect("run perfcompose")
}

/// Run `perfcompose` in a temporary-free way from the test data directory.
pub fn run(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    run_in(&testdata(), &args)
}

pub fn bless() -> bool {
    std::env::var_os("PERFCOMPOSE_BLESS").is_some()
}

/// The case directories under `testdata/<group>/`, sorted.
pub fn cases(group: &str) -> Vec<PathBuf> {
    let root = testdata().join(group);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("cmd").is_file())
        .collect();
    v.sort();
    v
}

fn read_or_empty(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Run one golden case; `Err` describes every mismatch.
pub fn check_case(dir: &Path) -> Result<(), String> {
    let cmd = std::fs::read_to_string(dir.join("cmd")).map_err(|e| e.to_string())?;
    let args: Vec<String> = cmd
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    let out = run_in(dir, &args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let status = out.status.code().unwrap_or(-1);
    let name = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    if stderr.contains("panicked") {
        return Err(format!("{name}: the command panicked:\n{stderr}"));
    }
    if bless() {
        let write = |file: &str, text: &str| {
            let p = dir.join(file);
            if text.is_empty() {
                let _ = std::fs::remove_file(&p);
            } else {
                std::fs::write(&p, text).expect("bless");
            }
        };
        write("stdout", &stdout);
        write("stderr", &stderr);
        write(
            "status",
            &if status == 0 {
                String::new()
            } else {
                format!("{status}\n")
            },
        );
        return Ok(());
    }
    let mut problems = Vec::new();
    let want_status: i32 = read_or_empty(&dir.join("status"))
        .trim()
        .parse()
        .unwrap_or(0);
    if status != want_status {
        problems.push(format!("status {status}, expected {want_status}"));
    }
    for (file, got) in [("stdout", &stdout), ("stderr", &stderr)] {
        let want = read_or_empty(&dir.join(file));
        if &want != got {
            problems.push(format!(
                "{file} differs:\n--- expected\n{want}\n--- got\n{got}"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{name} ({}):\n{}",
            args.join(" "),
            problems.join("\n")
        ))
    }
}
