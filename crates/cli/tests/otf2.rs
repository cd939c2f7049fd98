//! `simulate --trace X.otf2` end to end (builds with the `otf2` feature): archives written
//! by the OTF2 library's own writer following Score-P's conventions
//! (`testdata/otf2/scorep_like.py`, under the system's python3 with python3-otf2) replay
//! exactly as the time-independent trace of the same program does; `--speed` and
//! `--write-trace`; malformed archives end with status 2 and a message naming the archive.
#![cfg(feature = "otf2")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-3" suffix="" speed="1Gf" bw="125MBps" lat="50us" bb_bw="1GBps" bb_lat="10us"/>
</platform>
"#;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// A fresh directory holding the platform and scenario `name` written by the script
/// (its time-independent side at `speed` flop/s).
fn scenario(name: &str, speed: f64) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cli-otf2-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cluster.xml"), PLATFORM).unwrap();
    let out = Command::new("/usr/bin/python3")
        .arg(testdata().join("otf2/scorep_like.py"))
        .arg(name)
        .arg(dir.join("run"))
        .arg(speed.to_string())
        .output()
        .expect("run /usr/bin/python3 (bash scripts/install-otf2 installs python3-otf2)");
    assert!(
        out.status.success(),
        "scorep_like.py {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn simulate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .arg("simulate")
        .args(["--platform", "cluster.xml"])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// The replay's JSON report without what differs between two runs of the same replay
/// (wall time, the trace's path, the notes).
fn replay(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let out = simulate(dir, &a);
    assert!(
        out.status.success(),
        "simulate {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["wall_time_s", "actions_per_s", "trace", "notes"] {
        o.remove(k);
    }
    v
}

#[test]
fn archives_replay_as_their_time_independent_traces() {
    for name in ["p2p", "collectives", "split"] {
        let dir = scenario(name, 1e9);
        let otf2 = replay(&dir, &["--trace", "run/traces.otf2"]);
        let ti = replay(&dir, &["--trace", "run/ti/trace.txt"]);
        assert_eq!(otf2, ti, "{name}");
        // The experiment directory names its archive.
        assert_eq!(replay(&dir, &["--trace", "run"]), ti, "{name}");
        assert!(otf2["simulated_time_s"].as_f64().unwrap() > 0.0);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_traced_speed_scales_computation_and_the_conversion_can_be_kept() {
    // The time-independent side at 2 Gflop/s; the platform's hosts at 1 Gflop/s.
    let dir = scenario("p2p", 2e9);
    let otf2 = replay(
        &dir,
        &[
            "--trace",
            "run/traces.otf2",
            "--speed",
            "2Gf",
            "--write-trace",
            "converted",
        ],
    );
    assert_eq!(otf2, replay(&dir, &["--trace", "run/ti/trace.txt"]));
    for r in 0..4 {
        let name = format!("trace_{r}.txt");
        assert_eq!(
            std::fs::read_to_string(dir.join("converted").join(&name)).unwrap(),
            std::fs::read_to_string(dir.join("run/ti").join(&name)).unwrap()
        );
    }
    assert_eq!(otf2, replay(&dir, &["--trace", "converted/trace.txt"]));
    // By default, each rank's host speed: the measured time on this platform, which at
    // 1 Gflop/s is half the computation the 2 Gflop/s trace describes.
    let text = simulate(&dir, &["--trace", "run/traces.otf2"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("each rank's host speed"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Status 2, a message naming the archive and containing `what`, and no panic.
fn refused(dir: &Path, args: &[&str], what: &str) {
    let out = simulate(dir, args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(what), "{args:?}: expected '{what}' in:\n{err}");
}

#[test]
fn malformed_archives_are_refused_with_status_2() {
    let anchor = "run/traces.otf2";
    for (name, what) in [
        (
            "undefined-comm",
            "rank 1 (location 1), event 4 at 0.000006001 s: communicator 42 is not defined",
        ),
        ("undefined-region", "region 77 is not defined"),
        (
            "rank-out-of-range",
            "rank 5 of communicator 0 ('MPI_COMM_WORLD') does not exist (it has 2 ranks)",
        ),
        ("no-mpi-ranks", "no MPI ranks"),
    ] {
        let dir = scenario(name, 1e9);
        refused(&dir, &["--trace", anchor], what);
        refused(&dir, &["--trace", anchor], "run/traces.otf2");
        let _ = std::fs::remove_dir_all(&dir);
    }
    let dir = scenario("p2p", 1e9);
    let path = dir.join(anchor);
    let bytes = std::fs::read(&path).unwrap();
    // Truncated and corrupted anchor files.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    refused(
        &dir,
        &["--trace", anchor],
        "run/traces.otf2: cannot read the OTF2 archive",
    );
    std::fs::write(&path, vec![0x5a; bytes.len()]).unwrap();
    refused(
        &dir,
        &["--trace", anchor],
        "run/traces.otf2: cannot read the OTF2 archive",
    );
    // The definitions missing; a rank's events missing.
    std::fs::write(&path, &bytes).unwrap();
    std::fs::rename(dir.join("run/traces.def"), dir.join("run/defs.bak")).unwrap();
    refused(
        &dir,
        &["--trace", anchor],
        "run/traces.otf2: cannot read the OTF2 archive",
    );
    std::fs::rename(dir.join("run/defs.bak"), dir.join("run/traces.def")).unwrap();
    std::fs::remove_file(dir.join("run/traces/3.evt")).unwrap();
    refused(
        &dir,
        &["--trace", anchor],
        "run/traces.otf2: cannot read the OTF2 archive",
    );
    // Flags that do not fit.
    let dir = scenario("collectives", 1e9);
    refused(&dir, &["--trace", anchor, "--np", "3"], "has 4 MPI ranks");
    refused(
        &dir,
        &["--trace", anchor, "--speed", "fast"],
        "--speed 'fast'",
    );
    refused(
        &dir,
        &["--trace", "run/ti/trace.txt", "--speed", "1Gf"],
        "apply to OTF2 archives",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
