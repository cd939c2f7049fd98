//! What the measurements share: blocks busy for a given time without touching memory,
//! streams of arrays like a design's, and two programs timed side by side.

use std::time::Instant;

use crate::bench::stats;
use crate::ctx::Config;
use crate::error::Error;

/// Bytes the wake-up and hand-off calibrations' elements carry per ns of stage time:
/// `spin(T)` passes arrays of `T · 10 / 8` `u64`s, as `inc` does (8 bytes per element at
/// 0.8 ns each), so that a 20 ms stream holds about 200 MB like the streams `validate`
/// runs. On `u64` elements the same stages pay up to twice as much at waits of 6–16 µs
/// (docs/runtime.md, "Overhead of the patterns").
pub const WAKE_BYTES_PER_NS: u64 = 10;

/// A block busy for `ns` without touching memory.
pub(crate) fn spin_block(ns: u64) -> crate::Pattern<u64, u64> {
    spin_block_of(ns)
}

/// [`spin_block`] on elements of any type, passed through untouched.
pub(crate) fn spin_block_of<E: Send + 'static>(ns: u64) -> crate::Pattern<E, E> {
    crate::block(format!("spin{ns}"), move |v: E| {
        spin(ns);
        v
    })
}

/// Stay busy for `ns` of wall-clock time without touching memory.
pub(crate) fn spin(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// A program on arrays with `config`, for the wake-up and hand-off calibrations.
pub(crate) fn array_program(
    pattern: crate::Pattern<Vec<u64>, Vec<u64>>,
    config: &Config,
) -> Result<crate::Program<Vec<u64>, Vec<u64>>, Error> {
    Ok(crate::Program::with_config(pattern, config.clone())?)
}

/// Streams of about 20 ms for a stage busy `ns` per element: arrays of
/// [`WAKE_BYTES_PER_NS`] bytes per ns of it, like a design's elements.
pub(crate) fn array_stream(ns: u64) -> impl Fn() -> Vec<Vec<u64>> {
    let count = (20_000_000 / ns.max(1)).max(64);
    let len = (ns * WAKE_BYTES_PER_NS / 8).max(1) as usize;
    move || (0..count).map(|i| vec![i; len]).collect()
}

/// Median ns per element of two designs of a block busy for `ns`, streams of about
/// 20 ms through the stream driver, alternating after one untimed stream each.
pub(crate) fn side_by_side(
    a: &crate::Program<u64, u64>,
    b: &crate::Program<u64, u64>,
    ns: u64,
    repetitions: usize,
) -> Result<(f64, f64), Error> {
    let count = (20_000_000 / ns).max(64);
    side_by_side_on(a, b, || (0..count).collect(), repetitions)
}

/// [`side_by_side`] on streams made by `stream` (a fresh one for every run, made before
/// its clock starts).
pub(crate) fn side_by_side_on<E: Send + std::fmt::Debug + 'static>(
    a: &crate::Program<E, E>,
    b: &crate::Program<E, E>,
    stream: impl Fn() -> Vec<E>,
    repetitions: usize,
) -> Result<(f64, f64), Error> {
    let (ta, tb) = side_by_side_samples(a, b, stream, repetitions)?;
    Ok((stats::median(&ta), stats::median(&tb)))
}

/// The ns per element of every timed repetition of [`side_by_side_on`], `(a, b)`.
pub(crate) fn side_by_side_samples<E: Send + std::fmt::Debug + 'static>(
    a: &crate::Program<E, E>,
    b: &crate::Program<E, E>,
    stream: impl Fn() -> Vec<E>,
    repetitions: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let time = |p: &crate::Program<E, E>| -> Result<f64, Error> {
        let elements = stream();
        let count = elements.len().max(1);
        let m = p.run_stream(elements)?;
        Ok(m.elapsed.as_nanos() as f64 / count as f64)
    };
    time(a)?;
    time(b)?;
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..repetitions.max(1) {
        ta.push(time(a)?);
        tb.push(time(b)?);
    }
    Ok((ta, tb))
}

/// The median and the fastest of `samples` (ns per element of repetitions).
pub(crate) fn median_min(samples: &[f64]) -> (f64, f64) {
    let fastest = samples.iter().copied().fold(f64::INFINITY, f64::min);
    (stats::median(samples), fastest)
}
