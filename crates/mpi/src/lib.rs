//! The MPI runtime of perfcompose: designs that run across processes, started the way MPI
//! programs are (`mpirun -np P perfcompose …`), over the system's MPI library (Open MPI)
//! through the `mpi` crate.
//!
//! - [`job`]: one MPI job: start-up, ranks, a time limit that ends a hung job, and blocks
//!   whose panic ends the whole job with the rank and the block named.
//! - [`mapreduce`]: MapReduce over the job's processes × threads, with the pattern-composition paper's three
//!   reductions and the exact bytes each sends.
//! - [`dc`]: hypercube divide and conquer over the job's processes (the divide-and-conquer paper), and
//!   [`graph`] its connected-components blocks.
//! - [`matmul`]: the matrix-multiplication paper's Fox algorithm (Fox's algorithm on a square mesh of
//!   processes with a flat, binomial or pipelined broadcast), and [`matrix`] its block
//!   product.
//! - [`design`]: a distributed design as the validation runs it, and [`communication`]
//!   the components its communication is composed from.
//! - [`crew`]: rank 0 leads a measurement, the other ranks follow its commands.
//! - [`trace`]: a distributed run recorded as SimGrid time-independent traces.
//! - [`validate`]: prediction against measurement for distributed designs, rows in the
//!   thread runtime's schema.
//! - [`network`]: `perfcompose calibrate network`: ping-pong, all-to-all and LogGP
//!   measurements, the fitted parameters, where they are stored, and the files they are
//!   written to (a components file's `[machine]` table, a SimGrid platform).
//!
//! Only rank 0 prints; the other ranks are silent unless they fail.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod communication;
pub mod crew;
pub mod dc;
pub mod design;
pub mod error;
pub mod graph;
pub mod job;
pub mod mapreduce;
pub mod matmul;
pub mod matrix;
pub mod network;
pub mod trace;
pub mod validate;

pub use error::Error;
pub use job::Job;
