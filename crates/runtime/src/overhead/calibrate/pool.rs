//! The busy task pools ([`PoolBusy`]): `tpool(n, spin(T))` against `spin(T)`.

use super::rig::{side_by_side, spin_block};
use crate::ctx::Config;
use crate::error::Error;
use crate::overhead::calibration::PoolBusy;
use crate::overhead::fit::pool_busy_of;

/// Busy times of the task-pool calibration, ns.
pub const POOL_SPINS: [u64; 3] = [1_000, 2_000, 4_000];

/// Measure `tpool(n, spin(T))` against `spin(T)` for `n` from 2 to `cores` and each `T`
/// of [`POOL_SPINS`] (stream driver, streams of about 20 ms, alternating).
pub(crate) fn calibrate_pool_busy(
    cores: usize,
    repetitions: usize,
    config: &Config,
) -> Result<Vec<PoolBusy>, Error> {
    let build = |p| crate::Program::with_config(p, config.clone());
    let mut out = Vec::new();
    for n in 2..=cores {
        let mut points = Vec::new();
        for &ns in &POOL_SPINS {
            let single = build(spin_block(ns))?;
            let pool = build(crate::tpool(n, spin_block(ns)))?;
            let (a, b) = side_by_side(&single, &pool, ns, repetitions)?;
            points.push((ns as f64, b, a));
        }
        out.push(pool_busy_of(n, points));
    }
    Ok(out)
}
