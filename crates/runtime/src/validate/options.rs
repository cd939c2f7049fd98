//! How to validate: the machine's side of a run (cores, pinning, memory, caches), the
//! overhead calibration, and how measurements are reduced and fitted.

use perfcompose_core::fit::Measure;

use crate::ctx::Config;
use crate::overhead::Calibration;
use crate::plan::Plan;

/// Acceptance bound on the time error of seq/pipe/tpool configurations that fit in the
/// machine's cores (the pattern-composition paper's evaluation; DESIGN.md's quality bar).
pub const TARGET_PATTERNS: f64 = 0.10;
/// Acceptance bound for MapReduce configurations.
pub const TARGET_MAPREDUCE: f64 = 0.15;
/// The suite-level target: at most this share of the judged rows decided a miss …
pub const MAX_MISSES: f64 = 0.10;
/// … and at most this share left undecided by their budget.
pub const MAX_UNDECIDED: f64 = 0.25;

/// The default level of the one-run intervals ([`Options::level`]), as `predict`'s.
pub const DEFAULT_LEVEL: f64 = 0.95;

/// The modeler `validate` fits blocks and programs with when none is named: `segmented`,
/// which is the default modeler (`perfcompose`) unless a block's measurements step up
/// near a size where its input fills a cache of the machine ([`Options::caches`]) and no
/// single model follows them.
pub const VALIDATE_MODELER: &str = "segmented";

/// The target of a configuration's row: [`TARGET_MAPREDUCE`] for a MapReduce,
/// [`TARGET_PATTERNS`] otherwise.
pub fn row_target(plan: &Plan) -> f64 {
    if plan.has_mapreduce() {
        TARGET_MAPREDUCE
    } else {
        TARGET_PATTERNS
    }
}

/// How to validate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Cores available: thread counts above it are capped in the prediction, and blocks
    /// are timed next to at most this many threads.
    pub cores: usize,
    /// Overhead calibration to add to the modular models (`None`: pure composition).
    pub overhead: Option<Calibration>,
    /// How the runtime runs the designs (pinning, queues).
    pub config: Config,
    /// Bytes the inputs of one measurement may take.
    pub memory_limit: u128,
    /// Statistic of the repetitions that blocks and programs are reduced to before they
    /// are fitted and compared: [`Measure::default`], the minimum, unless told (the
    /// seed: median; the reason is at [`Measure`]).
    pub measure: Measure,
    /// Modeler name (see `perfcompose fit --list-modelers`).
    pub modeler: String,
    /// Sizes of the machine's data caches in bytes, one per level. Where a block's input
    /// outgrows one within its sweep, the segmented modeler may break its model there
    /// ([`super::analyze::cache_breaks`]).
    pub caches: Vec<u64>,
    /// The level of the one-run intervals the program's repetitions are counted in
    /// (0.95).
    pub level: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cores: crate::host::available_cores(),
            overhead: None,
            config: Config::default(),
            memory_limit: crate::bench::default_memory_limit(),
            measure: Measure::default(),
            modeler: VALIDATE_MODELER.to_string(),
            caches: crate::host::cache_sizes(),
            level: DEFAULT_LEVEL,
        }
    }
}
