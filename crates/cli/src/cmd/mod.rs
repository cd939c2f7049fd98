//! One module per subcommand: each has an `Args` (clap) and a `run`; `input`,
//! `runtime_args`, `timing_args` and `seconds` hold what several of them share;
//! `trace_input` is what `simulate --trace` names (a time-independent trace or an OTF2
//! archive).

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod demo;
pub mod fit;
pub mod input;
pub mod measure;
pub mod optimize;
pub mod predict;
pub mod record;
pub mod report;
pub mod runtime_args;
pub mod seconds;
pub mod simulate;
pub mod timing_args;
pub mod trace_input;
pub mod validate;
