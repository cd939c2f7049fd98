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
//! window, the median and the 90th percentile, the share of windows within 1.3x of its
//! fastest window in either phase (the fast state), and how long its fast and slow spans
//! last. Together: the share of windows in which every core was fast at once, next to the
//! product of the cores' own shares (what independent cores would give).
//!
//!     cargo run --release -p perfcompose-runtime --example core_states [-- SECONDS [WINDOW_MS [X]]]
//!
//! `SECONDS` (default 20) is the together phase; each core alone gets half of it.
use std::sync::Barrier;
use std::time::{Duration, Instant};

#[path = "common/args.rs"]
mod args;
use args::{arg, kernel_op};

use perfcompose_runtime::kernel::{unit_call, Inputs, Op, Registry};
use perfcompose_runtime::plan::stream_inputs;

/// A window is in the fast state when it is within this factor of the core's fastest.
const FAST: f64 = 1.3;

fn pin(core: core_affinity::CoreId) {
    let _ = core_affinity::set_for_current(core);
}

/// Call `op` on `x` elements back to back from `start` for `length`; ns per call in each
/// window of `window` (a window with no call finished in it gets the next one's time).
fn windows(
    op: &Op,
    kernel: &str,
    x: usize,
    start: Instant,
    length: Duration,
    window: Duration,
) -> Vec<f64> {
    let registry = Registry::builtin();
    let mut data = stream_inputs(&registry, kernel, x, 1, &Inputs::default(), u128::MAX)
        .expect("checked in main")
        .pop()
        .expect("one element");
    let n = (length.as_nanos() / window.as_nanos()).max(1) as usize;
    let mut calls = vec![0u64; n];
    let mut last = start;
    let mut times = vec![0.0f64; n];
    loop {
        data = unit_call(op, data);
        let now = Instant::now();
        let i = ((now - start).as_nanos() / window.as_nanos()) as usize;
        if i >= n {
            break;
        }
        calls[i] += 1;
        times[i] += (now - last).as_nanos() as f64;
        last = now;
    }
    std::hint::black_box(data);
    let mut out = vec![f64::NAN; n];
    let mut carry = (0.0, 0u64);
    for i in (0..n).rev() {
        carry = (carry.0 + times[i], carry.1 + calls[i]);
        if carry.1 > 0 {
            out[i] = carry.0 / carry.1 as f64;
            carry = (0.0, 0);
        }
    }
    out
}

/// Quantile `q` of `v` (finite values only).
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    s[((s.len() - 1) as f64 * q).round() as usize]
}

/// Per window: is it within [`FAST`] of `best`, the core's fastest window in either phase?
/// (Against the phase's own fastest, a core slow through the whole phase would read fast.)
fn fast_flags(v: &[f64], best: f64) -> Vec<bool> {
    v.iter()
        .map(|&t| t.is_finite() && t <= best * FAST)
        .collect()
}

/// Mean length (in windows) of the runs of `state` in `flags`; 0 when there is none.
fn mean_span(flags: &[bool], state: bool) -> f64 {
    let mut spans = Vec::new();
    let mut run = 0usize;
    for &f in flags {
        if f == state {
            run += 1;
        } else if run > 0 {
            spans.push(run);
            run = 0;
        }
    }
    if run > 0 {
        spans.push(run);
    }
    if spans.is_empty() {
        0.0
    } else {
        spans.iter().sum::<usize>() as f64 / spans.len() as f64
    }
}

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
    let (kernel, op) = kernel_op(&registry, "KERNEL", "inc");
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.is_empty() {
        eprintln!("core_states: this system does not say which cores there are");
        std::process::exit(2);
    }
    // A size the kernel cannot make an input of ends here, not in a timing thread.
    if let Err(e) = stream_inputs(&registry, &kernel, x, 1, &Inputs::default(), u128::MAX) {
        eprintln!("core_states: {kernel} at x={x}: {e}");
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
    let mut alone = Vec::new();
    for &core in &cores {
        let v = std::thread::scope(|s| {
            s.spawn(|| {
                pin(core);
                windows(&op, &kernel, x, Instant::now(), alone_length, window)
            })
            .join()
            .expect("the timing thread")
        });
        alone.push(v);
    }
    let length = Duration::from_secs(seconds as u64);
    let barrier = Barrier::new(cores.len());
    let start = std::sync::OnceLock::new();
    let all: Vec<Vec<f64>> = std::thread::scope(|s| {
        let handles: Vec<_> = cores
            .iter()
            .map(|&core| {
                let (op, kernel, barrier, start) = (&op, &kernel, &barrier, &start);
                s.spawn(move || {
                    pin(core);
                    barrier.wait();
                    let t0 = *start.get_or_init(|| Instant::now() + Duration::from_millis(10));
                    while Instant::now() < t0 {
                        std::hint::spin_loop();
                    }
                    windows(op, kernel, x, t0, length, window)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a timing thread"))
            .collect()
    });
    // Each core's fastest window over both phases is its fast state.
    let best: Vec<f64> = alone
        .iter()
        .zip(&all)
        .map(|(a, b)| quantile(a, 0.0).min(quantile(b, 0.0)))
        .collect();
    for ((core, v), &b) in cores.iter().zip(&alone).zip(&best) {
        describe(&format!("{} alone", core.id), v, b, ms);
    }
    let mut product = 1.0;
    for ((core, v), &b) in cores.iter().zip(&all).zip(&best) {
        product *= describe(&format!("{} together", core.id), v, b, ms);
    }
    let flags: Vec<Vec<bool>> = all
        .iter()
        .zip(&best)
        .map(|(v, &b)| fast_flags(v, b))
        .collect();
    let n = flags.iter().map(Vec::len).min().unwrap_or(0);
    let every = (0..n).filter(|&i| flags.iter().all(|f| f[i])).count() as f64 / n.max(1) as f64;
    println!(
        "every core fast at once: {:.0}% of the windows (independent cores would give {:.0}%)",
        every * 100.0,
        product * 100.0
    );
}
