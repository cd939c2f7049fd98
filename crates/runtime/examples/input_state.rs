//! Diagnostic: how the state of a block's input (where its array was last touched)
//! changes the block's time, next to the same block inside programs.
//!
//! `cargo run --release -p perfcompose-runtime --example input_state -- [KERNEL] [X,...]`
//!
//! Per size it times one call of the kernel with its input
//! - `copied`:  copied just before the timed batch (the unit test before this was fixed),
//! - `evicted`: taken from a pool of distinct inputs three times larger than the
//!   last-level cache, untouched since it was made (a pre-generated stream),
//! - `handoff`: copied by another thread and handed over through a channel just before
//!   (a pipeline stage behind a faster producer),
//! - `hot`:     just processed by the same kernel on the same thread (second block of a
//!   `seq`),
//!
//! and the programs `k`, `seq(k, nop)`, `seq(k, k)` and `nop` per element. Every time
//! comes with the run-queue wait of this process's threads during the measurement
//! (`/proc/self/task/*/schedstat`): time they were ready to run but another process had
//! the core — the direct measure of interference on a shared machine.

use std::hint::black_box;
use std::time::Instant;

use crossbeam_channel::bounded;
use perfcompose_runtime::data::Data;
use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{Config, Plan};

#[path = "common/schedstat.rs"]
mod schedstat;
use schedstat::rq_wait_ns;

const REPS: usize = 15;

fn summary(name: &str, x: usize, v: &mut [(f64, f64)]) {
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let med = v[v.len() / 2];
    println!(
        "{x:>7} {name:<14} min {:>10.1}  median {:>10.1} ns   rq-wait at median {:>5.1}%",
        v[0].0,
        med.0,
        100.0 * med.1
    );
}

