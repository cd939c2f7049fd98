//! Diagnostic: where a worker of `tpool(2, KERNEL)` spends its time. Each call is timed on
//! its worker (thread-local sums, no shared state): the time inside calls, and the gap
//! from the end of one call to the start of the next on the same worker (taking the next
//! element and handing the result on). The same stream runs through `KERNEL` alone, and
//! through two pinned threads without the runtime: each on its dealt share (element i to
//! thread i mod 2) and both taking from one queue filled beforehand. The "collector" figure
//! is the calling thread's CPU time over `run_stream` per element (queues, threads,
//! feeding and collecting, inside the clock or not).
//!
//! `cargo run --release -p perfcompose-runtime --example pool_gaps -- [KERNEL [X [COUNT [REPS]]]]`
use std::cell::Cell;
use std::sync::Mutex;
use std::time::Instant;

use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, tpool, Config, Data, Program};

/// One worker's sums: time inside calls, gaps between calls, calls, gaps.
#[derive(Clone, Copy, Default)]
struct Sums {
    inside: f64,
    gap: f64,
    calls: u64,
    gaps: u64,
    last_end: Option<Instant>,
}

/// A worker's sums, handed to [`TOTALS`] when its thread ends (the runtime's workers end
/// with the run, before `run_stream` returns).
#[derive(Default)]
struct Reporter(Cell<Sums>);

impl Drop for Reporter {
    fn drop(&mut self) {
        let s = self.0.get();
        if s.calls > 0 {
            TOTALS.lock().unwrap().push(s);
        }
    }
}

thread_local! {
    static SUMS: Reporter = Reporter::default();
}

static TOTALS: Mutex<Vec<Sums>> = Mutex::new(Vec::new());

/// Call `op` on every input in turn, keeping the outputs: mean ns inside a call, mean
/// gap between calls, and how many calls.
fn time_each(
    op: &perfcompose_runtime::kernel::Op,
    inputs: impl IntoIterator<Item = Data>,
) -> (f64, f64, usize) {
    let mut outs = Vec::new();
    let (mut inside, mut gap) = (0.0, 0.0);
    let mut last: Option<Instant> = None;
    for d in inputs {
        let t = Instant::now();
        if let Some(l) = last {
            gap += (t - l).as_secs_f64() * 1e9;
        }
        outs.push(unit_call(op, d));
        let e = Instant::now();
        inside += (e - t).as_secs_f64() * 1e9;
        last = Some(e);
    }
    let n = outs.len().max(1) as f64;
    (inside / n, gap / n, outs.len())
}

