//! The whole calibration of a machine ([`calibrate`]): every measurement, in order.

use super::block_call::calibrate_block_call;
use super::handoff::calibrate_handoff;
use super::mapreduce::{calibrate_mapreduce, calibrate_mapreduce_busy};
use super::patterns::{calibrate_patterns, calibration_terms};
use super::pool::calibrate_pool_busy;
use super::wake::{calibrate_wake, wake_baseline};
use crate::ctx::Config;
use crate::error::Error;
use crate::host::{available_cores, hostname};
use crate::overhead::calibration::Calibration;
use crate::overhead::store::CALIBRATION_VERSION;

/// Elements streamed per repetition of a calibration run.
pub const DEFAULT_ELEMENTS: usize = 100_000;
/// Repetitions per pattern (runtime and baseline alternate).
pub const DEFAULT_REPETITIONS: usize = 15;

/// Calibrate this machine with its workers configured as `config`: the patterns with
/// `elements` elements per repetition and `repetitions` repetitions
/// ([`calibration_terms`]), then the wake-up, the busy hand-off, the busy pools, the
/// MapReduce jobs and the block call, each with at most as many repetitions as it needs.
/// `progress(what, done, total)` before each part.
pub fn calibrate(
    elements: usize,
    repetitions: usize,
    config: &Config,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Calibration, Error> {
    if elements == 0 || repetitions == 0 {
        return Err(Error::EmptyCalibration {
            elements,
            repetitions,
        });
    }
    let cores = available_cores();
    let terms = calibration_terms(cores).len();
    let patterns = calibrate_patterns(elements, repetitions, cores, config, progress)?;
    progress("pipe(spin(T), nop)", terms, terms + 1);
    let (pipe_extra, nop) = wake_baseline(&patterns);
    let pipe_wake = calibrate_wake(repetitions.clamp(1, 7), config, pipe_extra, nop)?;
    progress("pipe(spin(T), spin(T - d))", terms, terms + 1);
    let pipe_handoff = calibrate_handoff(repetitions.clamp(1, 11), config)?;
    progress("tpool(n, spin(T))", terms, terms + 1);
    let pool_busy = calibrate_pool_busy(cores, repetitions.clamp(1, 7), config)?;
    progress("mapreduce(n, spin(T))", terms, terms + 1);
    let mapreduce = calibrate_mapreduce(cores, repetitions.clamp(1, 7), config)?;
    let mapreduce_busy =
        calibrate_mapreduce_busy(cores, repetitions.clamp(1, 7), config, &mapreduce)?;
    progress("nop (unit test)", terms, terms + 1);
    let block_call = calibrate_block_call(repetitions)?;
    Ok(Calibration {
        version: CALIBRATION_VERSION,
        host: hostname(),
        cores,
        elements,
        repetitions,
        patterns,
        pipe_wake,
        pipe_handoff,
        mapreduce,
        mapreduce_busy,
        pool_busy,
        pinned: config.pin,
        spin_us: Calibration::spin_of(config).as_micros() as u64,
        block_call,
    })
}
