//! The block call ([`BlockCall`]): the `nop` unit test, input warm.

use crate::error::{Error, UnitTestError};
use crate::kernel::Registry;
use crate::overhead::calibration::BlockCall;

/// The size of the [`BlockCall`] calibration: the smallest of the paper's grid, where a
/// repetition batches the most calls (the clock read weighs least).
pub const BLOCK_CALL_X: usize = 1024;

/// Measure [`BlockCall`]: the `nop` unit test, input warm, at [`BLOCK_CALL_X`],
/// `repetitions` repetitions (at least 7) of at least 200 µs of calls each; its median
/// and its fastest repetition.
pub(crate) fn calibrate_block_call(repetitions: usize) -> Result<BlockCall, Error> {
    let registry = Registry::builtin();
    let nop = registry.get("nop")?;
    let reps = repetitions.max(7) as u32;
    let spec = crate::bench::Sampling {
        warmup: 1,
        min_reps: reps,
        max_reps: reps,
        target: None,
        min_sample: std::time::Duration::from_micros(200),
        max_point_time: std::time::Duration::from_secs(60),
    };
    let p = crate::bench::time_kernel_in(
        nop.as_ref(),
        BLOCK_CALL_X,
        &crate::kernel::Inputs::default(),
        &spec,
        crate::bench::default_memory_limit(),
        crate::bench::InputState::Warm,
    )?;
    let min_ns =
        p.values
            .iter()
            .copied()
            .reduce(f64::min)
            .ok_or_else(|| UnitTestError::NoRepetition {
                kernel: "nop".into(),
            })?;
    Ok(BlockCall {
        x: p.x as usize,
        ns: p.median,
        min_ns,
    })
}
