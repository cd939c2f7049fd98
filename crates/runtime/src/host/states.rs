//! Each core's speed state: does it run a block at its fast speed right now, and how often
//! are *all* cores fast at once?
//!
//! On the shared AMD guest each core switches on its own between a fast state and a slow
//! one that takes the load/store throughput down by about half (`inc` at 4,096: 3.4–3.8 µs
//! a call against 6.0–7.2 µs; a chain of multiplies keeps its speed), in spans of
//! 0.2–4.5 s; both cores were fast at once in 0–34% of 100 ms windows. Under the
//! minimum statistic a block's unit test timed on one thread finds its core's fast state,
//! while a program of two threads needs both cores fast in the same repetition
//! (docs/validation.md, "Known limits").
//!
//! [`sample`] puts one pinned thread per core on a kernel, back to back on a warm input,
//! and records each core's time per call in windows of wall-clock time; a window is in the
//! fast state when it is within [`FAST`] of the fastest window of any core over every
//! sample that is compared ([`fastest`], [`CoreStates::shares`]), so that a core slow
//! through one sample, or through a whole short run, does not read fast.
//! `validate`'s host check takes a short sample at both ends of each configuration and
//! notes the shares on a row that misses.

use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use crate::data::Data;
use crate::error::{Error, LostThread};
use crate::kernel::{unit_call, Inputs, Op, Registry};

/// A window is in the fast state when it is within this factor of the fastest window of
/// any core ([`CoreStates::shares`]).
pub const FAST: f64 = 1.3;

/// The kernel and size `validate` samples: the block whose halving was found first.
pub const KERNEL: &str = "inc";
pub const X: usize = 4096;

/// The windows and length of `validate`'s samples (ten windows at each end of a
/// configuration: the fast spans last 0.2–0.9 s). The quick suite takes
/// [`QUICK_LENGTH`] to keep within its two minutes.
pub const WINDOW: Duration = Duration::from_millis(100);
pub const VALIDATE_LENGTH: Duration = Duration::from_secs(1);
pub const QUICK_LENGTH: Duration = Duration::from_millis(500);

/// One sample: each core's time per call in each window, all cores running at once.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreStates {
    /// Window length, ms.
    pub window_ms: f64,
    /// Per core (in the order sampled), ns per call in each window; a window in which no
    /// call finished has the next one's time, NaN at the end.
    pub cores: Vec<Vec<f64>>,
}

