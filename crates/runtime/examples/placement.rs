//! Diagnostic: where the scheduler puts a design's threads while it runs. A pipeline of
//! two equal stages on two cores should run its stages side by side; if the OS keeps both
//! on one core, the pipeline takes the *sum* of its stages per element, not the larger.
//!
//! Per repetition (a stream timed as `validate` times it, `bench::ProgramSampler`), a
//! sampling thread reads `/proc/self/task/*/stat` every 500 µs and notes, for the
//! runtime's worker threads, which are running or ready (`R`) and on which CPU they last
//! ran. Printed per repetition: ns per element, the share of samples with two or more
//! workers ready at once, the share of those where two of them were on the same CPU, and
//! the threads' run-queue wait as a share of the run (`/proc/self/task/*/schedstat`). The
//! sampler costs a few microseconds per sample on a core of its own choosing.
//!
//!     cargo run --release -p perfcompose-runtime --example placement -- TERM X [REPS]
//!
//! `PIN=1` pins the workers (`Config { pin: true }`). Exits with status 2 on bad
//! arguments.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfcompose_runtime::bench::{ProgramSampler, Repeated};
use perfcompose_runtime::kernel::{Inputs, Registry};
use perfcompose_runtime::{Config, WORKER_THREAD_NAME};

#[path = "common/schedstat.rs"]
mod schedstat;
use schedstat::rq_wait_ns;

fn fail(msg: &str) -> ! {
    eprintln!("placement: {msg}");
    std::process::exit(2);
}

/// `(state, cpu)` of every worker thread of this process now.
fn workers() -> Vec<(char, u32)> {
    let mut out = Vec::new();
    let name = &WORKER_THREAD_NAME[..WORKER_THREAD_NAME.len().min(15)];
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(s) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ...`: the name may hold spaces, so split at the last ')'.
        let (Some(open), Some(close)) = (s.find('('), s.rfind(')')) else {
            continue;
        };
        if &s[open + 1..close] != name {
            continue;
        }
        let fields: Vec<&str> = s[close + 1..].split_whitespace().collect();
        // Field 3 is the state, field 39 the CPU it last ran on.
        let state = fields.first().and_then(|f| f.chars().next());
        let cpu = fields.get(36).and_then(|f| f.parse().ok());
        if let (Some(state), Some(cpu)) = (state, cpu) {
            out.push((state, cpu));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 4 {
        fail("usage: placement TERM X [REPS]");
    }
    let x: usize = args[2]
        .parse()
        .ok()
        .filter(|&x| x > 0)
        .unwrap_or_else(|| fail(&format!("size {:?}: a positive integer", args[2])));
    let reps: usize = args
        .get(3)
        .map(|r| {
            r.parse()
                .ok()
                .filter(|&r| r > 0)
                .unwrap_or_else(|| fail(&format!("repetitions {r:?}: a positive integer")))
        })
        .unwrap_or(8);
    let reg = Registry::builtin();
    let plan = match perfcompose_runtime::validate::parse_plan("<term>", &args[1]) {
        Ok((_, plan)) => plan,
        Err(e) => fail(&e.render()),
    };
    let pin = std::env::var("PIN").is_ok_and(|v| v == "1");
    let config = Config {
        pin,
        ..Config::default()
    };
    let built = plan
        .build(&reg, config)
        .unwrap_or_else(|e| fail(&e.to_string()));
    let inputs = Inputs::default();
    let mut program = ProgramSampler::new(&built, &reg, x, &inputs, u128::MAX)
        .unwrap_or_else(|e| fail(&e.to_string()));
    println!(
        "{} at x = {x}, {} elements per stream, workers {}",
        args[1],
        program.batch(),
        if pin { "pinned" } else { "not pinned" }
    );
    println!("rep   ns/element   2+ ready   same CPU   rq-wait   CPUs of ready workers");
    for rep in 0..reps {
        let stop = AtomicBool::new(false);
        let (wait0, t0) = (rq_wait_ns(), Instant::now());
        let (ns, samples) = std::thread::scope(|s| {
            let sampler = s.spawn(|| {
                let mut samples = Vec::new();
                while !stop.load(Ordering::Acquire) {
                    samples.push(workers());
                    std::thread::sleep(Duration::from_micros(500));
                }
                samples
            });
            let ns = program.one().unwrap_or_else(|e| fail(&e.to_string()));
            stop.store(true, Ordering::Release);
            (ns, sampler.join().expect("the sampler does not panic"))
        });
        let wall = t0.elapsed().as_nanos().max(1) as f64;
        let wait = (rq_wait_ns() - wait0) as f64 / wall;
        let (mut busy, mut shared) = (0usize, 0usize);
        let mut cpus: BTreeMap<u32, usize> = BTreeMap::new();
        for s in &samples {
            let ready: Vec<u32> = s.iter().filter(|w| w.0 == 'R').map(|w| w.1).collect();
            for c in &ready {
                *cpus.entry(*c).or_default() += 1;
            }
            if ready.len() >= 2 {
                busy += 1;
                let mut sorted = ready.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() < ready.len() {
                    shared += 1;
                }
            }
        }
        let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
        println!(
            "{rep:>3} {ns:>12.0} {:>9.0}% {:>9.0}% {:>8.1}%   {cpus:?} ({} samples)",
            pct(busy, samples.len()),
            pct(shared, busy),
            100.0 * wait,
            samples.len()
        );
    }
}
