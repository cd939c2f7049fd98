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
//! `KERNEL2=inc` makes the replica `seq(KERNEL, KERNEL2)` (as in `tpool(2, seq(inc, inc))`)
//! and prints the median call of each block, in the pool and alone: the numbers to hold
//! against the loaded unit tests `KERNEL_par2` and `KERNEL2_warm_par2` (`perfcompose bench`).
//!
//! `KERNEL=inc` (any registered kernel) instead of `qsort`; `COUNT=64` elements per stream
//! instead of about 20 ms of calls per worker (at least 16). `PIN=1` pins the pool's workers (`Config { pin: true }`, as `validate` runs designs
//! that fit the cores).
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[path = "common/args.rs"]
mod args;
use args::{arg, kernel_op};

use perfcompose_runtime::kernel::{unit_call, Inputs, Op, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, seq, tpool, Config, Data, Pattern, Program};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let (x, threads, reps) = (arg(1, 65_536), arg(2, 2), arg(3, 9));
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    let (kernel, op) = kernel_op(&registry, "KERNEL", "qsort");
    let (second, op2) = match std::env::var("KERNEL2") {
        Ok(k) if !k.is_empty() => {
            let (k, op) = kernel_op(&registry, "KERNEL2", &k);
            (Some(k), Some(op))
        }
        _ => (None, None),
    };
    // The calls of the first block and, with KERNEL2, of the second, in µs.
    let calls: [Arc<Mutex<Vec<f64>>>; 2] = Default::default();
    let timed = |op: Op, calls: Arc<Mutex<Vec<f64>>>| {
        move |d: Data| {
            let t = Instant::now();
            let out = unit_call(&op, d);
            let us = t.elapsed().as_secs_f64() * 1e6;
            calls.lock().unwrap().push(us);
            out
        }
    };
    let replica = || -> Pattern<Data, Data> {
        let first = block(&kernel, timed(op.clone(), Arc::clone(&calls[0])));
        match (&second, &op2) {
            (Some(k2), Some(op2)) => {
                seq(first, block(k2, timed(op2.clone(), Arc::clone(&calls[1]))))
            }
            _ => first,
        }
    };
    let config = Config {
        pin: std::env::var("PIN").is_ok_and(|v| v == "1"),
        ..Config::default()
    };
    let pool = Program::with_config(tpool(threads, replica()), config).unwrap();
    let alone = Program::new(replica()).unwrap();
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
    let name = match &second {
        Some(k2) => format!("seq({kernel}, {k2})"),
        None => kernel.clone(),
    };
    println!("{name} x={x}: {count} elements per stream, tpool({threads}, {name}) against {name} alone, {reps} rounds");
    println!("round | pool ns/elem | alone ns/elem | ratio pool*threads/alone | median call pool / alone [us] (each block) | pool idle share");
    for round in 0..reps {
        let mut row = Vec::new();
        for (label, program) in [("pool", &pool), ("alone", &alone)] {
            for c in &calls {
                c.lock().unwrap().clear();
            }
            let stream = stream_inputs(&registry, &kernel, x, count, &inputs, u128::MAX).unwrap();
            perfcompose_runtime::bench::evict_caches();
            let m = program.run_stream(stream).unwrap();
            let wall = m.elapsed.as_secs_f64() * 1e6;
            let mut busy = 0.0;
            let mut medians = Vec::new();
            for c in &calls {
                let mut c = c.lock().unwrap().clone();
                busy += c.iter().sum::<f64>();
                if !c.is_empty() {
                    medians.push(median(&mut c));
                }
            }
            let n = if label == "pool" { threads } else { 1 };
            row.push((wall / count as f64, medians, 1.0 - busy / (wall * n as f64)));
        }
        let (p, a) = (&row[0], &row[1]);
        let calls: Vec<String> =
            p.1.iter()
                .zip(&a.1)
                .map(|(p, a)| format!("{p:.2} / {a:.2}"))
                .collect();
        println!(
            "{round:>5} | {:>12.0} | {:>13.0} | {:>24.3} | {:>30} | {:>6.1}%",
            p.0 * 1e3,
            a.0 * 1e3,
            p.0 * threads as f64 / a.0,
            calls.join(", "),
            100.0 * p.2
        );
    }
}
