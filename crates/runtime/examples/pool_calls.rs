//! Diagnostic: where a task pool's time per element goes. A stream of `qsort` inputs (as
//! `validate` makes them: fresh copies, out of the caches) runs through
//! `tpool(N, qsort)` under the stream driver, with the block timing each of its own calls;
//! the same stream runs through `qsort` alone on one thread, timed the same way. Per
//! repetition it prints the time per element, the median call inside the pool and alone,
//! and how much of the pool's wall time its workers spent outside calls (start-up, hand-offs,
//! the end of the stream, time taken by other threads).
//!
//! If the pool's calls are slower than the lone ones, the block itself runs slower inside
//! the pool; if the calls match and the idle share is large, the pattern loses the time.
//!
//!     cargo run --release -p perfcompose-runtime --example pool_calls [-- X [THREADS [REPS]]]
//!
//! `KERNEL=inc` (any registered kernel) instead of `qsort`; `COUNT=64` elements per stream
//! instead of about 20 ms of calls per worker (at least 16). `PIN=1` pins the pool's workers (`Config { pin: true }`, as `validate` runs designs
//! that fit the cores).
use std::sync::{Arc, Mutex};
use std::time::Instant;

use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, tpool, Config, Data, Program};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let arg = |i: usize, d: usize| -> usize {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(d)
    };
    let (x, threads, reps) = (arg(1, 65_536), arg(2, 2), arg(3, 9));
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    let kernel = std::env::var("KERNEL").unwrap_or_else(|_| "qsort".into());
    let op = match registry.get(&kernel) {
        Ok(k) => k.op(),
        Err(e) => {
            eprintln!("KERNEL={kernel}: {e}");
            std::process::exit(2);
        }
    };
    let calls: Arc<Mutex<Vec<f64>>> = Arc::default();
    let timed = {
        let (op, calls) = (op.clone(), Arc::clone(&calls));
        move |d: Data| {
            let t = Instant::now();
            let out = unit_call(&op, d);
            let us = t.elapsed().as_secs_f64() * 1e6;
            calls.lock().unwrap().push(us);
            out
        }
    };
    let config = Config {
        pin: std::env::var("PIN").is_ok_and(|v| v == "1"),
        ..Config::default()
    };
    let pool = Program::with_config(tpool(threads, block(&kernel, timed.clone())), config).unwrap();
    let alone = Program::new(block(&kernel, timed)).unwrap();
    // About 20 ms of calls per worker, as validate's repetitions.
    let probe = {
        let d = stream_inputs(&registry, &kernel, x, 1, &inputs, u128::MAX).unwrap();
        let t = Instant::now();
        drop(unit_call(&op, d.into_iter().next().unwrap()));
        t.elapsed().as_secs_f64()
    };
    let count = std::env::var("COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| ((threads as f64 * 0.02 / probe).ceil() as usize).max(16));
    println!("{kernel} x={x}: {count} elements per stream, tpool({threads}, {kernel}) against {kernel} alone, {reps} rounds");
    println!("round | pool ns/elem | alone ns/elem | ratio pool*threads/alone | median call pool / alone [us] | pool idle share");
    for round in 0..reps {
        let mut row = Vec::new();
        for (name, program) in [("pool", &pool), ("alone", &alone)] {
            calls.lock().unwrap().clear();
            let stream = stream_inputs(&registry, &kernel, x, count, &inputs, u128::MAX).unwrap();
            perfcompose_runtime::bench::evict_caches();
            let m = program.run_stream(stream).unwrap();
            let wall = m.elapsed.as_secs_f64() * 1e6;
            let mut c = calls.lock().unwrap().clone();
            let busy: f64 = c.iter().sum();
            let n = if name == "pool" { threads } else { 1 };
            row.push((
                wall / count as f64,
                median(&mut c),
                1.0 - busy / (wall * n as f64),
            ));
        }
        let (p, a) = (row[0], row[1]);
        println!(
            "{round:>5} | {:>12.0} | {:>13.0} | {:>24.3} | {:>14.1} / {:<14.1} | {:>6.1}%",
            p.0 * 1e3,
            a.0 * 1e3,
            p.0 * threads as f64 / a.0,
            p.1,
            a.1,
            100.0 * p.2
        );
    }
}
