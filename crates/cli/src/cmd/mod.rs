//! One module per subcommand: each has an `Args` (clap) and a `run`; `input` and
//! `runtime_args` hold what several of them share; `network` is `calibrate network`
//! and `distributed` the distributed `validate` (both MPI).

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod demo;
#[cfg(feature = "mpi")]
pub mod distributed;
pub mod fit;
pub mod input;
#[cfg(feature = "mpi")]
pub mod network;
pub mod predict;
pub mod runtime_args;
pub mod simulate;
pub mod validate;
