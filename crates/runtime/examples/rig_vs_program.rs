//! Diagnostic: `pipe(A, B)` as a program next to its stage rig and a hand-written
//! pipeline, repetition by repetition in turn, with the same lightly timed blocks in all.
//!
//! `cargo run --release -p perfcompose-runtime --example rig_vs_program -- A B X REPS [GROUP]`
//!
//! Per round, one repetition of each:
//! - the program (`ProgramSampler`, workers pinned, as `validate` measures a design);
//! - the stage rig of `A` (`KernelSampler` under the stage conditions `validate` gives
//!   the first stage, `A_stage1_of_A_then_B`);
//! - a hand-written pipeline on `crossbeam-channel` (two threads pinned to the first two
//!   cores, a queue of the runtime's capacity between them, both started at a barrier
//!   after the stream is made and the caches evicted, the first starting the clock)
//!   whose first stage calls `A` on `GROUP` elements (default 1) back to back before it
//!   hands them on: the stage rig timed its stages that way until 2026-11-29.
//!
//! The blocks `A` and `B` (registry names) are wrapped so that each call adds its time
//! to a counter (two clock readings and two atomic additions per call). Printed per
//! repetition: ns per element of the program (its wall time over its elements) and each
//! stage's mean call in it; the rig's slower stage (the larger of its stages' mean calls
//! in that repetition) and each stage's; the hand-written pipeline's ns per element and
//! each stage's. Then the minimum of each column. Where the first stage's calls are
//! slower in the program than in a pipeline that groups them, handing elements on one at
//! a time is what slows them (docs/validation.md, "The stage rig hands on one element at
//! a time"). Exits with status 2 on bad arguments.

#[path = "common/timed.rs"]
mod timed;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, Sender};
use perfcompose_runtime::bench::{
    self, Conditions, KernelSampler, ProgramSampler, Repeated, Sampling, Stage,
};
use perfcompose_runtime::kernel::{Inputs, Op, Registry};
use perfcompose_runtime::{Config, Data};

fn fail(m: &str) -> ! {
    eprintln!("rig_vs_program: {m}");
    std::process::exit(2)
}

/// Time and count of the calls of one block since the last [`Counter::take`].
#[derive(Default)]
struct Counter {
    ns: AtomicU64,
    calls: AtomicU64,
}

impl Counter {
    /// ns per call since the last take, and start again.
    fn take(&self) -> f64 {
        let ns = self.ns.swap(0, Ordering::Relaxed);
        let calls = self.calls.swap(0, Ordering::Relaxed).max(1);
        ns as f64 / calls as f64
    }
}

type Block = Arc<dyn Fn(Data) -> Data + Send + Sync>;

