//! Golden tests: the replay must predict what SimGrid 3.32's `smpirun -replay` predicted on
//! the same generated cases (CM02, TCP-gamma 0, no cross traffic, same collective
//! algorithms). The SimGrid times were recorded by `scripts/bench-simgrid --record` into
//! `testdata/sim/simgrid-3.32.tsv`, so these tests do not need SimGrid installed.

use std::path::PathBuf;

use perfcompose_sim::gen::Scenario;
use perfcompose_sim::platform::{read_hostfile, Platform};
use perfcompose_sim::trace::TraceSet;
use perfcompose_sim::{simulate, Config};

/// Issue 5's targets: point-to-point traces within 0.1%, traces with collectives within 1%.
const P2P_TOLERANCE: f64 = 1e-3;
const COLL_TOLERANCE: f64 = 1e-2;

fn golden_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/sim/simgrid-3.32.tsv")
}

#[test]
fn matches_simgrid_recorded_times() {
    let text = std::fs::read_to_string(golden_file()).expect("golden file");
    let base = std::env::temp_dir().join(format!("pc-golden-{}", std::process::id()));
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.starts_with("kind\t") || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "bad golden line: {line}");
        let (kind, spec, coll, expected) = (cols[0], cols[1], cols[2], cols[3]);
        let expected: f64 = expected.parse().expect("a time");
        let dir = base.join(format!(
            "{}-{}",
            spec.replace(':', "_"),
            coll.replace('=', "_")
        ));
        let g = Scenario::parse(spec).unwrap().write(&dir).unwrap();
        let platform = Platform::from_file(&g.platform).unwrap();
        let hf = std::fs::read_to_string(&g.hostfile).unwrap();
        let slots = read_hostfile("hostfile", &hf, &platform).unwrap();
        let traces = TraceSet::open(&g.index, None).unwrap();
        let mut config = Config::default();
        if !coll.is_empty() {
            config.coll.set(coll).unwrap();
        }
        let report = simulate(&platform, &traces, &slots, &config, &mut |_| {}).unwrap();
        let rel = (report.simulated_time_s - expected) / expected;
        let tol = if kind == "p2p" {
            P2P_TOLERANCE
        } else {
            COLL_TOLERANCE
        };
        if rel.abs() > tol {
            failures.push(format!(
                "{spec} {coll}: simgrid {expected} ours {} ({:+.4}%)",
                report.simulated_time_s,
                rel * 100.0
            ));
        }
        checked += 1;
    }
    std::fs::remove_dir_all(&base).ok();
    assert!(checked >= 20, "only {checked} golden cases");
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}
