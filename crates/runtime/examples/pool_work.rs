//! Diagnostic: does a busy task pool lose time in proportion to its workers' work? The
//! busy-pool calibration times `tpool(n, spin(T))` against `spin(T)` with a spin that ends
//! at a wall-clock time: time another thread takes from a worker during a call does not
//! lengthen that call, so the calibration cannot see it. Here a block of fixed work (a
//! number of arithmetic steps that takes about `T` alone) runs beside the spin.
//!
//! `cargo run --release -p perfcompose-runtime --example pool_work -- [T_US,... [THREADS [REPS]]]`
//!
//! Per `T` (default 1,4,16,64,256 µs) it times `work(T)` and `tpool(n, work(T))`, then
//! `spin(T)` and `tpool(n, spin(T))`, the four streams (about 20 ms each, the stream
//! driver of `validate`) alternating, `REPS` (default 15) repetitions, and prints the
//! fastest and median time per element and `n · pool / alone` for each. `PIN=1` pins the
//! pool's workers.

use perfcompose_runtime::{block, tpool, Config, Program};
use std::time::Instant;

fn spin(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// `steps` dependent multiply-adds: fixed work, no memory.
fn work(steps: u64) -> u64 {
    let mut acc = 1u64;
    for i in 0..steps {
        acc = acc.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    std::hint::black_box(acc)
}

fn min_med(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let times: Vec<u64> = match args.get(1).map(|a| a.split(',').map(str::parse).collect()) {
        None => Ok(vec![1, 4, 16, 64, 256]),
        Some(r) => r,
    }
    .unwrap_or_else(|e| {
        eprintln!("T_US {:?}: {e}", args[1]);
        std::process::exit(2);
    });
    let parse = |i: usize, d: usize| match args.get(i).map(|a| a.parse::<usize>()) {
        None => d,
        Some(Ok(v)) if v > 0 => v,
        Some(_) => {
            eprintln!("argument {i} {:?}: not a positive integer", args[i]);
            std::process::exit(2);
        }
    };
    let (threads, reps) = (parse(2, 2), parse(3, 15));
    let config = Config {
        pin: std::env::var_os("PIN").is_some(),
        ..Config::default()
    };
    // Steps per µs of `work`, from a 20 ms run.
    let t = Instant::now();
    work(20_000_000);
    let per_us = 20_000_000.0 / (t.elapsed().as_nanos() as f64 / 1000.0);
    for &us in &times {
        let steps = (per_us * us as f64) as u64;
        let ns = us * 1000;
        let build = |b: perfcompose_runtime::Pattern<u64, u64>, pool: bool| {
            let p = if pool { tpool(threads, b) } else { b };
            Program::with_config(p, config.clone()).expect("builds")
        };
        let w = || block("work", move |v: u64| v ^ work(steps));
        let s = || {
            block("spin", move |v: u64| {
                spin(ns);
                v
            })
        };
        let programs = [
            build(w(), false),
            build(w(), true),
            build(s(), false),
            build(s(), true),
        ];
        let count = (20_000_000 / ns).max(64);
        let time = |p: &Program<u64, u64>| {
            p.run_stream((0..count).collect())
                .expect("runs")
                .elapsed
                .as_nanos() as f64
                / count as f64
        };
        programs.iter().for_each(|p| {
            time(p);
        });
        let mut m = vec![Vec::new(); 4];
        for _ in 0..reps {
            for (i, p) in programs.iter().enumerate() {
                m[i].push(time(p));
            }
        }
        let r: Vec<(f64, f64)> = m.iter().map(|v| min_med(v)).collect();
        let n = threads as f64;
        println!(
            "T={us} us | work {:.0}/{:.0} pool {:.0}/{:.0} n*pool/alone {:.3}/{:.3} | spin {:.0}/{:.0} pool {:.0}/{:.0} n*pool/alone {:.3}/{:.3}",
            r[0].0, r[0].1, r[1].0, r[1].1, n * r[1].0 / r[0].0, n * r[1].1 / r[0].1,
            r[2].0, r[2].1, r[3].0, r[3].1, n * r[3].0 / r[2].0, n * r[3].1 / r[2].1,
        );
    }
}
