//! `perfcompose simulate` end to end: text and JSON reports, dPerf's metrics, and the exit
//! status and messages of bad inputs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_perfcompose")
}

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("pc-cli-sim-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
    fn write(&self, f: &str, text: &str) -> PathBuf {
        let p = self.0.join(f);
        std::fs::write(&p, text).unwrap();
        p
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

const PLATFORM: &str = r#"<?xml version='1.0'?>
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="l1" bandwidth="125MBps" latency="50us"/>
    <route src="a" dst="b"><link_ctn id="l1"/></route>
  </zone>
</platform>
"#;

fn setup(d: &Dir, t0: &str, t1: &str) {
    d.write("p.xml", PLATFORM);
    d.write("t0.txt", t0);
    d.write("t1.txt", t1);
    d.write("index.txt", "t0.txt\nt1.txt\n");
}

fn run(d: &Dir, extra: &[&str]) -> std::process::Output {
    Command::new(bin())
        .current_dir(d.path())
        .args(["simulate", "--platform", "p.xml", "--trace", "index.txt"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn json_report_has_the_documented_fields() {
    let d = Dir::new("json");
    setup(
        &d,
        "0 init\n0 compute 1e9\n0 send 1 0 1e6\n0 recv 1 0 1000\n0 finalize\n",
        "1 init\n1 recv 0 0 1e6\n1 send 0 0 1000\n1 finalize\n",
    );
    let out = run(&d, &["--json", "--measured-time", "2.0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // SimGrid 3.32 prints 1.008108 for this case (see docs/simulation.md)
    let t = v["simulated_time_s"].as_f64().unwrap();
    assert!((t - 1.008108256).abs() < 1e-9, "{t}");
    assert_eq!(v["actions"].as_u64(), Some(9));
    assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
    for k in [
        "compute_s",
        "communication_s",
        "waiting_s",
        "finish_s",
        "host",
        "rank",
    ] {
        assert!(v["ranks"][0].get(k).is_some(), "missing {k}");
    }
    assert!(v["wall_time_s"].as_f64().unwrap() >= 0.0);
    let s = v["slowdown"].as_f64().unwrap();
    let g = v["gain"].as_f64().unwrap();
    assert!((s * g - 1.0).abs() < 1e-9);
}

#[test]
fn speed_scale_divides_computation_and_leaves_communication_alone() {
    let d = Dir::new("speed-scale");
    setup(
        &d,
        "0 init\n0 compute 1e9\n0 send 1 0 1e6\n0 finalize\n",
        "1 init\n1 recv 0 0 1e6\n1 finalize\n",
    );
    let time = |extra: &[&str]| {
        let out = run(&d, &[&["--json"], extra].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["simulated_time_s"].as_f64().unwrap(),
            v["ranks"][0]["compute_s"].as_f64().unwrap(),
            v["notes"].to_string(),
        )
    };
    let (t1, c1, _) = time(&[]);
    let (t2, c2, notes) = time(&["--speed-scale", "2"]);
    assert!(
        (c1 - 1.0).abs() < 1e-12 && (c2 - 0.5).abs() < 1e-12,
        "{c1} {c2}"
    );
    // The message's time (after the computation) is the same.
    assert!(((t1 - c1) - (t2 - c2)).abs() < 1e-12, "{t1} {t2}");
    assert!(notes.contains("--speed-scale 2"), "{notes}");
    for bad in ["0", "-1", "nan", "inf"] {
        let out = run(&d, &[&format!("--speed-scale={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--speed-scale"), "{bad}: {err}");
    }
}

#[test]
fn text_report_and_index_relative_to_working_directory() {
    let d = Dir::new("text");
    setup(&d, "0 init\n0 compute 1e9\n", "1 init\n");
    // index with paths relative to the working directory (as smpirun reads them)
    std::fs::create_dir_all(d.path().join("sub")).unwrap();
    d.write("sub/index.txt", "t0.txt\nt1.txt\n");
    let out = Command::new(bin())
        .current_dir(d.path())
        .args([
            "simulate",
            "--platform",
            "p.xml",
            "--trace",
            "sub/index.txt",
            "--network",
            "latency-bandwidth",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("simulated time: 1.000000000 s"), "{text}");
    assert!(text.contains("working directory"), "{text}");
}

#[test]
fn deadlock_exits_2_and_says_who_waits() {
    let d = Dir::new("dl");
    setup(&d, "0 init\n0 recv 1 0 10\n", "1 init\n1 recv 0 0 10\n");
    let out = run(&d, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("deadlock"), "{err}");
    assert!(
        err.contains("t0.txt:2") && err.contains("t1.txt:2"),
        "{err}"
    );
    assert!(err.contains("a message from rank 1"), "{err}");
}

#[test]
fn bad_inputs_exit_2_with_locations() {
    let d = Dir::new("bad");
    setup(&d, "0 init\n0 sned 1 0 10\n", "1 init\n");
    let out = run(&d, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown action 'sned'")
            && err.contains("t0.txt:2:3")
            && err.contains("rank 0"),
        "{err}"
    );

    setup(&d, "0 init\n", "1 init\n");
    d.write("hosts", "a\nnope\n");
    let out = run(&d, &["--hostfile", "hosts"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("host 'nope' is not in the platform") && err.contains("hosts:2:1"),
        "{err}"
    );

    d.write("p.xml", "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n<host id=\"a\" speed=\"1Gf\"/>\n<router id=\"r\"/>\n</zone></platform>\n");
    let out = run(&d, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unsupported element <router>") && err.contains("p.xml:4:2"),
        "{err}"
    );

    setup(&d, "0 init\n", "1 init\n");
    let out = run(&d, &["--coll", "bcast=nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("binomial_tree"));
}

/// Without the `otf2` feature an OTF2 archive is recognised (by its name, or the `OTF2` of
/// its anchor's header) and refused with how to get the support.
#[cfg(not(feature = "otf2"))]
#[test]
fn an_otf2_archive_without_the_feature_says_how_to_get_it() {
    let d = Dir::new("otf2-off");
    d.write("p.xml", PLATFORM);
    d.write("traces.otf2", "anything");
    d.write("renamed", "\u{3}BOTF2\0\u{3}");
    for trace in ["traces.otf2", "renamed"] {
        let out = Command::new(bin())
            .current_dir(d.path())
            .args(["simulate", "--platform", "p.xml", "--trace", trace])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("{trace} is an OTF2 archive")),
            "{err}"
        );
        assert!(err.contains("bash scripts/install-otf2"), "{err}");
        assert!(err.contains("--features otf2"), "{err}");
    }
}

/// `--speed` and `--write-trace` describe the conversion of an OTF2 archive: on a
/// time-independent trace they are a mistake, said as such.
#[test]
fn otf2_flags_on_a_time_independent_trace_are_refused() {
    let d = Dir::new("otf2-flags");
    setup(&d, "0 init\n0 finalize\n", "1 init\n1 finalize\n");
    for flags in [&["--speed", "1Gf"][..], &["--write-trace", "out"][..]] {
        let out = run(&d, flags);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("apply to OTF2 archives"), "{err}");
    }
}

/// An index whose first path starts with `OTF2` is a time-independent trace still.
#[test]
fn a_text_index_naming_otf2_paths_is_not_an_archive() {
    let d = Dir::new("otf2-index");
    d.write("p.xml", PLATFORM);
    std::fs::create_dir_all(d.path().join("OTF2_run")).unwrap();
    d.write("OTF2_run/t0.txt", "0 init\n0 compute 1e9\n0 finalize\n");
    d.write("OTF2_run/t1.txt", "1 init\n1 finalize\n");
    d.write("index.txt", "OTF2_run/t0.txt\nOTF2_run/t1.txt\n");
    let out = run(&d, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
