//! End-to-end validation of composed predictions on this machine (the pattern-composition paper, §4).
//!
//! For every configuration of a [`Suite`]: measure the building blocks (unit
//! performance tests under the conditions the design gives them, [`blocks`]), fit their
//! models, compose the term's model from them ("modular"), run the whole design on the
//! runtime and fit its measurements ("monolithic"), and compare:
//!
//! - `time_error`: the largest relative error of the modular model against the measured
//!   time over the measured points (the repetitions' minimum by default,
//!   [`Options::measure`]);
//! - `coefficient_error`: how far the modular model's growth over the measured sizes is
//!   from the monolithic one's (the paper's Table 2 metric for models of its form,
//!   [`analyze::coefficient_error`]);
//! - `repeat_error`: how far the program's repetitions before and after its blocks are
//!   apart — how well the machine reproduces the program itself ([`protocol`]).
//!
//! The suite is judged by a rule noise cannot move by luck ([`Summary`]): the median
//! row's time error and the share of rows within their target, every miss set against the
//! program's own repeat variation and explained in its notes ([`Note`]).
//!
//! | module | what lives there |
//! |---|---|
//! | [`suite`] | the configurations: built-in suites and suite files |
//! | [`options`] | the machine's side of a run, the targets |
//! | [`blocks`] | which unit test stands for each block of a design ([`BlockKey`]) |
//! | [`protocol`] | how one configuration is measured (program, blocks, program) |
//! | [`revisit`] | points measured again when they stand out from their neighbours |
//! | [`analyze`] | fitting, composing, comparing, the reasons of a miss |
//! | [`notes`] | the typed notes of a row |
//! | [`report`] | rows, the suite's summary, the `--json` schema |
//! | [`archive`] | the saved-run folder, written and read |
//! | [`run`] | the live run and the re-analysis of a saved one |
//! | [`program`] | the user's own program against the prediction from a components file |

pub mod analyze;
pub mod archive;
pub mod blocks;
pub mod notes;
pub mod options;
pub mod program;
pub mod protocol;
pub mod report;
pub mod revisit;
pub mod run;
pub mod suite;

pub use archive::{write_measurements, Archive, SavedRun, ARCHIVE_VERSION};
pub use blocks::{place, BlockKey, Placement};
pub use notes::Note;
pub use options::{
    Options, TARGET_MAPREDUCE, TARGET_MEDIAN_ERROR, TARGET_PATTERNS, TARGET_SHARE_WITHIN,
    VALIDATE_MODELER,
};
pub use program::{validate_program, OWN_PROGRAM};
pub use report::{HostAtRow, JsonReport, Report, Row, Rule, Summary, Verdict};
pub use run::{load_average, reanalyze, run_suite, steps, Reanalysis};
pub use suite::{select, Case, Suite};
