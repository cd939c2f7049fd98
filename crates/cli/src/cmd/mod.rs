//! One module per subcommand: each has an `Args` (clap) and a `run`; `input` and
//! `runtime_args` hold what several of them share.

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod demo;
pub mod fit;
pub mod input;
pub mod predict;
pub mod report;
pub mod runtime_args;
pub mod simulate;
pub mod validate;
