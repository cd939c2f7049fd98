//! The user's own programs as blocks and as whole programs: a command line with
//! `{NAME}` placeholders, started once per repetition at each point of a parameter grid
//! and timed by its wall time or by a time it prints itself (`perfcompose measure`, and
//! `perfcompose validate -- CMD`).
//!
//! A point is sampled with the same adaptive stop rule as the unit performance tests
//! ([`crate::bench::sample`]): warm-up runs, then repetitions until the 95% confidence
//! interval of the median is within the target, or the repetition or time budget is
//! spent. Processes are started through an [`Executor`], so that tests can replace the
//! operating system with a script.
//!
//! | module | what lives there |
//! |---|---|
//! | `line` | [`CommandLine`]: the words, their placeholders, direct or through `sh -c` |
//! | `time_from` | [`TimeFrom`]: a time the program prints, found by a regular expression |
//! | `exec` | [`Executor`], [`System`], [`Outcome`]: starting a process and timing it |
//! | `run` | [`Measurement`]: one point ([`Measurement::point`]) and a grid in its order ([`Measurement::grid`]) |
//! | `error` | [`CommandError`]: what failed, with the command line, the point and its stderr |

mod error;
mod exec;
mod line;
mod run;
mod time_from;

pub use error::CommandError;
pub use exec::{Executor, Outcome, System};
pub use line::{format_point, format_value, CommandLine};
pub use run::{order, Measured, Measurement};
pub use time_from::{TimeFrom, UnitOutside};
