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
//! `tpool(2, inc)`; ratios to `inc` alone. With `FIXED=P` also, first, the same bytes
//! swept `P` times by a generic block on `u64` arrays (`fixed`, cold streams):
//! `fixed`, `pipe(fixed, nop)`, `pipe(fixed, fixed)`, `tpool(2, fixed)`.
//!
//! `cargo run --release -p perfcompose-runtime --example coupled_stages -- sweep T_US,... [REPS]`
//!
//! Stages on arrays of 10 bytes per ns of `T`, three kinds: `fixed` sweeps its array a
//! fixed number of times (sized on a warm array to take about `T`), `sweep` sweeps it
//! until `T` has passed, `spin` waits for `T` on the clock without touching it (the busy
//! hand-off calibration's stage). Printed, fastest/median ns per element: each alone and
//! in pipelines of two (`tpool(2, fixed)` too). Only fixed work slows down when the other
//! core's work gets in its way (docs/validation.md, "Busy stages that sweep memory").
//! Exits with status 2 on bad arguments.

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

/// One line of results: `label`, then each design's fastest/median ns per element and,
/// with `ratios`, its fastest over the first design's.
fn report(label: &str, names: &[&str], m: &[Vec<f64>], ratios: bool) {
    let base = min_med(&m[0]).0;
    let cells: Vec<String> = names
        .iter()
        .zip(m)
        .map(|(name, v)| {
            let (lo, med) = min_med(v);
            if ratios {
                format!("{name} {lo:.0}/{med:.0} ({:.3})", lo / base)
            } else {
                format!("{name} {lo:.0}/{med:.0}")
            }
        })
        .collect();
    println!("{label} | {}", cells.join(" | "));
}

/// `FIXED=P` (passes of the generic block in the `inc` mode): `None` unset, status 2 when
/// not a positive integer.
fn fixed_passes() -> Option<u64> {
    let v = std::env::var("FIXED").ok()?;
    match v.parse() {
        Ok(p) if p > 0 => Some(p),
        _ => {
            eprintln!("FIXED={v:?}: passes, a positive integer");
            std::process::exit(2);
        }
    }
}

/// The `inc` mode: designs of the registry's `inc` on `x`-element arrays.
fn arrays(sizes: &[usize], reps: usize, config: &Config) {
    let fixed_passes = fixed_passes();
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
        // The same bytes swept by a generic block on `u64` arrays, fixed passes.
        if let Some(passes) = fixed_passes {
            type P = perfcompose_runtime::Pattern<Vec<u64>, Vec<u64>>;
            let fx = || -> P { block("fixed", move |v: Vec<u64>| fixed(v, passes)) };
            let nop = || -> P { block("nop", black_box::<Vec<u64>>) };
            let build = |p| Program::with_config(p, config.clone()).expect("builds");
            let ps = [
                ("fixed", build(fx())),
                ("pipe(fixed, nop)", build(pipe(fx(), nop()))),
                ("pipe(fixed, fixed)", build(pipe(fx(), fx()))),
                ("tpool(2, fixed)", build(tpool(2, fx()))),
            ];
            let mut mf = vec![Vec::new(); ps.len()];
            for _ in 0..reps {
                for (k, (_, p)) in ps.iter().enumerate() {
                    let stream: Vec<Vec<u64>> = (0..n).map(|i| vec![i as u64; x / 2]).collect();
                    perfcompose_runtime::bench::evict_caches();
                    let got = p.run_stream(stream).expect("runs");
                    mf[k].push(got.elapsed.as_nanos() as f64 / n as f64);
                }
            }
            let names: Vec<&str> = ps.iter().map(|(n, _)| *n).collect();
            report(&format!("x={x} fixed {passes} passes"), &names, &mf, true);
        }
        report(&format!("x={x}"), &terms, &m, true);
    }
}

