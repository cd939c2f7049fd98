//! Diagnostic: does a task pool's block run slower next to a worker running the whole
//! replica than next to one running the same block? `validate` times the blocks of
//! `tpool(2, seq(inc, inc))` as `inc_par2` (the timed thread and its sibling both run
//! the cold `inc` on one shared stream) and `inc_warm_par2`; the pool's workers each run
//! `inc` and then `inc` again on every element they take.
//!
//! Two pinned threads take a cold stream (fresh copies, out of the caches) from one
//! queue. Only the first thread's cold calls are timed, each on its own, with nothing
//! shared between the threads but the queue:
//!
//! - `block`: both threads run `KERNEL` on each element (the loaded unit test);
//! - `replica`: both run `KERNEL` and then `KERNEL2` on each element (the pool's
//!   workers); the first thread's `KERNEL2` calls are timed too.
//!
//! The two alternate, round by round. Per round: ns per cold call in each, their ratio,
//! and ns per `KERNEL2` call in the replica.
//!
//!     cargo run --release -p perfcompose-runtime --example pool_replica [-- X [ROUNDS]]
//!
//! `KERNEL` and `KERNEL2` default to `inc`.
use std::sync::Barrier;
use std::time::Instant;

#[path = "common/args.rs"]
mod args;
use args::{arg, kernel_op};

use crossbeam_channel::Receiver;
use perfcompose_runtime::kernel::{unit_call, Inputs, Op, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::Data;

fn pin(core: usize) {
    if let Some(ids) = core_affinity::get_core_ids().filter(|c| !c.is_empty()) {
        let _ = core_affinity::set_for_current(ids[core % ids.len()]);
    }
}

/// Take from `queue` until it is empty: run `first`, then `second` if given. Returns the
/// total ns of the `first` calls and of the `second` ones, and the elements taken.
fn worker(queue: &Receiver<Data>, first: &Op, second: Option<&Op>) -> (u128, u128, u64) {
    let (mut a, mut b, mut n) = (0u128, 0u128, 0u64);
    while let Ok(d) = queue.try_recv() {
        let t = Instant::now();
        let d = unit_call(first, d);
        let t1 = Instant::now();
        a += (t1 - t).as_nanos();
        if let Some(op) = second {
            let d = unit_call(op, d);
            b += t1.elapsed().as_nanos();
            drop(std::hint::black_box(d));
        } else {
            drop(std::hint::black_box(d));
        }
        n += 1;
    }
    (a, b, n)
}

fn main() {
    let (x, rounds) = (arg(1, 2048), arg(2, 7));
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    let (k1, op1) = kernel_op(&registry, "KERNEL", "inc");
    let (k2, op2) = kernel_op(&registry, "KERNEL2", "inc");
    // About 20 ms of cold calls per thread, as a repetition of `validate`.
    let probe = {
        let d = stream_inputs(&registry, &k1, x, 1, &inputs, u128::MAX).unwrap();
        let t = Instant::now();
        drop(unit_call(&op1, d.into_iter().next().unwrap()));
        t.elapsed().as_secs_f64()
    };
    let count = ((2.0 * 0.02 / probe).ceil() as usize).clamp(32, 100_000);
    println!("{k1} x={x}: streams of {count} cold elements shared by two pinned threads, {rounds} rounds");
    println!("round | {k1} next to {k1} [ns] | {k1} next to seq({k1}, {k2}) [ns] | ratio | {k2} in the replica [ns]");
    for round in 0..rounds {
        let mut cold = [0.0f64; 2];
        let mut after = 0.0;
        for (i, replica) in [false, true].into_iter().enumerate() {
            let stream = stream_inputs(&registry, &k1, x, count, &inputs, u128::MAX).unwrap();
            let (tx, rx) = crossbeam_channel::bounded::<Data>(count);
            for d in stream {
                let _ = tx.send(d);
            }
            perfcompose_runtime::bench::evict_caches();
            let second = replica.then_some(&op2);
            let start = Barrier::new(2);
            let (a, b, n) = std::thread::scope(|s| {
                let (start, op1) = (&start, &op1);
                let rx2 = rx.clone();
                s.spawn(move || {
                    pin(1);
                    start.wait();
                    worker(&rx2, op1, second)
                });
                let rx = &rx;
                let timed = s.spawn(move || {
                    pin(0);
                    start.wait();
                    worker(rx, op1, second)
                });
                timed.join().unwrap()
            });
            cold[i] = a as f64 / n.max(1) as f64;
            if replica {
                after = b as f64 / n.max(1) as f64;
            }
        }
        println!(
            "{round:>5} | {:>18.0} | {:>28.0} | {:>5.3} | {:>10.0}",
            cold[0],
            cold[1],
            cold[1] / cold[0],
            after
        );
    }
}
