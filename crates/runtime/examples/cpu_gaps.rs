//! Diagnostic: how much of the time each core is taken away from a thread that never
//! blocks. One thread per core, pinned, reads the clock in a tight loop for a few
//! seconds; a jump between two readings longer than the threshold is time the thread
//! did not run (an interrupt, the guest scheduler, or — in a virtual machine — the host
//! not running that virtual CPU). In the spirit of `sysjitter`/`hwlatdetect`.
//!
//! Then the wake-up of a thread that sleeps: a thread pinned to the first core sends a
//! timestamp through a channel to a thread pinned to the second, which blocks on the
//! receive, after the receiver has been idle for a while; the delay from send to receive
//! is what a task pool worker or a pipeline stage pays to start on an element. On bare
//! metal it is microseconds; on a virtual machine whose idle virtual CPU the host gives
//! away, it can be far more.
//!
//! Run it next to a validation to tell a machine that can reproduce a program within a
//! few percent from one that cannot: a two-thread design loses the gaps of *either*
//! core, and a gap of hundreds of microseconds in one worker holds up a MapReduce job or
//! a pipeline stage that much.
//!
//!     cargo run --release -p perfcompose-runtime --example cpu_gaps [-- SECONDS [THRESHOLD_US]]
use std::time::{Duration, Instant};

/// Wake-ups measured per idle period.
const WAKES: usize = 200;

/// Median, 90th percentile and largest of `v` (sorted in place).
fn quantiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |f: f64| {
        v.get(((v.len() as f64 - 1.0) * f).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    (q(0.5), q(0.9), q(1.0))
}

/// Send-to-receive delays (µs) of a receiver that blocked for about `idle` before each.
fn wake_delays(cores: &[core_affinity::CoreId], idle: Duration) -> Vec<f64> {
    let (tx, rx) = crossbeam_channel::bounded::<Instant>(1);
    let (back_tx, back_rx) = crossbeam_channel::bounded::<f64>(WAKES);
    std::thread::scope(|s| {
        let receiver = cores.get(1).copied();
        s.spawn(move || {
            if let Some(c) = receiver {
                core_affinity::set_for_current(c);
            }
            for sent in rx.iter() {
                let _ = back_tx.send(sent.elapsed().as_secs_f64() * 1e6);
            }
        });
        if let Some(c) = cores.first().copied() {
            core_affinity::set_for_current(c);
        }
        for _ in 0..WAKES {
            // Keep this core busy while the receiver idles.
            let until = Instant::now() + idle;
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            let _ = tx.send(Instant::now());
        }
        drop(tx);
    });
    back_rx.try_iter().collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: f64 = match args.first().map(|s| s.parse()) {
        None => 5.0,
        Some(Ok(s)) if s > 0.0 => s,
        _ => {
            eprintln!("usage: cpu_gaps [SECONDS > 0] [THRESHOLD_US > 0]");
            std::process::exit(2);
        }
    };
    let threshold_us: f64 = match args.get(1).map(|s| s.parse()) {
        None => 20.0,
        Some(Ok(t)) if t > 0.0 => t,
        _ => {
            eprintln!("usage: cpu_gaps [SECONDS > 0] [THRESHOLD_US > 0]");
            std::process::exit(2);
        }
    };
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let n = cores.len().max(1);
    let threshold = Duration::from_secs_f64(threshold_us * 1e-6);
    let run = Duration::from_secs_f64(seconds);
    let results: Vec<(usize, Vec<f64>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let core = cores.get(i).copied();
                s.spawn(move || {
                    if let Some(c) = core {
                        core_affinity::set_for_current(c);
                    }
                    let mut gaps = Vec::new();
                    let start = Instant::now();
                    let mut last = start;
                    while last - start < run {
                        let now = Instant::now();
                        let d = now - last;
                        if d > threshold {
                            gaps.push(d.as_secs_f64() * 1e6);
                        }
                        last = now;
                    }
                    (i, gaps)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    println!(
        "{n} threads, one per core, {seconds} s each; gaps longer than {threshold_us} us between clock readings:"
    );
    for (i, mut gaps) in results {
        let lost: f64 = gaps.iter().sum();
        let (median, p90, longest) = quantiles(&mut gaps);
        println!(
            "core {i}: {} gaps, {:.2}% of the time lost; gap median {median:.0} us, 90th percentile {p90:.0} us, longest {longest:.0} us; over 100 us: {}, over 1 ms: {}",
            gaps.len(),
            100.0 * lost / (seconds * 1e6),
            gaps.iter().filter(|&&g| g > 100.0).count(),
            gaps.iter().filter(|&&g| g > 1000.0).count(),
        );
    }
    if n < 2 {
        return;
    }
    println!("wake-up of a blocked thread on the other core ({WAKES} per row), send to receive:");
    for idle_us in [20u64, 200, 2000] {
        let mut d = wake_delays(&cores, Duration::from_micros(idle_us));
        let (median, p90, longest) = quantiles(&mut d);
        println!(
            "after {idle_us} us idle: median {median:.1} us, 90th percentile {p90:.1} us, longest {longest:.0} us; over 100 us: {}",
            d.iter().filter(|&&g| g > 100.0).count()
        );
    }
}
