//! Diagnostic: does each core of this machine run a kernel at one speed, or switch
//! between a fast and a slow state — and how often are *all* cores fast at once?
//!
//! On a shared virtual machine a core can lose part of its throughput for seconds at a
//! time (another guest busy on the same physical core, most likely), and only for
//! kernels that lean on the core's load and store units: `inc` halves while a chain of
//! multiplies does not move. Under the minimum statistic this matters for designs of
//! several threads: a block's fastest repetition needs only its own core fast, the
//! program's needs every core fast at once. When each core is fast a fraction `p` of the
//! time, independently, all `n` cores are fast only `p^n` of it.
//!
//! One pinned thread per core calls `KERNEL` (default `inc`) at `X` elements on a warm
//! input, back to back, and counts the calls in fixed windows of wall-clock time. First
//! each core alone (the others idle), then all cores together. Per core: its fastest
//! window, the median and the 90th percentile, the share of windows within 1.3x of the
//! fastest window of any core in either phase (the fast state), and how long its fast
//! and slow spans last. Together: the share of windows in which every core was fast at
//! once, next to the product of the cores' own shares (what independent cores would
//! give).
//!
//!     cargo run --release -p perfcompose-runtime --example core_states [-- SECONDS [WINDOW_MS [X]]]
//!
//! `SECONDS` (default 20) is the together phase; each core alone gets half of it.
use std::time::Duration;

#[path = "common/args.rs"]
mod args;
use args::{arg, kernel_op};

use perfcompose_runtime::bench::states::{fast_flags, mean_span, quantile, sample_on};
use perfcompose_runtime::kernel::Registry;

fn describe(label: &str, v: &[f64], best: f64, ms: f64) -> f64 {
    let flags = fast_flags(v, best);
    let share = flags.iter().filter(|&&f| f).count() as f64 / flags.len() as f64;
    println!(
        "{label:<16} {:>10.0} {:>10.0} {:>10.0} {:>9.0}% {:>12.0} {:>12.0}",
        quantile(v, 0.0),
        quantile(v, 0.5),
        quantile(v, 0.9),
        share * 100.0,
        mean_span(&flags, true) * ms,
        mean_span(&flags, false) * ms,
    );
    share
}

fn main() {
    let (seconds, window_ms, x) = (arg(1, 20), arg(2, 100).max(1), arg(3, 4096));
    let registry = Registry::builtin();
    let (kernel, _) = kernel_op(&registry, "KERNEL", "inc");
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.is_empty() {
        eprintln!("core_states: this system does not say which cores there are");
        std::process::exit(2);
    }
    let window = Duration::from_millis(window_ms as u64);
    let ms = window_ms as f64;
    println!(
        "{kernel} x={x}, warm input, windows of {window_ms} ms; {} cores: each alone for {} s, then all together for {seconds} s",
        cores.len(),
        seconds as f64 / 2.0
    );
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "core", "fastest", "median", "p90", "fast", "fast span", "slow span"
    );
    println!(
        "{:<16} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "", "[ns/call]", "[ns/call]", "[ns/call]", "[share]", "[ms]", "[ms]"
    );
    let alone_length = Duration::from_millis(seconds as u64 * 500);
    let sampled = |on: &[core_affinity::CoreId], length| {
        sample_on(&registry, &kernel, x, on, length, window).unwrap_or_else(|e| {
            eprintln!("core_states: {e}");
            std::process::exit(2);
        })
    };
    let alone: Vec<Vec<f64>> = cores
        .iter()
        .map(|&core| sampled(&[core], alone_length).cores.remove(0))
        .collect();
    let all = sampled(&cores, Duration::from_secs(seconds as u64)).cores;
    // The fastest window of any core in either phase is the fast state of every core
    // (`CoreStates::shares` judges them so too).
    let fastest = alone
        .iter()
        .chain(&all)
        .map(|v| quantile(v, 0.0))
        .fold(f64::NAN, f64::min);
    let best = vec![fastest; cores.len()];
    for ((core, v), &b) in cores.iter().zip(&alone).zip(&best) {
        describe(&format!("{} alone", core.id), v, b, ms);
    }
    let mut product = 1.0;
    for ((core, v), &b) in cores.iter().zip(&all).zip(&best) {
        product *= describe(&format!("{} together", core.id), v, b, ms);
    }
    let every = perfcompose_runtime::bench::states::CoreStates {
        window_ms: ms,
        cores: all,
    }
    .shares(&best)
    .every;
    println!(
        "every core fast at once: {:.0}% of the windows (independent cores would give {:.0}%)",
        every * 100.0,
        product * 100.0
    );
}
