//! Diagnostic: what two equal stages lose to each other when each core's speed varies on
//! its own (another tenant on the host's sibling thread, frequency), which a stage's unit
//! test, timed while its neighbour runs, does not see.
//!
//! `cargo run --release -p perfcompose-runtime --example coupled_stages -- T_US,... [REPS]`
//! `cargo run --release -p perfcompose-runtime --example coupled_stages -- inc X,... [REPS]`
//!
//! Per busy time `T` (µs), a block `work(T)` does a fixed amount of arithmetic in
//! registers (no memory), sized so that one call takes about `T` on an idle core: unlike
//! the calibrations' `spin(T)`, which waits for the clock, it slows down when its core
//! does. Streams of about 20 ms through the stream driver of `validate`, workers pinned,
//! alternating, `REPS` (default 15) repetitions: `work(T)` alone, `pipe(work(T), nop)`,
//! `pipe(work(T), work(T))`, `pipe(work(T), work(T/2))`, and `tpool(2, work(T))`. Printed:
//! the fastest and median ns per element of each, and the ratios of the fastest to the
//! fastest of `work(T)` alone. Equal stages that slow down independently make a pipeline
//! run at the slower of the two at each moment: its time per element is above that of
//! either stage, by more the more each core's speed varies. With `inc`, the same for the
//! registry's `inc` on `x`-element arrays (the designs built from terms, as `validate`
//! runs them): `inc`, `pipe(inc, nop)`, `pipe(inc, inc)`, `seq(inc, inc)`,
//! `tpool(2, inc)`; ratios to `inc` alone. Exits with status 2 on bad arguments.

#[path = "common/args.rs"]
mod args;

use perfcompose_runtime::{block, pipe, tpool, Config, Program};
use std::hint::black_box;
use std::time::Instant;

/// `iters` rounds of dependent arithmetic on one register.
fn work(iters: u64) -> u64 {
    let mut a = black_box(0x9e37_79b9_7f4a_7c15_u64);
    for i in 0..iters {
        a = a.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i);
    }
    black_box(a)
}

/// Rounds of [`work`] per ns on this core, the fastest of a few tries.
fn rounds_per_ns() -> f64 {
    let iters = 2_000_000;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            work(iters);
            iters as f64 / t.elapsed().as_nanos() as f64
        })
        .fold(0.0, f64::max)
}

fn stage(iters: u64) -> perfcompose_runtime::Pattern<u64, u64> {
    block("work", move |v: u64| v ^ (work(iters) & 1))
}

fn min_med(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// The `inc` mode: designs of the registry's `inc` on `x`-element arrays.
fn arrays(sizes: &[usize], reps: usize, config: &Config) {
    use perfcompose_runtime::kernel::{Inputs, Registry};
    use perfcompose_runtime::plan::stream_inputs;
    let reg = Registry::builtin();
    let inputs = Inputs::default();
    let terms = [
        "inc",
        "pipe(inc, nop)",
        "pipe(inc, inc)",
        "seq(inc, inc)",
        "tpool(2, inc)",
    ];
    let built: Vec<_> = terms
        .iter()
        .map(|t| {
            let (_, plan) = perfcompose_runtime::validate::parse_plan("<term>", t).expect("parses");
            plan.build(&reg, config.clone()).expect("builds")
        })
        .collect();
    for &x in sizes {
        let n = ((20_000_000.0 / (0.8 * x as f64)).ceil() as usize).clamp(16, 20_000);
        let mut m = vec![Vec::new(); terms.len()];
        for _ in 0..reps {
            for (k, b) in built.iter().enumerate() {
                let stream = stream_inputs(&reg, "inc", x, n, &inputs, u128::MAX).expect("fits");
                let got = b.program.run_stream(stream).expect("runs");
                m[k].push(got.elapsed.as_nanos() as f64 / n as f64);
            }
        }
        let base = min_med(&m[0]).0;
        let cells: Vec<String> = terms
            .iter()
            .zip(&m)
            .map(|(name, v)| {
                let (lo, med) = min_med(v);
                format!("{name} {lo:.0}/{med:.0} ({:.3})", lo / base)
            })
            .collect();
        println!("x={x} | {}", cells.join(" | "));
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let inc = args.first().is_some_and(|a| a == "inc");
    if inc {
        args.remove(0);
    }
    let (spins, reps) = args::list_and_reps::<f64>(&args, "coupled_stages [inc] T_US|X,... [REPS]");
    // `CAPACITY=N`: queues of N elements between stages instead of the default.
    let capacity = std::env::var("CAPACITY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(Config::default().capacity);
    let config = Config {
        pin: true,
        capacity,
        ..Config::default()
    };
    if inc {
        let sizes: Vec<usize> = spins.iter().map(|&x| x as usize).collect();
        arrays(&sizes, reps, &config);
        return;
    }
    let rate = rounds_per_ns();
    println!("work: {rate:.3} rounds per ns on an idle core");
    for &t_us in &spins {
        let iters = (t_us * 1000.0 * rate) as u64;
        let n = ((20_000.0 / t_us) as usize).max(64);
        let build = |p| Program::with_config(p, config.clone()).expect("builds");
        let programs = [
            ("work(T)", build(stage(iters))),
            (
                "pipe(work, nop)",
                build(pipe(stage(iters), block("nop", black_box::<u64>))),
            ),
            ("pipe(work, work)", build(pipe(stage(iters), stage(iters)))),
            (
                "pipe(work, work/2)",
                build(pipe(stage(iters), stage(iters / 2))),
            ),
            ("tpool(2, work)", build(tpool(2, stage(iters)))),
        ];
        let mut m = vec![Vec::new(); programs.len()];
        for _ in 0..reps {
            for (k, (_, p)) in programs.iter().enumerate() {
                let got = p.run_stream((0..n as u64).collect()).expect("runs");
                m[k].push(got.elapsed.as_nanos() as f64 / n as f64);
            }
        }
        let base = min_med(&m[0]).0;
        let cells: Vec<String> = programs
            .iter()
            .zip(&m)
            .map(|((name, _), v)| {
                let (lo, med) = min_med(v);
                format!("{name} {lo:.0}/{med:.0} ({:.3})", lo / base)
            })
            .collect();
        println!("T={t_us} us | {}", cells.join(" | "));
    }
}
