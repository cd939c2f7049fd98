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
//! gives the median time per condition and its ratio to the idle one. The measurement is
//! `perfcompose_runtime::bench::neighbour`, which `validate` runs on `inc` and `qsort`
//! before and after a suite with designs of two threads.
//!
//!     cargo run --release -p perfcompose-runtime --example co_runner [-- ROUNDS]
use std::hint::black_box;

use perfcompose_runtime::bench::neighbour::{alu, check_with, mem};
use perfcompose_runtime::kernel::{unit_call, Inputs, Registry};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    let l2 = perfcompose_runtime::bench::cache_bytes(2).unwrap_or(1 << 20) as usize;
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    let inc = registry.get("inc").expect("builtin inc");
    let qsort = registry.get("qsort").expect("builtin qsort");
    let inc_input = inc.input(65_536, &inputs).expect("inc input");
    let qsort_input = qsort.input(65_536, &inputs).expect("qsort input");
    let (inc, qsort) = (inc.op(), qsort.op());

    // The timed pieces of work, each ~10-50 ms alone.
    let timed_buf = std::sync::Mutex::new(vec![1u64; 4 * l2 / 8]);
    let alu_work = || {
        black_box(alu(20_000_000));
    };
    let mem_work = || {
        black_box(mem(&mut timed_buf.lock().expect("one user"), 20));
    };
    let inc_work = || {
        for _ in 0..20 {
            let d = inc_input.try_clone().expect("copyable");
            drop(black_box(unit_call(&inc, d)));
        }
    };
    let qsort_work = || {
        for _ in 0..4 {
            let d = qsort_input.try_clone().expect("copyable");
            drop(black_box(unit_call(&qsort, d)));
        }
    };
    let Some(check) = check_with(
        &[
            ("alu", &alu_work),
            ("mem", &mem_work),
            ("inc x=65536 (x20)", &inc_work),
            ("qsort x=65536 (x4)", &qsort_work),
        ],
        rounds,
    ) else {
        eprintln!("needs two cores");
        std::process::exit(2);
    };
    println!("timed on core 0 ({rounds} rounds); the other core idle, spinning on arithmetic (alu) or streaming through memory (mem):");
    println!(
        "{:<20} {:>10} {:>18} {:>18}",
        "work", "idle [ms]", "alu next door", "mem next door"
    );
    for w in &check.works {
        println!(
            "{:<20} {:>10.2} {:>9.2} ({:.2}x) {:>9.2} ({:.2}x)",
            w.work,
            w.idle_ms,
            w.idle_ms * w.alu,
            w.alu,
            w.idle_ms * w.mem,
            w.mem
        );
    }
}
