//! The measurements of a calibration, one file each: the patterns next to their
//! crossbeam baseline (`patterns`), the pipeline wake-up (`wake`), the busy pipeline
//! hand-off (`handoff`), the busy task pools (`pool`), the MapReduce jobs (`mapreduce`),
//! the block call (`block_call`), what they share (`rig`), and all of them in order
//! (`machine`, [`calibrate`]).

mod block_call;
mod handoff;
mod machine;
mod mapreduce;
mod patterns;
mod pool;
mod rig;
mod wake;

pub use block_call::BLOCK_CALL_X;
pub use handoff::{HANDOFF_EQUAL_SPINS_NS, HANDOFF_SLACKS, HANDOFF_SPIN_NS};
pub use machine::{calibrate, DEFAULT_ELEMENTS, DEFAULT_REPETITIONS};
pub use mapreduce::{JOB_INPUTS, JOB_SPINS, JOB_SPIN_SPREAD};
pub use patterns::{calibration_terms, Driver};
pub use pool::POOL_SPINS;
pub use rig::WAKE_BYTES_PER_NS;
pub use wake::WAKE_SPINS;
