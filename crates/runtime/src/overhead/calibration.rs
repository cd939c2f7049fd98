//! What a calibration stores: [`Calibration`] and its parts, as measured on one machine.
//! The measurements are in `calibrate`, the fits of their points in `fit`, the file in
//! `store`, and what composition makes of them in `compose`.

use serde::{Deserialize, Serialize};

use crate::bench::stats;

/// A machine's calibration, as stored ([`Calibration::save`], [`Calibration::load`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The format's version: [`CALIBRATION_VERSION`] of the build that measured it.
    ///
    /// [`CALIBRATION_VERSION`]: crate::overhead::CALIBRATION_VERSION
    pub version: u32,
    pub host: String,
    pub cores: usize,
    /// Elements per repetition and repetitions per pattern.
    pub elements: usize,
    pub repetitions: usize,
    pub patterns: Vec<PatternCost>,
    /// The wake-up cost of a pipeline hand-off to a stage that waits long enough to
    /// sleep: see [`WakeCalibration`].
    pub pipe_wake: WakeCalibration,
    /// The hand-off of a pipeline of busy stages by the slack between its two slowest
    /// stages: see [`HandoffCalibration`].
    pub pipe_handoff: HandoffCalibration,
    /// What one MapReduce job costs beyond its map and reduce calls, per reduction style
    /// and thread count.
    pub mapreduce: Vec<JobCost>,
    /// What a MapReduce job costs beyond [`Calibration::mapreduce`] when its map keeps
    /// the workers busy: see [`JobBusy`].
    pub mapreduce_busy: Vec<JobBusy>,
    /// What a task pool costs per element when its workers are busy: see [`PoolBusy`].
    pub pool_busy: Vec<PoolBusy>,
    /// Whether the workers were pinned to cores ([`Config::pin`]).
    ///
    /// [`Config::pin`]: crate::Config::pin
    pub pinned: bool,
    /// How long the pinned workers spun before sleeping on a queue, µs ([`Config::spin`];
    /// 0 unpinned): see [`Calibration::spin_of`].
    ///
    /// [`Config::spin`]: crate::Config::spin
    pub spin_us: u64,
    /// What a unit test counts for one call of a block beyond the block's own work (the
    /// `nop` unit test): see [`BlockCall`].
    pub block_call: BlockCall,
}

impl Calibration {
    /// How long the workers of a run configured as `config` spin before sleeping on a
    /// queue, as a calibration records it: the configured spin when the run pins its
    /// workers (designs that fit the cores), zero otherwise.
    pub fn spin_of(config: &crate::Config) -> std::time::Duration {
        if config.pin {
            config.spin
        } else {
            std::time::Duration::ZERO
        }
    }

    /// Whether the calibration was measured with workers spinning as a run configured as
    /// `config` spins.
    pub fn spins_as(&self, config: &crate::Config) -> bool {
        self.spin_us == Self::spin_of(config).as_micros() as u64
    }
}

/// One calibrated pattern.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PatternCost {
    /// The term measured, e.g. `pipe(nop, nop)`.
    pub term: String,
    /// Median time per element through the runtime, ns.
    pub ns_per_element: f64,
    /// Median time per element of the hand-written crossbeam-channel program, ns.
    pub baseline_ns_per_element: f64,
    /// Coefficients of variation of the repetitions (runtime, baseline).
    pub cv: f64,
    pub baseline_cv: f64,
    /// The same pattern measured with the stream driver of `validate`
    /// ([`Driver::Stream`]), runtime and baseline: what composition adds.
    ///
    /// [`Driver::Stream`]: crate::overhead::Driver::Stream
    pub stream_ns_per_element: f64,
    pub stream_baseline_ns_per_element: f64,
    /// The fastest repetition with the stream driver, ns per element: what composition
    /// adds when `validate` reduces its measurements with the minimum (the default;
    /// [`Calibration::for_statistic`]).
    pub stream_min_ns_per_element: f64,
}

impl PatternCost {
    /// The cost composition adds: the median with the stream driver, or with `minimum`
    /// its fastest repetition.
    pub fn composition_ns(&self, minimum: bool) -> f64 {
        if minimum {
            self.stream_min_ns_per_element
        } else {
            self.stream_ns_per_element
        }
    }
}