/// The hand-written pipeline: ns per element of `stream` through `first` then `second`,
/// the first stage calling `group` elements back to back before it hands them on.
fn hand(stream: Vec<Data>, (first, second): (&Block, &Block), group: usize) -> f64 {
    let n = stream.len().max(1);
    let (tx, rx): (Sender<Data>, Receiver<Data>) = bounded(Config::default().capacity);
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let (c0, c1) = (cores.first().copied(), cores.get(1).copied());
    // The first stage starts the clock: the caller, sharing a core with the two pinned
    // stages, could be scheduled late after the barrier.
    let start = std::sync::Barrier::new(2);
    let start = &start;
    let (t0, end) = std::thread::scope(|scope| {
        let head = scope.spawn(move || {
            if let Some(c) = c0 {
                core_affinity::set_for_current(c);
            }
            start.wait();
            let t0 = Instant::now();
            let mut done = Vec::with_capacity(group);
            let mut it = stream.into_iter();
            loop {
                done.extend(it.by_ref().take(group).map(|d| first(d)));
                if done.is_empty() {
                    break;
                }
                for d in done.drain(..) {
                    if tx.send(d).is_err() {
                        return t0;
                    }
                }
            }
            t0
        });
        let last = scope.spawn(move || {
            if let Some(c) = c1 {
                core_affinity::set_for_current(c);
            }
            start.wait();
            let kept: Vec<Data> = rx.iter().map(|d| second(d)).collect();
            let end = Instant::now();
            drop(kept);
            end
        });
        let t0 = head
            .join()
            .expect("the hand-written pipeline's first stage");
        (
            t0,
            last.join().expect("the hand-written pipeline's last stage"),
        )
    });
    end.saturating_duration_since(t0).as_nanos() as f64 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(5..=6).contains(&args.len()) {
        fail("usage: rig_vs_program A B X REPS [GROUP]");
    }
    let number = |i: usize, what: &str| -> usize {
        args[i]
            .parse()
            .ok()
            .filter(|&v| v > 0)
            .unwrap_or_else(|| fail(&format!("{what} {:?}: a positive integer", args[i])))
    };
    let (x, reps) = (number(3, "X"), number(4, "REPS"));
    let group = if args.len() == 6 {
        number(5, "GROUP")
    } else {
        1
    };
    bench::keep_freed_memory();
    let builtin = Registry::builtin();
    let mut reg = builtin.clone();
    let names = ["s1", "s2"];
    let counters: Vec<Arc<Counter>> = names.iter().map(|_| Arc::default()).collect();
    for (i, name) in names.iter().enumerate() {
        let inner = builtin
            .get(&args[1 + i])
            .unwrap_or_else(|e| fail(&e.to_string()))
            .clone();
        let c = counters[i].clone();
        reg.register(Arc::new(timed::Timed {
            name: name.to_string(),
            inner,
            record: Arc::new(move |ns| {
                c.ns.fetch_add(ns, Ordering::Relaxed);
                c.calls.fetch_add(1, Ordering::Relaxed);
            }),
        }));
    }
    let plan = match perfcompose_runtime::validate::parse_plan("<term>", "pipe(s1, s2)") {
        Ok((_, plan)) => plan,
        Err(e) => fail(&e.render()),
    };
    let config = Config {
        pin: true,
        ..Config::default()
    };
    let built = plan
        .build(&reg, config)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let inputs = Inputs::default();
    let sampling = Sampling::quick();
    let mut program = ProgramSampler::new(&built, &reg, x, &inputs, u128::MAX)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let how = Conditions {
        stage: Some(Stage {
            index: 0,
            kernels: names.iter().map(|s| s.to_string()).collect(),
        }),
        ..Conditions::default()
    };
    let mut rig = KernelSampler::for_block(&reg, "s1", x, &inputs, &sampling, u128::MAX, how)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let blocks: Vec<Block> = names
        .iter()
        .map(|n| match reg.get(n).map(|k| k.op()) {
            Ok(Op::Block { f, .. }) => f,
            _ => fail(&format!("`{}` is not a sequential block", args[1])),
        })
        .collect();
    let source = builtin
        .get(&args[1])
        .unwrap_or_else(|e| fail(&e.to_string()))
        .clone();
    let templates: Vec<Data> = (0..16)
        .map(|v| {
            source
                .input(x, &inputs.variant(v))
                .unwrap_or_else(|e| fail(&e.to_string()))
        })
        .collect();
    println!(
        "pipe({}, {}) x = {x}: {} elements per repetition of the program, {} of the rig, hand-written pipeline's first stage in groups of {group}",
        args[1],
        args[2],
        program.batch(),
        rig.batch()
    );
    println!("rep | program: per element, stage 1, stage 2 | rig: slower stage, stage 1, stage 2 | hand-written: per element, stage 1, stage 2");
    let mut rows: Vec<[f64; 9]> = Vec::new();
    // Two warm-up rounds, then REPS.
    for i in 0..reps + 2 {
        for c in &counters {
            c.take();
        }
        let p = program.one().unwrap_or_else(|e| fail(&e.to_string()));
        let (p1, p2) = (counters[0].take(), counters[1].take());
        rig.one().unwrap_or_else(|e| fail(&e.to_string()));
        let (r1, r2) = (counters[0].take(), counters[1].take());
        let stages = rig.take_stages();
        let slower = stages
            .last()
            .map_or(0.0, |row| row.iter().copied().fold(0.0, f64::max));
        let stream: Vec<Data> = (0..program.batch() as usize)
            .map(|k| {
                templates[k % templates.len()]
                    .try_clone()
                    .unwrap_or_else(|| fail("the input cannot be copied"))
            })
            .collect();
        bench::evict_caches();
        let h = hand(stream, (&blocks[0], &blocks[1]), group);
        let (h1, h2) = (counters[0].take(), counters[1].take());
        if i >= 2 {
            let row = [p, p1, p2, slower, r1, r2, h, h1, h2];
            println!("{:3} | {}", i - 2, columns(&row));
            rows.push(row);
        }
    }
    let min: Vec<f64> = (0..9)
        .map(|k| rows.iter().map(|r| r[k]).fold(f64::INFINITY, f64::min))
        .collect();
    println!("min | {}", columns(&min));
}

fn columns(v: &[f64]) -> String {
    v.chunks(3)
        .map(|c| format!("{:7.0} {:7.0} {:7.0}", c[0], c[1], c[2]))
        .collect::<Vec<_>>()
        .join(" | ")
}