fn ints(d: &Data) -> usize {
    match d {
        Data::Ints(v) => v.len(),
        _ => 0,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let kernel = args.get(1).cloned().unwrap_or_else(|| "inc".into());
    let sizes: Vec<usize> = args
        .get(2)
        .map(|s| s.split(',').map(|v| v.parse().unwrap()).collect())
        .unwrap_or_else(|| vec![2048, 8192, 32768, 65536, 131072, 262144]);
    let mut reg = Registry::builtin();
    // `spin`: busy for x ns without touching memory — what a hand-off costs at a given
    // element rate, free of cache effects.
    reg.register_block("spin", "busy for x ns", |d| {
        let ns = ints(&d) as u128;
        let t = Instant::now();
        while t.elapsed().as_nanos() < ns {
            std::hint::spin_loop();
        }
        d
    });
    let k = reg.get(&kernel).unwrap().clone();
    let op = k.op();
    let inputs = Inputs::default();
    for &x in &sizes {
        let bytes = 4 * x;
        let make = |v: u64| k.input(x, &inputs.variant(v)).unwrap();
        let template = make(0);
        // Batch so that one sample is ≥ 0.5 ms.
        let t0 = Instant::now();
        black_box(unit_call(&op, template.try_clone().unwrap()));
        let one = t0.elapsed().as_secs_f64();
        let batch = ((5e-4 / one).ceil() as usize).clamp(1, 2000);

        // copied
        let mut res = Vec::new();
        for _ in 0..REPS {
            let prepared: Vec<Data> = (0..batch).map(|_| template.try_clone().unwrap()).collect();
            let w0 = rq_wait_ns();
            let t = Instant::now();
            let outs: Vec<Data> = prepared.into_iter().map(|d| unit_call(&op, d)).collect();
            let el = t.elapsed().as_nanos() as f64;
            res.push((el / batch as f64, (rq_wait_ns() - w0) as f64 / el));
            drop(outs);
        }
        summary("copied", x, &mut res);

        // evicted: a pool 3x the LLC, cycled.
        let llc = perfcompose_runtime::bench::last_level_cache_bytes() as usize;
        let pool_n = (3 * llc / bytes).max(batch + 1);
        let mut pool: Vec<Data> = (0..pool_n).map(|i| make(i as u64 % 64)).collect::<Vec<_>>();
        let mut res = Vec::new();
        let mut next = 0;
        for _ in 0..REPS {
            let w0 = rq_wait_ns();
            let t = Instant::now();
            for _ in 0..batch {
                let d = std::mem::replace(&mut pool[next], Data::Counts(Vec::new()));
                pool[next] = unit_call(&op, d);
                next = (next + 1) % pool_n;
            }
            let el = t.elapsed().as_nanos() as f64;
            res.push((el / batch as f64, (rq_wait_ns() - w0) as f64 / el));
        }
        summary("evicted", x, &mut res);
        drop(pool);

        // handoff: another thread copies and sends.
        let mut res = Vec::new();
        std::thread::scope(|s| {
            let (tx, rx) = bounded::<Vec<Data>>(1);
            let (ack_tx, ack_rx) = bounded::<()>(1);
            let tpl = &template;
            s.spawn(move || {
                for _ in 0..REPS {
                    let b: Vec<Data> = (0..batch).map(|_| tpl.try_clone().unwrap()).collect();
                    tx.send(b).unwrap();
                    ack_rx.recv().unwrap();
                }
            });
            for _ in 0..REPS {
                let b = rx.recv().unwrap();
                let w0 = rq_wait_ns();
                let t = Instant::now();
                let outs: Vec<Data> = b.into_iter().map(|d| unit_call(&op, d)).collect();
                let el = t.elapsed().as_nanos() as f64;
                res.push((el / batch as f64, (rq_wait_ns() - w0) as f64 / el));
                drop(outs);
                ack_tx.send(()).unwrap();
            }
        });
        summary("handoff", x, &mut res);

        // hot: processed once untimed by the same kernel, then timed.
        let mut res = Vec::new();
        for _ in 0..REPS {
            let mut el = 0.0;
            let w0 = rq_wait_ns();
            for _ in 0..batch {
                let d = unit_call(&op, template.try_clone().unwrap());
                let t = Instant::now();
                let o = unit_call(&op, d);
                el += t.elapsed().as_nanos() as f64;
                drop(black_box(o));
            }
            res.push((el / batch as f64, 0.0 * w0 as f64));
        }
        summary("hot", x, &mut res);

        // programs
        for term in [
            kernel.clone(),
            format!("seq({kernel}, nop)"),
            format!("seq({kernel}, {kernel})"),
            format!("pipe({kernel}, nop)"),
            format!("pipe(nop, {kernel})"),
            format!("tpool(2, {kernel})"),
            "nop".to_string(),
        ] {
            let plan = parse(&term);
            let cfg = Config {
                pin: std::env::var_os("PIN").is_some(),
                capacity: std::env::var("CAP")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(64),
                ..Config::default()
            };
            let built = plan.build(&reg, cfg).unwrap();
            let probe = stream_inputs(&reg, &kernel, x, 16, &inputs, u128::MAX).unwrap();
            let m = built.program.run_stream(probe).unwrap();
            let per = m.elapsed.as_secs_f64() / 16.0;
            let count = ((0.02 / per).ceil() as usize).clamp(16, 4096);
            let mut res = Vec::new();
            for _ in 0..REPS.min(9) {
                let s = stream_inputs(&reg, &kernel, x, count, &inputs, u128::MAX).unwrap();
                assert_eq!(ints(&s[0]), x);
                let w0 = rq_wait_ns();
                let m = built.program.run_stream(s).unwrap();
                let el = m.elapsed.as_nanos() as f64;
                res.push((el / count as f64, (rq_wait_ns() - w0) as f64 / el));
            }
            summary(&format!("P {term}"), x, &mut res);
        }
        println!();
    }
}

fn parse(term: &str) -> Plan {
    perfcompose_runtime::validate::parse_plan("<term>", term)
        .unwrap()
        .1
}
