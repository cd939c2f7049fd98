//! Diagnostic: how much a thread slows down when the *other* core is busy. A block's unit
//! test runs it alone (or, `_parN`, next to copies of itself); a two-thread design runs
//! two blocks at once. On a virtual machine whose two virtual CPUs are the two hardware
//! threads of one physical core (common for 2-vCPU cloud guests; the guest's `lscpu` still
//! says one thread per core), or share a memory bus with busy neighbours, each block of a
//! pipeline then runs slower than its unit test said.
//!
//! Pinned to the first core, the timed thread runs a fixed piece of work — integer
//! arithmetic (`alu`, a xorshift chain), a walk over an array four times the level-2
//! cache (`mem`), or the runtime's `inc` and `qsort` kernels on one input — while the
//! second core is idle, spins on arithmetic, or streams through twice the last-level
//! cache (loading the memory bus). The conditions
//! take turns, several rounds, so a drift of the host reaches all of them; the report
//! gives the median time per condition and its ratio to the idle one.
//!
//!     cargo run --release -p perfcompose-runtime --example co_runner [-- ROUNDS]
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};

/// What the other core does meanwhile.
#[derive(Clone, Copy, Debug)]
enum Load {
    Idle,
    Alu,
    Mem,
}

fn alu(steps: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn mem(buf: &mut [u64], passes: usize) -> u64 {
    let mut s = 0u64;
    for _ in 0..passes {
        for v in buf.iter_mut().step_by(8) {
            *v = v.wrapping_add(1);
            s = s.wrapping_add(*v);
        }
    }
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 {
        eprintln!("needs two cores; this machine grants {}", cores.len());
        std::process::exit(2);
    }
    let l2 = perfcompose_runtime::bench::cache_bytes(2).unwrap_or(1 << 20) as usize;
    let llc = perfcompose_runtime::bench::last_level_cache_bytes() as usize;
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    let inc = registry.get("inc").expect("builtin inc");
    let qsort = registry.get("qsort").expect("builtin qsort");
    let inc_input = inc.input(65_536, &inputs).expect("inc input");
    let qsort_input = qsort.input(65_536, &inputs).expect("qsort input");
    let (inc, qsort) = (inc.op(), qsort.op());

    // The timed pieces of work, each ~10-50 ms alone.
    type Work<'a> = Box<dyn Fn() + 'a>;
    let mut timed_buf = vec![1u64; 4 * l2 / 8];
    let timed_buf = std::cell::RefCell::new(&mut timed_buf);
    let works: Vec<(&str, Work)> = vec![
        (
            "alu",
            Box::new(|| {
                black_box(alu(20_000_000));
            }),
        ),
        (
            "mem",
            Box::new(|| {
                black_box(mem(&mut timed_buf.borrow_mut(), 20));
            }),
        ),
        (
            "inc x=65536 (x20)",
            Box::new(|| {
                for _ in 0..20 {
                    let d = inc_input.try_clone().expect("copyable");
                    drop(black_box(unit_call(&inc, d)));
                }
            }),
        ),
        (
            "qsort x=65536 (x4)",
            Box::new(|| {
                for _ in 0..4 {
                    let d = qsort_input.try_clone().expect("copyable");
                    drop(black_box(unit_call(&qsort, d)));
                }
            }),
        ),
    ];
    let loads = [Load::Idle, Load::Alu, Load::Mem];
    let mut times = vec![vec![Vec::new(); loads.len()]; works.len()];
    let _ = core_affinity::set_for_current(cores[0]);
    for round in 0..rounds {
        for k in 0..loads.len() {
            // The order of the loads rotates every round.
            let li = (k + round) % loads.len();
            let load = loads[li];
            let stop = AtomicBool::new(false);
            std::thread::scope(|s| {
                let other = cores[1];
                let stop = &stop;
                if !matches!(load, Load::Idle) {
                    s.spawn(move || {
                        let _ = core_affinity::set_for_current(other);
                        let mut buf = vec![1u64; 2 * llc / 8];
                        while !stop.load(Ordering::Relaxed) {
                            match load {
                                Load::Alu => {
                                    black_box(alu(100_000));
                                }
                                Load::Mem => {
                                    black_box(mem(&mut buf, 1));
                                }
                                Load::Idle => {}
                            }
                        }
                    });
                    // Let the co-runner start.
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                for (wi, (_, work)) in works.iter().enumerate() {
                    work(); // untimed: caches and page tables as the timed run finds them
                    let t = Instant::now();
                    work();
                    times[wi][li].push(t.elapsed().as_secs_f64() * 1e3);
                }
                stop.store(true, Ordering::Relaxed);
            });
        }
    }
    println!("timed on core 0 ({rounds} rounds); the other core idle, spinning on arithmetic (alu) or streaming through memory (mem):");
    println!(
        "{:<20} {:>10} {:>18} {:>18}",
        "work", "idle [ms]", "alu next door", "mem next door"
    );
    for (wi, (name, _)) in works.iter().enumerate() {
        let m: Vec<f64> = times[wi].iter_mut().map(|v| median(v)).collect();
        println!(
            "{:<20} {:>10.2} {:>9.2} ({:.2}x) {:>9.2} ({:.2}x)",
            name,
            m[0],
            m[1],
            m[1] / m[0],
            m[2],
            m[2] / m[0]
        );
    }
}