/// Time this thread has run on a CPU (`/proc/thread-self/schedstat`, first field), ns.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args.get(1).cloned().unwrap_or_else(|| "inc".into());
    let x: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let count: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(16384);
    let reps: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(5);
    let registry = Registry::builtin();
    let op = registry.get(&kernel).unwrap().op();
    let timed = move |d: Data| {
        let t = Instant::now();
        let out = unit_call(&op, d);
        let e = Instant::now();
        SUMS.with(|r| {
            let mut s = r.0.get();
            s.inside += (e - t).as_secs_f64() * 1e9;
            s.calls += 1;
            if let Some(prev) = s.last_end {
                s.gap += (t - prev).as_secs_f64() * 1e9;
                s.gaps += 1;
            }
            s.last_end = Some(e);
            r.0.set(s);
        });
        out
    };
    let config = Config {
        pin: true,
        ..Config::default()
    };
    let pool =
        Program::with_config(tpool(2, block(&kernel, timed.clone())), config.clone()).unwrap();
    let alone = Program::with_config(block(&kernel, timed), config).unwrap();
    let inputs = Inputs::default();
    println!("{kernel} x={x}, {count} elements: ns per element; per worker call: inside / gap before the next call (means over the calls)");
    let op_dealt = registry.get(&kernel).unwrap().op();
    for _ in 0..reps {
        {
            // Two pinned threads, each calling the kernel on its dealt share of one stream
            // (element i to thread i mod 2), no queues: the `_par2` unit test's shape.
            let s = stream_inputs(&registry, &kernel, x, count, &inputs, u128::MAX).unwrap();
            perfcompose_runtime::bench::evict_caches();
            let mut shares: Vec<Vec<Data>> = vec![Vec::new(), Vec::new()];
            for (i, d) in s.into_iter().enumerate() {
                shares[i % 2].push(d);
            }
            let ids = core_affinity::get_core_ids().unwrap();
            let barrier = std::sync::Barrier::new(2);
            let t0 = Instant::now();
            let res: Vec<(f64, f64)> = std::thread::scope(|sc| {
                let hs: Vec<_> = shares
                    .into_iter()
                    .enumerate()
                    .map(|(i, share)| {
                        let (op, barrier, id) = (op_dealt.clone(), &barrier, ids[i % ids.len()]);
                        sc.spawn(move || {
                            core_affinity::set_for_current(id);
                            barrier.wait();
                            let (inside, gap, _) = time_each(&op, share);
                            (inside, gap)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let wall = t0.elapsed().as_nanos() as f64 / count as f64;
            println!(
                "    dealt: {wall:6.0} ns/elem (x2 = {:6.0}) | inside {:6.0} gap {:5.0} (thread means)",
                wall * 2.0,
                (res[0].0 + res[1].0) / 2.0,
                (res[0].1 + res[1].1) / 2.0
            );
        }
        {
            // The same two pinned threads taking the elements from one shared queue filled
            // beforehand, as a pool's workers do, but keeping their outputs.
            let s = stream_inputs(&registry, &kernel, x, count, &inputs, u128::MAX).unwrap();
            let (tx, rx) = crossbeam_channel::bounded::<Data>(count);
            for d in s {
                tx.send(d).unwrap();
            }
            drop(tx);
            perfcompose_runtime::bench::evict_caches();
            let ids = core_affinity::get_core_ids().unwrap();
            let barrier = std::sync::Barrier::new(2);
            let t0 = Instant::now();
            let res: Vec<(f64, f64, usize)> = std::thread::scope(|sc| {
                let hs: Vec<_> = (0..2)
                    .map(|i| {
                        let (op, barrier, id, rx) =
                            (op_dealt.clone(), &barrier, ids[i % ids.len()], rx.clone());
                        sc.spawn(move || {
                            core_affinity::set_for_current(id);
                            barrier.wait();
                            time_each(&op, rx.iter())
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let wall = t0.elapsed().as_nanos() as f64 / count as f64;
            println!(
                "   queued: {wall:6.0} ns/elem (x2 = {:6.0}) | inside {:6.0} gap {:5.0} (thread means; {} / {} elements)",
                wall * 2.0,
                (res[0].0 + res[1].0) / 2.0,
                (res[0].1 + res[1].1) / 2.0,
                res[0].2,
                res[1].2
            );
        }
        for (name, p, w) in [("alone", &alone, 1.0), ("tpool(2)", &pool, 2.0)] {
            TOTALS.lock().unwrap().clear();
            let s = stream_inputs(&registry, &kernel, x, count, &inputs, u128::MAX).unwrap();
            perfcompose_runtime::bench::evict_caches();
            let cpu0 = thread_cpu_ns();
            let m = p.run_stream(s).unwrap();
            let collector = (thread_cpu_ns() - cpu0) as f64 / count as f64;
            let per = m.elapsed.as_nanos() as f64 / count as f64;
            // A worker's sums arrive from its thread-local destructor, which may run just
            // after the run has joined the thread: wait (1 s at most) for every worker's.
            let t = Instant::now();
            while TOTALS.lock().unwrap().len() < w as usize && t.elapsed().as_secs() < 1 {
                std::thread::yield_now();
            }
            let tot = TOTALS.lock().unwrap().clone();
            let (inside, gap, n, ng) = tot.iter().fold((0.0, 0.0, 0, 0), |a, b| {
                (a.0 + b.inside, a.1 + b.gap, a.2 + b.calls, a.3 + b.gaps)
            });
            println!(
                "{name:>9}: {per:6.0} ns/elem (x{w} = {:6.0}) | inside {:6.0} gap {:5.0} over {n} calls | collector {collector:4.0} ns/elem on the CPU",
                per * w,
                inside / n.max(1) as f64,
                gap / ng.max(1) as f64
            );
        }
    }
}
