//! End-to-end validation of composed predictions on this machine (the pattern-composition paper, §4).
//!
//! For every configuration of a [`Suite`]: measure the building blocks (unit
//! performance tests under the conditions the design gives them, [`blocks`]) and the
//! whole design on the runtime, back to back, in paired rounds ([`protocol`]); per
//! round, fit the blocks' models, compose the term's model from them ("modular") and
//! take its error against that round's program. Over the rounds each size's error gets
//! a 95% interval, and the row is decided `within`, `miss` or `undecided`
//! ([`verdict`]); alternative designs of one program are measured in the same rounds,
//! and whether the prediction named the faster one is counted. The rounds pooled give
//! the row's models and metrics:
//!
//! - `time_error`: the largest relative error of the modular model against the measured
//!   time over the measured points (the repetitions' minimum by default,
//!   [`Options::measure`]);
//! - `coefficient_error`: how far the modular model's growth over the measured sizes is
//!   from the monolithic one's (the paper's Table 2 metric for models of its form,
//!   [`analyze::coefficient_error`]);
//! - `repeat_error`: how far the program measured before its blocks is from the program
//!   measured after them — how well the machine reproduces the program itself;
//! - per point, the interval one run is predicted to fall in, and how many runs did.
//!
//! The suite is judged by a rule noise cannot move by luck ([`Summary`]): how many rows
//! were decided a miss and how many stayed undecided, every miss explained in its notes
//! ([`Note`]).
//!
//! | module | what lives there |
//! |---|---|
//! | [`suite`] | the configurations: built-in suites and suite files |
//! | [`options`] | the machine's side of a run, the targets |
//! | [`blocks`] | which unit test stands for each block of a design ([`BlockKey`]) |
//! | [`protocol`] | how one configuration is measured: rounds of blocks and program |
//! | [`verdict`] | intervals over rounds, verdicts, design choices, one-run intervals |
//! | [`analyze`] | fitting, composing, comparing, the reasons of a miss |
//! | [`notes`] | the typed notes of a row |
//! | [`report`] | rows, the suite's summary, the `--json` schema |
//! | [`archive`] | the saved-run folder, written and read |
//! | [`run`] | the live run and the re-analysis of a saved one |
//! | [`program`] | the user's own program against the prediction from a components file |
//! | [`designs`] | designs of the user's own program listed in a suite file |

pub mod analyze;
pub mod archive;
pub mod blocks;
pub mod designs;
pub mod notes;
pub mod options;
pub mod program;
pub mod protocol;
pub mod report;
pub mod run;
pub mod suite;
pub mod verdict;

pub use archive::{write_measurements, Archive, SavedProgram, SavedRun, ARCHIVE_VERSION};
pub use blocks::{place, BlockKey, Placement};
pub use notes::Note;
pub use options::{
    Options, DEFAULT_LEVEL, MAX_MISSES, MAX_UNDECIDED, TARGET_MAPREDUCE, TARGET_PATTERNS,
    VALIDATE_MODELER,
};
pub use program::{program_rounds, reanalyze_program, validate_program, OwnProgram, OWN_PROGRAM};
pub use report::{HostAtRow, JsonReport, Report, Row, Rule, Summary, Verdict};
pub use run::{load_average, reanalyze, run_suite, steps, Reanalysis};
pub use suite::{select, Case, Suite};
pub use verdict::{Budget, Coverage, Rounds};