/// Call `op` back to back on `data` from `start` for `length`; ns per call in each window
/// of `window` (a window with no call finished in it gets the next one's time).
fn windows(
    op: &Op,
    mut data: Data,
    start: Instant,
    length: Duration,
    window: Duration,
) -> Vec<f64> {
    let width = window.as_nanos().max(1);
    let n = (length.as_nanos() / width).max(1) as usize;
    let mut calls = vec![0u64; n];
    let mut times = vec![0.0f64; n];
    let mut last = start;
    loop {
        data = unit_call(op, data);
        let now = Instant::now();
        let i = ((now - start).as_nanos() / width) as usize;
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

/// One thread pinned to each of `cores`, all calling `kernel` of `registry` at `x`
/// elements on a warm input of their own for `length` from a common start, timed in
/// windows of `window`. An error when the kernel is unknown or cannot make the input.
pub fn sample_on(
    registry: &Registry,
    kernel: &str,
    x: usize,
    cores: &[core_affinity::CoreId],
    length: Duration,
    window: Duration,
) -> Result<CoreStates, Error> {
    let k = registry.get(kernel)?;
    let op = k.op();
    let inputs = Inputs::default();
    let mut data = Vec::with_capacity(cores.len());
    for _ in cores {
        // Warm: one call before the clock starts.
        data.push(unit_call(&op, k.input(x, &inputs)?));
    }
    let barrier = Barrier::new(cores.len());
    let start = OnceLock::new();
    let joined: Vec<Option<Vec<f64>>> = std::thread::scope(|s| {
        let handles: Vec<_> = cores
            .iter()
            .zip(data)
            .map(|(&core, d)| {
                let (op, barrier, start) = (&op, &barrier, &start);
                s.spawn(move || {
                    let _ = core_affinity::set_for_current(core);
                    barrier.wait();
                    let t0 = *start.get_or_init(|| Instant::now() + Duration::from_millis(10));
                    while Instant::now() < t0 {
                        std::hint::spin_loop();
                    }
                    windows(op, d, t0, length, window)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    });
    let cores: Option<Vec<Vec<f64>>> = joined.into_iter().collect();
    let cores = cores.ok_or_else(|| LostThread::CoreStates {
        kernel: kernel.to_string(),
    })?;
    Ok(CoreStates {
        window_ms: window.as_secs_f64() * 1e3,
        cores,
    })
}

/// [`sample_on`] every core the OS lets this process pin to; `None` where it does not say
/// which cores there are.
pub fn sample(
    registry: &Registry,
    kernel: &str,
    x: usize,
    length: Duration,
    window: Duration,
) -> Result<Option<CoreStates>, Error> {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.is_empty() {
        return Ok(None);
    }
    sample_on(registry, kernel, x, &cores, length, window).map(Some)
}

/// `validate`'s sample: [`KERNEL`] at [`X`] for `length` (the suite's
/// `state_sample`: [`VALIDATE_LENGTH`] or [`QUICK_LENGTH`]) in windows of [`WINDOW`];
/// `None` without the kernel in `registry`, on one core, or where the OS does not say
/// which cores there are.
pub fn validate_sample(registry: &Registry, length: Duration) -> Result<Option<CoreStates>, Error> {
    if registry.get(KERNEL).is_err() || core_affinity::get_core_ids().map_or(0, |c| c.len()) < 2 {
        return Ok(None);
    }
    sample(registry, KERNEL, X, length, WINDOW)
}

/// Quantile `q` of the finite values of `v` (NaN without any).
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    s[((s.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize]
}

/// Each core's fastest window over `samples` (by position; NaN for a core no sample has a
/// finite window of): the fast state every sample is judged against.
pub fn fastest<'a>(samples: impl IntoIterator<Item = &'a CoreStates>) -> Vec<f64> {
    let mut best = Vec::new();
    for s in samples {
        keep_fastest(&mut best, s);
    }
    best
}

/// `best` (each core's fastest window so far, [`fastest`]) with `sample`'s windows too.
pub fn keep_fastest(best: &mut Vec<f64>, sample: &CoreStates) {
    for (i, v) in sample.cores.iter().enumerate() {
        if best.len() <= i {
            best.push(f64::NAN);
        }
        // `min` keeps the other when one is NaN.
        best[i] = best[i].min(quantile(v, 0.0));
    }
}

/// Per window: is it within [`FAST`] of `best`?
pub fn fast_flags(v: &[f64], best: f64) -> Vec<bool> {
    v.iter()
        .map(|&t| t.is_finite() && best.is_finite() && t <= best * FAST)
        .collect()
}

/// Mean length (in windows) of the runs of `state` in `flags`; 0 when there is none.
pub fn mean_span(flags: &[bool], state: bool) -> f64 {
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

/// The shares of windows in the fast state of one sample ([`CoreStates::shares`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Shares {
    /// Per core, the share of its windows in the fast state.
    pub each: Vec<f64>,
    /// The share of windows in which every core was in the fast state at once.
    pub every: f64,
    /// Per core, the median ns per call over its windows.
    pub median_ns: Vec<f64>,
}

impl Shares {
    /// The product of the cores' own shares: what cores switching independently would
    /// give for [`Shares::every`].
    pub fn independent(&self) -> f64 {
        self.each.iter().product()
    }
}

impl CoreStates {
    /// How long the sample ran, s: its windows times their length (the longest core's).
    pub fn seconds(&self) -> f64 {
        let windows = self.cores.iter().map(Vec::len).max().unwrap_or(0);
        windows as f64 * self.window_ms / 1e3
    }

    /// The shares of this sample's windows in the fast state, every core judged against
    /// the fastest window of any core in `best` ([`fastest`]): the cores of one machine
    /// are the same hardware, and a short run may never see one of them fast (on the AMD
    /// guest a core stayed in its slow state for up to 10 s). Without any finite `best`,
    /// no window is fast.
    pub fn shares(&self, best: &[f64]) -> Shares {
        let reference = best
            .iter()
            .copied()
            .filter(|t| t.is_finite())
            .fold(f64::NAN, f64::min);
        let flags: Vec<Vec<bool>> = self
            .cores
            .iter()
            .map(|v| fast_flags(v, reference))
            .collect();
        let share = |f: &[bool]| f.iter().filter(|&&b| b).count() as f64 / f.len().max(1) as f64;
        let n = flags.iter().map(Vec::len).min().unwrap_or(0);
        let every = (0..n).filter(|&i| flags.iter().all(|f| f[i])).count() as f64 / n.max(1) as f64;
        Shares {
            each: flags.iter().map(|f| share(f)).collect(),
            every,
            median_ns: self.cores.iter().map(|v| quantile(v, 0.5)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(cores: Vec<Vec<f64>>) -> CoreStates {
        CoreStates {
            window_ms: 100.0,
            cores,
        }
    }

    #[test]
    fn every_core_fast_at_once_needs_them_fast_in_the_same_windows() {
        // Core 0 fast in windows 0 and 1, core 1 in 1 and 2: each half the time, both at
        // once in one window of four.
        let s = states(vec![
            vec![3500.0, 3600.0, 6500.0, 6600.0],
            vec![6400.0, 3500.0, 3700.0, 6900.0],
        ]);
        let best = fastest([&s]);
        assert_eq!(best, vec![3500.0, 3500.0]);
        let sh = s.shares(&best);
        assert_eq!(sh.each, vec![0.5, 0.5]);
        assert_eq!(sh.every, 0.25);
        assert_eq!(sh.independent(), 0.25);
        assert_eq!(sh.median_ns, vec![6500.0, 6400.0]);
    }

    #[test]
    fn a_core_slow_through_a_sample_reads_slow_against_its_fastest_in_another() {
        let slow = states(vec![vec![6500.0, 6600.0, 6400.0]]);
        let fast = states(vec![vec![3500.0, 6600.0, 3600.0]]);
        // Alone, the slow sample's own fastest window would make it all fast.
        assert_eq!(slow.shares(&fastest([&slow])).each, vec![1.0]);
        let best = fastest([&slow, &fast]);
        assert_eq!(best, vec![3500.0]);
        assert_eq!(slow.shares(&best).each, vec![0.0]);
        assert!((fast.shares(&best).each[0] - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn missing_windows_and_cores_read_slow() {
        let s = states(vec![vec![f64::NAN, 3500.0], vec![f64::NAN, f64::NAN]]);
        let best = fastest([&s]);
        assert_eq!(best[0], 3500.0);
        assert!(best[1].is_nan());
        let sh = s.shares(&best);
        assert_eq!(sh.each, vec![0.5, 0.0]);
        assert_eq!(sh.every, 0.0);
        // A core the reference does not know reads slow too.
        assert_eq!(s.shares(&[3500.0]).each, vec![0.5, 0.0]);
    }

    #[test]
    fn spans_are_the_mean_runs_of_a_state() {
        let f = [true, true, false, true, false, false, false];
        assert_eq!(mean_span(&f, true), 1.5);
        assert_eq!(mean_span(&f, false), 2.0);
        assert_eq!(mean_span(&[], true), 0.0);
    }

    #[test]
    fn a_sample_times_every_core_and_an_unknown_kernel_is_an_error() {
        let r = Registry::builtin();
        let cores = core_affinity::get_core_ids().unwrap_or_default();
        if let Some(&c) = cores.first() {
            let s = sample_on(
                &r,
                "inc",
                256,
                &[c],
                Duration::from_millis(30),
                Duration::from_millis(10),
            )
            .unwrap();
            assert_eq!(s.cores.len(), 1);
            assert_eq!(s.cores[0].len(), 3);
            // A window no call finished in (the thread not run for the whole sample on a
            // busy machine) is NaN; any other is a positive time.
            assert!(s.cores[0].iter().all(|t| t.is_nan() || *t > 0.0));
            assert_eq!(s.window_ms, 10.0);
            assert!((s.seconds() - 0.03).abs() < 1e-9, "{}", s.seconds());
        }
        assert!(sample_on(
            &r,
            "no_such_kernel",
            256,
            &cores,
            Duration::from_millis(10),
            Duration::from_millis(10)
        )
        .is_err());
    }
}
