//! Unit performance tests of kernels and whole-program measurement, over a sweep of input
//! sizes.
//!
//! Per size: warm-up runs, then repetitions until the 95% confidence interval of the
//! median is within the target (adaptive mode — measure only as much as the accuracy
//! needs, in the spirit of the dPerf paper's threshold rule) or the repetition/time budget is
//! spent. Calls too short for the clock are batched so one sample lasts at least
//! [`Sampling::min_sample`]; a sample is the time per call (ns).
//!
//! The kernel is timed the way programs call it (the pattern-composition paper (§4) times its blocks as the
//! program invokes them): inputs are prepared and outputs dropped outside the timed
//! region, and a cold input ([`InputState::Cold`]) arrives exactly as a program's stream
//! delivers it — each repetition makes a fresh stream of inputs the way a whole-program
//! measurement does ([`stream_len`]) and times the kernel over all of it, in order.
//! Copying the input just before the call would leave it in the cache, and drawing
//! inputs from a long-lived pool twice the size of the last-level cache would make its
//! speed depend on when the pool was written (the cache is not LRU, so "evicted by newer
//! data" is not "not in the cache"): either was off by up to 30% for the memory-bound
//! `inc`. A block that runs after another block of a `seq` is timed warm
//! ([`InputState::Warm`]), one that runs after another stage of a `pipe` on an input just
//! written by another thread ([`InputState::Remote`]). A whole program is timed on a
//! stream of elements and reports total time / elements, the paper's metric.
//!
//! | module | what lives there |
//! |---|---|
//! | `sampling` | [`Sampling`], the [`Repeated`] trait, the adaptive stop rule ([`sample`], [`sample_point`]), [`Progress`] |
//! | `series` | [`PointStats`], [`Series`], their conversion to measurement files ([`to_experiment`], [`extrap_text`]) |
//! | `conditions` | how a block is measured: [`InputState`], [`Conditions`], [`Stage`], [`Replica`] and their printed suffixes |
//! | `kernel_sampler` | [`KernelSampler`], the unit test of one block under its [`Conditions`] |
//! | `siblings`, `gather` | the other threads of a loaded unit test; a per-key reduction's keys gathered as a job does |
//! | `rig`, `stage`, `replica` | the blocks around a block timed as a pipeline's stage or as a block of a pool's `seq` |
//! | `program_sampler` | [`ProgramSampler`], a whole program on a stream |
//! | `sweep` | a kernel, a block or a program over a sweep of sizes: [`bench_kernel`], [`bench_block`], [`bench_plan`] |
//! | `stream` | a repetition's stream: its length ([`stream_len`], [`tail_floor`]), its inputs, fresh and cold |
//! | `memory`, `clock`, `threads` | the memory limit, cache eviction and the allocator; the clock's cost; pinned, named threads |
//! | [`stats`] | median, CV and the median's confidence interval (the core crate's) |
//! | [`tandem`] | the stochastic `max` of a pipeline's stages from their phases |

mod clock;
mod conditions;
mod gather;
mod kernel_sampler;
mod memory;
mod program_sampler;
mod replica;
mod rig;
mod sampling;
mod series;
mod siblings;
mod stage;
pub mod stats;
mod stream;
mod sweep;
pub mod tandem;
mod threads;

#[cfg(test)]
mod tests;

pub use clock::clock_read_ns;
pub use conditions::{Conditions, InputState, Replica, Stage};
pub use kernel_sampler::{time_kernel, time_kernel_in, KernelSampler};
pub use memory::{default_memory_limit, evict_caches, keep_freed_memory};
pub use program_sampler::{time_program, ProgramSampler};
pub use sampling::{sample, sample_point, Progress, Repeated, Sampling};
pub use series::{
    extrap_text, group_by_sweep, to_experiment, PointStats, Series, SeriesKind, METRIC, PARAMETER,
    PHASE_QUANTILES, PHASE_WINDOW,
};
pub use stats::quantiles;
pub use stream::{stream_len, tail_floor, MAX_ELEMENTS, MIN_ELEMENTS, MIN_RUN, TAIL_ELEMENTS};
pub use sweep::{bench_block, bench_kernel, bench_kernel_in, bench_plan};
pub use threads::{LOAD_THREAD_NAME, TIMED_THREAD_NAME};
