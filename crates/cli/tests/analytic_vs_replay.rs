//! The communication library's closed forms against the trace replay.
//!
//! For each collective algorithm both sides implement, a trace of that one collective is
//! replayed by `perfcompose simulate` on a contention-free cluster and compared with the
//! library function (`bcast_binomial(p, n)`, `allreduce_rdb(p, n)`, ...) evaluated at
//! `alpha` = route latency + the 16-byte envelope SMPI adds to every message, and
//! `beta` = 1/bandwidth. Sizes are at or above the eager threshold (SMPI's sends block
//! until delivered, which is Hockney's assumption) and divisible by `p`; process counts
//! include non-powers of two, where the folding of recursive doubling and Bruck's uneven
//! steps must agree with the simulator step for step.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perfcompose_core::model::parse_model_with;
use perfcompose_core::skeleton::StandardLibrary;

/// Both sides compute the same sums in a different order.
const TOL: f64 = 1e-9;
/// LogGP's flat tree charges `L` (with our envelope folded in) once and `(n − 1)·G` per
/// message, the replay charges the 16-byte envelope per message: 17 bytes per message
/// apart, about 1e-5 of a megabyte message.
const LOGGP_TOL: f64 = 1e-4;

/// Private links of 1 GB/s and 5 µs: a route is two links (up, down), 10 µs.
const PLATFORM: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" radical="0-63" suffix="" speed="1Gf" bw="1GBps" lat="5us" sharing_policy="SPLITDUPLEX"/>
</platform>
"#;
const LATENCY: f64 = 10e-6;
const BANDWIDTH: f64 = 1e9;
const ENVELOPE: f64 = 16.0;

fn run_in(dir: &Path, args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run perfcompose")
}

/// A scratch directory, removed when the test ends.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("perfcompose-avr-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("platform.xml"), PLATFORM).unwrap();
    Dir(d)
}

/// Replay `action` (one trace line without the rank) on `p` ranks.
fn replay(dir: &Dir, p: usize, action: &str, coll: &str, network: &str) -> f64 {
    let mut trace = String::new();
    for r in 0..p {
        trace.push_str(&format!("{r} init\n{r} {action}\n{r} finalize\n"));
    }
    std::fs::write(dir.0.join("trace.txt"), trace).unwrap();
    let args: Vec<String> = [
        "simulate",
        "--platform",
        "platform.xml",
        "--trace",
        "trace.txt",
        "--np",
        &p.to_string(),
        "--network",
        network,
        "--coll",
        coll,
        "--json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = run_in(&dir.0, &args);
    assert!(
        out.status.success(),
        "{coll} on {p}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["simulated_time_s"].as_f64().unwrap()
}

fn analytic(model: &str, p: usize) -> f64 {
    let e = parse_model_with("<test>", model, &StandardLibrary)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    e.eval_at(&[
        ("p", p as f64),
        ("alpha", LATENCY + ENVELOPE / BANDWIDTH),
        ("beta", 1.0 / BANDWIDTH),
        ("L", LATENCY + ENVELOPE / BANDWIDTH),
        ("o", 0.0),
        ("g", 0.0),
        ("G", 1.0 / BANDWIDTH),
    ])
    .unwrap()
}

fn agree(sim: f64, model: f64, tol: f64) -> bool {
    (sim - model).abs() <= tol * model.abs()
}

#[test]
fn collectives_match_the_replay_on_a_contention_free_cluster() {
    let dir = scratch("coll");
    // Divisible by every p below; far above the 64 KiB eager threshold.
    let n: u64 = 983_040;
    // (trace action, --coll, library model with `n` the analytic size)
    let cases: Vec<(String, &str, String)> = vec![
        (
            format!("bcast {n}"),
            "bcast=binomial_tree",
            format!("bcast_binomial(p, {n})"),
        ),
        (
            format!("reduce {n} 0"),
            "reduce=binomial",
            format!("reduce_binomial(p, {n})"),
        ),
        (
            format!("reduce {n} 0"),
            "reduce=flat_tree",
            format!("reduce_flat(p, {n})"),
        ),
        (
            format!("allreduce {n} 0"),
            "allreduce=rdb",
            format!("allreduce_rdb(p, {n})"),
        ),
        (
            format!("allreduce {n} 0"),
            "allreduce=lr",
            format!("allreduce_ring(p, {n})"),
        ),
        // alltoall and allgather counts are per process; the library takes the total.
        (
            format!("alltoall {n} {n}"),
            "alltoall=bruck",
            format!("alltoall_bruck(p, p * {n})"),
        ),
        (
            format!("allgather {n} {n}"),
            "allgather=ring",
            format!("allgather_ring(p, p * {n})"),
        ),
        (
            "barrier".into(),
            "barrier=ompi_recursivedoubling",
            "barrier_rdb(p)".into(),
        ),
    ];
    let mut failures = Vec::new();
    for (action, coll, model) in &cases {
        for p in [2usize, 3, 5, 6, 8, 12, 16] {
            for network in ["latency-bandwidth", "maxmin"] {
                let sim = replay(&dir, p, action, coll, network);
                let want = analytic(model, p);
                if !agree(sim, want, TOL) {
                    failures.push(format!(
                        "{coll} p={p} {network}: replay {sim}, {model} = {want}"
                    ));
                }
            }
        }
    }
    // Pairwise alltoall exists for powers of two only in SimGrid.
    for p in [2usize, 4, 8, 16] {
        let sim = replay(
            &dir,
            p,
            &format!("alltoall {n} {n}"),
            "alltoall=pair",
            "maxmin",
        );
        let want = analytic(&format!("alltoall_pairwise(p, p * {n})"), p);
        if !agree(sim, want, TOL) {
            failures.push(format!("alltoall=pair p={p}: replay {sim}, model {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A flat-tree broadcast posts every send at once. Without contention they all overlap
/// (one message time); under max-min sharing they split the root's link, which is LogGP's
/// flat tree with `o = g = 0`: `L + (p − 1)(n − 1)G` — not Hockney's `(p − 1)(α + nβ)`,
/// which charges a start-up per send.
#[test]
fn flat_tree_broadcast_is_loggp_with_free_injection() {
    let dir = scratch("flat");
    let n: u64 = 983_040;
    for p in [3usize, 5, 8, 12] {
        let shared = replay(&dir, p, &format!("bcast {n}"), "bcast=flattree", "maxmin");
        let loggp = analytic(&format!("bcast_flat_loggp(p, {n})"), p);
        assert!(
            agree(shared, loggp, LOGGP_TOL),
            "p={p}: {shared} vs {loggp}"
        );
        let hockney = analytic(&format!("bcast_flat(p, {n})"), p);
        assert!(hockney > shared);
        let free = replay(
            &dir,
            p,
            &format!("bcast {n}"),
            "bcast=flattree",
            "latency-bandwidth",
        );
        assert!(agree(free, analytic(&format!("hockney({n})"), p), TOL));
    }
}