/// What a `pipe` hand-off costs beyond `pipe(nop, nop)` when its stages are slow.
///
/// With `nop` stages both threads stay busy and a hand-off costs a queue operation. Once
/// a stage waits longer than the workers spin on an empty queue before they sleep, the
/// faster stage of the pair sleeps between elements, and every element then costs the
/// slower one a wake-up (a futex wake and, on a VM, an inter-processor interrupt to the
/// idle core): 1.5–3 µs per element on a 2-core VM, more than `qsort` of a hundred
/// elements. Measured as `pipe(spin(T), nop)` minus `spin(T)` for busy blocks of T = 1 to
/// 32 µs at the time `W` the `nop` stage waits per element, on streams of arrays like a
/// design's ([`WAKE_BYTES_PER_NS`]), and composed as straight lines through those points,
/// fitted when calibrating ([`WakeCalibration::fit`]). Composition applies the cost to
/// the wait of the stages next to a pipeline's slowest one: its slowest stage's time less
/// the next slowest's.
///
/// [`WAKE_BYTES_PER_NS`]: crate::overhead::WAKE_BYTES_PER_NS
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakeCalibration {
    pub points: Vec<WakePoint>,
    /// The cost as straight lines between these `(wait, extra)` knots, ns: none up to
    /// the first, the last one's beyond it; empty when no wait that the workers do not
    /// spin through costs extra.
    pub knots: Vec<(f64, f64)>,
}

/// One measured stage time of the wake-up calibration ([`WakeCalibration`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakePoint {
    /// Busy time of the block, ns.
    pub spin_ns: f64,
    /// Median ns per element of the block alone, and of `pipe(block, nop)`.
    pub stage_ns: f64,
    pub pipe_ns: f64,
}

/// What one `pipe` hand-off costs a pipeline of busy stages, by the slack between its two
/// slowest stages (the slower one's time less the other's).
///
/// Two busy stages of equal time rarely wait for each other: the queue between them
/// absorbs the calls' variation, and a hand-off costs little more than one stage's queue
/// operations. Once one stage is faster by a few hundred ns, it waits at its queue for
/// every element, checking it while the slower stage puts the next element in, and each
/// hand-off costs more: two stages of 2 µs with calls varying ±15% paid about 60 ns over
/// one stage with no slack and 210–260 ns at slacks of 250–1,000 ns, against 200 ns at
/// any slack for `pipe(nop, nop)`'s hand-off (docs/runtime.md, item 6 of the
/// calibration). Measured as `pipe(spin(T), spin(T − d))`
/// (both spins varying from call to call as [`JOB_SPIN_SPREAD`], in different orders) and
/// `pipe(spin(T), nop)` against `spin(T)`: no slack at each T of
/// [`HANDOFF_EQUAL_SPINS_NS`] (the median of the three is the figure: one reads 20–90 ns
/// from calibration to calibration), the slacks `d` of [`HANDOFF_SLACKS`] at
/// T = [`HANDOFF_SPIN_NS`]. Composition adds the extra at no slack for every hand-off
/// instead of `pipe(nop, nop)`'s, and the rise beyond it as straight lines through the
/// points at the pipeline's slack ([`HandoffCalibration::ramp_knots`]); the wake-up
/// ([`WakeCalibration`]) adds what waits too long to spin through.
///
/// [`JOB_SPIN_SPREAD`]: crate::overhead::JOB_SPIN_SPREAD
/// [`HANDOFF_EQUAL_SPINS_NS`]: crate::overhead::HANDOFF_EQUAL_SPINS_NS
/// [`HANDOFF_SLACKS`]: crate::overhead::HANDOFF_SLACKS
/// [`HANDOFF_SPIN_NS`]: crate::overhead::HANDOFF_SPIN_NS
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HandoffCalibration {
    pub points: Vec<HandoffPoint>,
}

/// One measured slack of the hand-off calibration ([`HandoffCalibration`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HandoffPoint {
    /// Mean busy time of the slower stage, ns.
    pub spin_ns: f64,
    /// The slower stage's mean busy time less the other's, ns (the whole busy time when
    /// the other stage is `nop`).
    pub slack_ns: f64,
    /// ns per element of the slower stage alone: median and fastest repetition.
    pub stage_ns: f64,
    pub stage_min_ns: f64,
    /// ns per element of the pipeline: median and fastest repetition.
    pub pipe_ns: f64,
    pub pipe_min_ns: f64,
}

impl HandoffPoint {
    /// What the second stage added, with the statistic composition uses (fastest
    /// repetitions with `minimum`, medians otherwise).
    pub fn extra_ns(&self, minimum: bool) -> f64 {
        if minimum {
            self.pipe_min_ns - self.stage_min_ns
        } else {
            self.pipe_ns - self.stage_ns
        }
    }
}

impl HandoffCalibration {
    /// The hand-off of stages with no slack: the median extra of the points at slack 0
    /// (never negative); `None` without such points.
    pub fn equal_ns(&self, minimum: bool) -> Option<f64> {
        let at_zero: Vec<f64> = self
            .points
            .iter()
            .filter(|p| p.slack_ns <= 0.0)
            .map(|p| p.extra_ns(minimum))
            .filter(|e| e.is_finite())
            .collect();
        (!at_zero.is_empty()).then(|| stats::median(&at_zero).max(0.0))
    }
}

