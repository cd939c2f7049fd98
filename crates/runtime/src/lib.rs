//! perfcompose-runtime: the patterns of the term language on real threads, the kernels of
//! the pattern-composition paper's evaluation, and the benchmark harness that measures them.
//!
//! | module | what lives there |
//! |---|---|
//! | [`pattern`] | the typed API: [`block`], [`seq`], [`pipe`], [`tpool`] as nestable values |
//! | [`mapreduce`](mod@mapreduce) | MapReduce on one node: map, shuffle by key, reduce (pairwise or per key) |
//! | [`program`] | a checked pattern and the driver that feeds it a stream ([`Program::run`]) |
//! | [`data`] | [`Data`], the element type of term-driven programs |
//! | [`kernel`] | the [`Kernel`] trait, the open [`Registry`] and the built-in kernels |
//! | [`plan`] | a term-shaped [`Plan`] + a registry → a runnable [`Program`] |
//! | [`bench`] | unit performance tests and whole-program measurement (median, CV, adaptive stop) |
//! | [`command`] | the user's own programs: a command over a parameter grid, timed by wall time or by what it prints |
//! | [`overhead`] | per-element cost of each pattern, its crossbeam baseline, per-machine storage |
//! | [`timeline`] | a traced run: which thread ran which block when, as Chrome trace events |
//! | [`host`] | probes of the machine: cores, memory, caches, the cores' speed states, busy neighbours |
//!
//! Queues are bounded crossbeam channels: a blocked thread sleeps instead of spinning,
//! and a fast producer stops when the queue in front of it is full. A panic in a block
//! becomes a [`RunError`] on the caller's side that accounts for every element.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

mod ctx;
mod error;
mod pool;
mod unwind;

pub mod bench;
pub mod command;
pub mod data;
pub mod host;
pub mod kernel;
pub mod mapreduce;
pub mod overhead;
pub mod pattern;
pub mod plan;
pub mod program;
pub mod timeline;
pub mod validate;

pub use ctx::{Config, DEFAULT_SPIN};
pub use data::{Data, DataKind};
pub use error::{
    BuildError, Error, Fault, FileAction, KernelError, LostThread, RunError, RunFailure,
    UnitTestError,
};
pub use kernel::{Kernel, Op, Registry};
pub use mapreduce::{mapreduce, Reduce};
pub use pattern::{block, pipe, seq, tpool, Pattern};
pub use plan::Plan;
pub use program::{Measured, Program};
pub use unwind::{in_user_code, on_worker_thread, panic_message, WORKER_THREAD_NAME};
