//! The pipeline wake-up ([`WakeCalibration`]): `pipe(spin(T), nop)` against `spin(T)` on
//! streams of arrays, fitted on the waits the workers do not spin through.

use super::rig::{array_program, array_stream, side_by_side_on, spin_block_of};
use crate::ctx::Config;
use crate::error::Error;
use crate::overhead::calibration::{Calibration, PatternCost, WakeCalibration, WakePoint};

/// Busy times of the wake-up calibration, ns: dense between 4 and 16 µs, where the cost
/// starts (the waiting stage stops spinning and sleeps) and grows fastest.
pub const WAKE_SPINS: [u64; 9] = [
    1_000, 2_000, 4_000, 6_000, 8_000, 12_000, 16_000, 24_000, 32_000,
];

/// The baseline of the wake-up fit: `pipe(nop, nop)`'s extra over `nop`, and `nop`, with
/// the stream driver. Medians, as the wake-up's own points are.
pub(crate) fn wake_baseline(patterns: &[PatternCost]) -> (f64, f64) {
    let median = |term: &str| {
        patterns
            .iter()
            .find(|p| p.term == term)
            .map_or(0.0, |p| p.composition_ns(false))
    };
    let (nop, pipe) = (median("nop"), median("pipe(nop, nop)"));
    ((pipe - nop).max(0.0), nop)
}

/// Measure `pipe(spin(T), nop)` against `spin(T)` for each T of [`WAKE_SPINS`] (stream
/// driver, streams of about 20 ms of arrays of [`WAKE_BYTES_PER_NS`] bytes per ns of `T`,
/// alternating) and fit the cost through the points ([`WakeCalibration::fit`]) over the
/// baseline of [`wake_baseline`], on the waits the workers configured as `config` do not
/// spin through.
///
/// [`WAKE_BYTES_PER_NS`]: super::rig::WAKE_BYTES_PER_NS
pub(crate) fn calibrate_wake(
    repetitions: usize,
    config: &Config,
    pipe_nop_extra_ns: f64,
    nop_stage_ns: f64,
) -> Result<WakeCalibration, Error> {
    let mut points = Vec::new();
    for &ns in &WAKE_SPINS {
        let single = array_program(spin_block_of(ns), config)?;
        let piped = array_program(
            crate::pipe(
                spin_block_of(ns),
                crate::block("nop", std::hint::black_box::<Vec<u64>>),
            ),
            config,
        )?;
        let (stage_ns, pipe_ns) = side_by_side_on(&single, &piped, array_stream(ns), repetitions)?;
        points.push(WakePoint {
            spin_ns: ns as f64,
            stage_ns,
            pipe_ns,
        });
    }
    // As the calibration records the spin (whole µs).
    let spin_ns = Calibration::spin_of(config).as_micros() as f64 * 1e3;
    Ok(WakeCalibration::fit(
        points,
        pipe_nop_extra_ns,
        nop_stage_ns,
        spin_ns,
    ))
}
