//! Fixes the git commit the binary is built from as `PERFCOMPOSE_COMMIT`, for the
//! provenance of the results it saves (`perfcompose_core::provenance`) and for
//! `--version`. A value of `PERFCOMPOSE_COMMIT` in the build's environment wins (a
//! packager's); outside a git checkout (a source tarball) the commit is `unknown`.

use std::path::Path;
use std::process::Command;

fn git(dir: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=PERFCOMPOSE_COMMIT");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let commit = std::env::var("PERFCOMPOSE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&dir, &["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PERFCOMPOSE_COMMIT={commit}");
    // Build again when HEAD moves: HEAD itself (a checkout), the branch's ref (a commit)
    // and packed-refs, in the worktree's and the common git directory.
    for (which, file) in [("--git-dir", "HEAD"), ("--git-common-dir", "packed-refs")] {
        if let Some(d) = git(&dir, &["rev-parse", which]) {
            let p = Path::new(&dir).join(d).join(file);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    if let (Some(common), Some(head)) = (
        git(&dir, &["rev-parse", "--git-common-dir"]),
        git(&dir, &["symbolic-ref", "-q", "HEAD"]),
    ) {
        let p = Path::new(&dir).join(common).join(head);
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