/// Busy for `ns`: sweeps (`touch`) or only waits for the clock, at least one pass.
fn sweep(mut v: Vec<u64>, ns: u64, touch: bool) -> Vec<u64> {
    let t = Instant::now();
    loop {
        if touch {
            for e in v.iter_mut() {
                *e = e.wrapping_add(1);
            }
            black_box(&mut v);
        } else {
            std::hint::spin_loop();
        }
        if t.elapsed().as_nanos() as u64 >= ns {
            return v;
        }
    }
}

/// `passes` passes over `v`, adding 1 to every element: fixed work on memory.
fn fixed(mut v: Vec<u64>, passes: u64) -> Vec<u64> {
    for _ in 0..passes {
        for e in v.iter_mut() {
            *e = e.wrapping_add(1);
        }
        v = black_box(v);
    }
    v
}

/// Passes over a warm array of `len` u64 that take about `ns` (at least one).
fn passes_for(len: usize, ns: u64) -> u64 {
    let v = vec![1u64; len];
    let mut v = fixed(v, 4);
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let t = Instant::now();
        v = fixed(v, 4);
        best = best.min(t.elapsed().as_nanos() as f64 / 4.0);
    }
    ((ns as f64 / best).round() as u64).max(1)
}

/// The `sweep` mode: per busy time `T` (µs), the `fixed`, `sweep` and `spin` stages alone
/// and in pipelines of two, alternating.
fn sweeps(ts: &[f64], reps: usize, config: &Config) {
    type P = perfcompose_runtime::Pattern<Vec<u64>, Vec<u64>>;
    let sw = |ns: u64| -> P { block("sweep", move |v: Vec<u64>| sweep(v, ns, true)) };
    let sp = |ns: u64| -> P { block("spin", move |v: Vec<u64>| sweep(v, ns, false)) };
    let nop = || -> P { block("nop", black_box::<Vec<u64>>) };
    let fx = |k: u64| -> P { block("fixed", move |v: Vec<u64>| fixed(v, k)) };
    for &t_us in ts {
        let ns = (t_us * 1000.0) as u64;
        let n = ((20_000.0 / t_us) as usize).max(64);
        let len = (ns * 10 / 8).max(1) as usize;
        let build = |p| Program::with_config(p, config.clone()).expect("builds");
        let k = passes_for(len, ns);
        println!("T={t_us} us: {k} passes");
        let programs = [
            ("fixed", build(fx(k))),
            ("pipe(fixed, nop)", build(pipe(fx(k), nop()))),
            ("pipe(fixed, fixed)", build(pipe(fx(k), fx(k)))),
            ("tpool(2, fixed)", build(tpool(2, fx(k)))),
            ("sweep", build(sw(ns))),
            ("pipe(sweep, nop)", build(pipe(sw(ns), nop()))),
            ("pipe(sweep, sweep)", build(pipe(sw(ns), sw(ns)))),
            ("spin", build(sp(ns))),
            ("pipe(spin, spin)", build(pipe(sp(ns), sp(ns)))),
        ];
        let mut m = vec![Vec::new(); programs.len()];
        for _ in 0..reps {
            for (k, (_, p)) in programs.iter().enumerate() {
                let stream: Vec<Vec<u64>> = (0..n).map(|i| vec![i as u64; len]).collect();
                let got = p.run_stream(stream).expect("runs");
                m[k].push(got.elapsed.as_nanos() as f64 / n as f64);
            }
        }
        let names: Vec<&str> = programs.iter().map(|(n, _)| *n).collect();
        report(&format!("T={t_us} us len={len}"), &names, &m, false);
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "sweep") {
        args.remove(0);
        let (ts, reps) = args::list_and_reps::<f64>(&args, "coupled_stages sweep T_US,... [REPS]");
        let config = Config {
            pin: true,
            ..Config::default()
        };
        sweeps(&ts, reps, &config);
        return;
    }
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
        let names: Vec<&str> = programs.iter().map(|(n, _)| *n).collect();
        report(&format!("T={t_us} us"), &names, &m, true);
    }
}