/// A task pool of `threads` ≤ cores workers whose tasks keep them busy: `tpool(n, spin(T))`
/// takes `(T + stage)/n + extra_ns` per element, where `stage` is one stage's cost
/// (`nop`) and `spin(T)` a block busy for `T` without touching memory. With `nop` tasks the
/// workers mostly wait on the shared queue and the pool costs less than this:
/// `tpool(2, nop)` added 42 ns to a stage where two busy workers lost 160–210 ns per
/// element (docs/runtime.md, "Overhead of the patterns").
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PoolBusy {
    pub threads: usize,
    /// Median over the spin times of [`POOL_SPINS`] of what each point adds, ns per
    /// element.
    ///
    /// [`POOL_SPINS`]: crate::overhead::POOL_SPINS
    pub extra_ns: f64,
    /// Per spin time: `(T, pool ns per element, spin(T) alone ns per element)`.
    pub points: Vec<(f64, f64, f64)>,
}

/// The cost of one MapReduce job with trivial blocks: handing the phases to the pool's
/// threads, waking them, collecting their results, and the shuffle's bookkeeping. A
/// job of the histogram benchmark is one element of the stream, so this is a
/// per-element cost.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobCost {
    /// `pairwise` or `per_key`.
    pub reduce: String,
    pub threads: usize,
    /// Median ns per job.
    pub ns_per_job: f64,
}

/// A MapReduce job whose map keeps the workers busy, against [`JobCost`]'s trivial one.
///
/// With a map of nanoseconds the pool's workers never fall asleep between phases: a
/// worker still spinning on the job queue takes the next task, and on two threads one
/// worker often maps all of a trivial job before the other wakes. Once a job's map takes
/// longer than that spin, every phase hands its tasks to sleeping workers on other cores
/// and the calling thread sleeps until the last result: two wake-ups on the critical
/// path of each phase, and a worker that wakes late maps less of the job. On a shared
/// 2-core KVM guest a blocked thread on the other core woke 15–35 µs (median) after the
/// send, a fifth to a half of a two-thread job of four small images (150 µs). Measured as
/// `mapreduce(n, spin(T))` on jobs of [`JOB_INPUTS`] inputs for each `T` of
/// [`JOB_SPINS`] (n ≤ cores), the calls spinning ±15% around `T` as real maps vary
/// ([`JOB_SPIN_SPREAD`]: equal spins finish in lock step and hide the wake-ups, +17 µs at
/// an ideal of 256 µs against +36–46 µs with the spread and +41 µs for the small-image
/// histogram); the extra over the ideal `JOB_INPUTS · T / n` and over the trivial job's
/// cost is fitted as `min(cap, slope · ideal)` when calibrating, and added per job like
/// the pipeline wake-up.
///
/// [`JOB_INPUTS`]: crate::overhead::JOB_INPUTS
/// [`JOB_SPINS`]: crate::overhead::JOB_SPINS
/// [`JOB_SPIN_SPREAD`]: crate::overhead::JOB_SPIN_SPREAD
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobBusy {
    /// `pairwise` or `per_key`.
    pub reduce: String,
    pub threads: usize,
    pub points: Vec<JobPoint>,
    /// Extra cost per ns of ideal job time before it levels off.
    pub slope: f64,
    /// Where it levels off, ns per job.
    pub cap_ns: f64,
}

/// One measured busy job ([`JobBusy`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobPoint {
    /// Busy time of one map call, ns.
    pub spin_ns: f64,
    /// `JOB_INPUTS · spin / threads`, ns.
    pub ideal_ns: f64,
    /// Median ns per job.
    pub job_ns: f64,
}

/// What a block's unit test counts per call beyond the block's own work: the `nop` unit
/// test, its input warm, at [`BLOCK_CALL_X`] (time per call through the harness of
/// `validate`'s unit tests: the dispatch, the panic guard, keeping the output).
///
/// Composition adds the block models, each timed with its call, and the calibrated
/// patterns, each timed on `nop` programs whose blocks are called too: every call of a
/// design would be counted twice. [`Composer::overhead_ns`] takes one call out per block,
/// as the design composes its blocks (two for `seq(a, b)`, one for a pipeline's slowest
/// stage, a pool's inner calls over its workers). Counted twice, `seq(inc, nop)` at
/// x = 1,024 ran 79 ns over its `inc` where composition added 151; the `nop` unit test
/// reads about 40 ns.
///
/// [`BLOCK_CALL_X`]: crate::overhead::BLOCK_CALL_X
/// [`Composer::overhead_ns`]: crate::overhead::Composer::overhead_ns
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlockCall {
    /// The size the `nop` unit test ran at.
    pub x: usize,
    /// ns per call: median and fastest repetition.
    pub ns: f64,
    pub min_ns: f64,
}

impl BlockCall {
    /// ns per call with the statistic composition uses (fastest repetition with
    /// `minimum`, median otherwise).
    pub fn ns(&self, minimum: bool) -> f64 {
        if minimum {
            self.min_ns
        } else {
            self.ns
        }
    }
}
