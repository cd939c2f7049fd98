//! The overhead model: what each pattern itself costs per element, measured with `nop`
//! blocks, next to a hand-written crossbeam-channel program doing the same hand-offs.
//!
//! The pattern-composition paper attributes most of its prediction error to unmodelled overhead and
//! contention. Calibration ([`calibrate`]) runs `nop`, `seq(nop, nop)`, `pipe(nop, nop)`
//! and `tpool(n, nop)` on this machine, then what those do not show: pipelines whose
//! stages wait long enough to sleep, pipelines and task pools of busy stages, MapReduce
//! jobs, and what a unit test counts per block call. Composition
//! ([`Calibration::for_statistic`] → [`Composer::overhead`]) adds to a design the
//! single-stage cost plus, for every pattern node, its extra cost over a single stage,
//! and the terms that grow with a pipeline's slack or a pool's or a job's time. The
//! constant lands where it matters — small elements, where hand-offs are a visible share
//! of the time — and vanishes against large work.
//!
//! | module | what lives there |
//! |---|---|
//! | `calibration` | the stored types: [`Calibration`] and its parts |
//! | `store` | where a calibration lives and its file: [`Calibration::default_path`], save, load, [`CALIBRATION_VERSION`] |
//! | `calibrate` | the measurements, one file each, and [`calibrate`] running them all |
//! | `fit` | measured points → the stored fits (straight lines through points, saturating lines) |
//! | `compose` | a calibration → the core's [`Overhead`] of a design |
//! | `design` | the calibration added to a prediction, and why it cannot be: [`overhead_for`] |
//!
//! [`Overhead`]: perfcompose_core::compose::predict::Overhead

mod calibrate;
mod calibration;
mod compose;
mod design;
mod fit;
mod store;
#[cfg(test)]
mod testing;

pub use calibrate::{
    calibrate, calibration_terms, Driver, BLOCK_CALL_X, DEFAULT_ELEMENTS, DEFAULT_REPETITIONS,
    HANDOFF_EQUAL_SPINS_NS, HANDOFF_SLACKS, HANDOFF_SPIN_NS, JOB_INPUTS, JOB_SPINS,
    JOB_SPIN_SPREAD, POOL_SPINS, WAKE_BYTES_PER_NS, WAKE_SPINS,
};
pub use calibration::{
    BlockCall, Calibration, HandoffCalibration, HandoffPoint, JobBusy, JobCost, JobPoint,
    PatternCost, PoolBusy, WakeCalibration, WakePoint,
};
pub(crate) use compose::each_pipeline;
pub use compose::{Composer, HANDOFF_SLACK_RESOLUTION};
pub use design::{find_calibration, overhead_for, Added, NotADesign, OverheadError};
pub use fit::{WAKE_BASELINE_NS, WAKE_FLOOR};
pub use store::{FileError, FileErrorKind, CALIBRATION_VERSION};
