//! Diagnostic: what one run of a program costs besides its elements. Times `KERNEL` alone
//! and `tpool(2, KERNEL)` under the stream driver (pinned) on streams of `X`-int arrays
//! (fresh copies, caches evicted, as `validate` makes them) of several lengths,
//! alternating, and fits `elapsed = fixed + per_element · n` per design.
//!
//! `cargo run --release -p perfcompose-runtime --example pool_elements -- [KERNEL [X [REPS]]]`
use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, tpool, Config, Data, Program};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args.get(1).cloned().unwrap_or_else(|| "nop".into());
    let x: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let reps: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(9);
    let config = Config {
        pin: true,
        ..Config::default()
    };
    let registry = Registry::builtin();
    let op = registry.get(&kernel).unwrap().op();
    let op2 = op.clone();
    let single = Program::with_config(
        block(&kernel, move |d: Data| unit_call(&op, d)),
        config.clone(),
    )
    .unwrap();
    let pool = Program::with_config(
        tpool(2, block(&kernel, move |d: Data| unit_call(&op2, d))),
        config,
    )
    .unwrap();
    let inputs = Inputs::default();
    let counts: Vec<usize> = std::env::var("COUNTS")
        .ok()
        .map(|c| c.split(",").map(|v| v.parse().unwrap()).collect())
        .unwrap_or(vec![64, 256, 1024, 4096, 16384]);
    let mut t = vec![vec![Vec::new(); counts.len()]; 2];
    for _ in 0..reps {
        for (ci, &n) in counts.iter().enumerate() {
            for (pi, p) in [&single, &pool].into_iter().enumerate() {
                let s = stream_inputs(&registry, &kernel, x, n, &inputs, u128::MAX).unwrap();
                perfcompose_runtime::bench::evict_caches();
                t[pi][ci].push(p.run_stream(s).unwrap().elapsed.as_nanos() as f64);
            }
        }
    }
    println!(
        "{kernel}, x = {x}, {reps} rounds: median run [us] and ns per element by stream length"
    );
    for (pi, name) in ["alone", "tpool(2)"].iter().enumerate() {
        let med: Vec<f64> = t[pi].iter().map(|v| median(v.clone())).collect();
        let cells: Vec<String> = counts
            .iter()
            .zip(&med)
            .map(|(n, m)| format!("{n}: {:.0} us {:.0} ns", m / 1e3, m / *n as f64))
            .collect();
        // Least squares of elapsed on n.
        let (xs, ys): (Vec<f64>, Vec<f64>) = counts
            .iter()
            .map(|&n| n as f64)
            .zip(med.iter().cloned())
            .unzip();
        let mx = xs.iter().sum::<f64>() / xs.len() as f64;
        let my = ys.iter().sum::<f64>() / ys.len() as f64;
        let b = xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| (x - mx) * (y - my))
            .sum::<f64>()
            / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
        println!(
            "{name:>9}: fixed {:.0} us, {:.0} ns/element | {}",
            (my - b * mx) / 1e3,
            b,
            cells.join(" | ")
        );
    }
}
