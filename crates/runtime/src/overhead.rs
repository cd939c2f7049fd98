//! The overhead model: what each pattern itself costs per element, measured with `nop`
//! blocks, next to a hand-written crossbeam-channel program doing the same hand-offs.
//!
//! Seed 000 attributes most of its prediction error to unmodelled overhead and
//! contention. Calibration runs `nop`, `seq(nop, nop)`, `pipe(nop, nop)` and
//! `tpool(n, nop)` on this machine and stores the per-element times per host
//! ([`Calibration::default_path`]). Composition then adds [`Calibration::overhead_ns`] of
//! the term: the single-stage cost plus, for every pattern node, its extra cost over a
//! single stage. The constant lands where it matters — small elements, where hand-offs
//! are a visible share of the time — and vanishes against large work.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crossbeam_channel::bounded;
use serde::{Deserialize, Serialize};

use crate::bench::stats;
use crate::ctx::Config;
use crate::data::Data;
use crate::error::Error;
use crate::kernel::Registry;
use crate::plan::Plan;

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
    pub stream_ns_per_element: f64,
    pub stream_baseline_ns_per_element: f64,
    /// The fastest repetition with the stream driver, ns per element: what composition
    /// adds when `validate` reduces its measurements with the minimum (the default;
    /// [`Calibration::for_statistic`]).
    pub stream_min_ns_per_element: f64,
}

impl PatternCost {
    /// The cost composition adds (see [`Composer::overhead_ns`]): the median with the
    /// stream driver, or with `minimum` its fastest repetition.
    pub fn composition_ns(&self, minimum: bool) -> f64 {
        if minimum {
            self.stream_min_ns_per_element
        } else {
            self.stream_ns_per_element
        }
    }
}

/// What composition adds for calibrated `term` ([`PatternCost::composition_ns`]).
fn pattern_ns(patterns: &[PatternCost], term: &str, minimum: bool) -> Option<f64> {
    patterns
        .iter()
        .find(|p| p.term == term)
        .map(|p| p.composition_ns(minimum))
}

/// The baseline of the wake-up fit ([`fit_wake_knots`]): `pipe(nop, nop)`'s extra over `nop`,
/// and `nop`, with the stream driver. Medians, as the wake-up's own points are.
fn wake_baseline(patterns: &[PatternCost]) -> (f64, f64) {
    let nop = pattern_ns(patterns, "nop", false).unwrap_or(0.0);
    let pipe = pattern_ns(patterns, "pipe(nop, nop)", false).unwrap_or(0.0);
    ((pipe - nop).max(0.0), nop)
}

/// The version of the calibration file this build writes and reads
/// ([`Calibration::load`]). A change to what a calibration stores, or to what a stored
/// figure means, raises it; a file of another version is refused with a request to
/// recalibrate.
pub const CALIBRATION_VERSION: u32 = 1;

/// A machine's calibration, as stored ([`Calibration::save`], [`Calibration::load`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// [`CALIBRATION_VERSION`] of the build that measured it.
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

/// What a block's unit test counts per call beyond the block's own work: the `nop` unit
/// test, its input warm, at [`BLOCK_CALL_X`] (time per call through the harness of
/// `validate`'s unit tests: the dispatch, the panic guard, keeping the output).
///
/// Composition adds the block models, each timed with its call, and the calibrated
/// patterns, each timed on `nop` programs whose blocks are called too: every call of a
/// design was counted twice. [`Composer::overhead_ns`] takes one call out per block,
/// as the design composes its blocks (two for `seq(a, b)`, one for a pipeline's slowest
/// stage, a pool's inner calls over its workers). Runs AE–AK timed `seq(inc, nop)` at
/// x = 1,024 at a median of 79 ns over its `inc`, where composition added 151; the `nop`
/// unit test read 38–41 ns on both hosts (docs/results/call-cost-whatif).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BlockCall {
    /// The size the `nop` unit test ran at.
    pub x: usize,
    /// ns per call: median and fastest repetition.
    pub ns: f64,
    pub min_ns: f64,
}

/// The size of the [`BlockCall`] calibration: the smallest of the seed's grid, where a
/// repetition batches the most calls (the clock read weighs least).
pub const BLOCK_CALL_X: usize = 1024;

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

    /// From one measured point of the `nop` unit test: its median and its fastest
    /// repetition. `None` without repetitions.
    pub fn of(p: &crate::bench::PointStats) -> Option<BlockCall> {
        let min_ns = p.values.iter().copied().reduce(f64::min)?;
        Some(BlockCall {
            x: p.x as usize,
            ns: p.median,
            min_ns,
        })
    }
}

/// Measure [`BlockCall`]: the `nop` unit test, input warm, at [`BLOCK_CALL_X`],
/// `repetitions` repetitions (at least 7) of at least 200 µs of calls each.
pub fn calibrate_block_call(repetitions: usize) -> Result<BlockCall, Error> {
    let registry = Registry::builtin();
    let nop = registry.get("nop")?;
    let reps = repetitions.max(7) as u32;
    let spec = crate::bench::Sampling {
        warmup: 1,
        min_reps: reps,
        max_reps: reps,
        target: None,
        min_sample: std::time::Duration::from_micros(200),
        max_point_time: std::time::Duration::from_secs(60),
        batch: None,
    };
    let p = crate::bench::time_kernel_in(
        nop.as_ref(),
        BLOCK_CALL_X,
        &crate::kernel::Inputs::default(),
        &spec,
        crate::bench::default_memory_limit(),
        crate::bench::InputState::Warm,
    )?;
    BlockCall::of(&p).ok_or_else(|| Error::Run("the `nop` unit test took no repetition".into()))
}

/// A task pool of `threads` ≤ cores workers whose tasks keep them busy: `tpool(n, spin(T))`
/// takes `(T + stage)/n + extra_ns` per element, where `stage` is one stage's cost
/// (`nop`) and `spin(T)` a block busy for `T` without touching memory. With `nop` tasks the
/// workers mostly wait on the shared queue and the pool costs less than this: on this
/// machine `tpool(2, nop)` adds 42 ns to a stage where two busy workers lose 160–210 ns per
/// element (docs/runtime.md, "Blocks inside the running program").
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PoolBusy {
    pub threads: usize,
    /// Median over the spin times of [`POOL_SPINS`], ns per element.
    pub extra_ns: f64,
    /// Per spin time: `(T, pool ns per element, spin(T) alone ns per element)`.
    pub points: Vec<(f64, f64, f64)>,
}

/// Median ns per element of two designs of a block busy for `ns`, streams of about
/// 20 ms through the stream driver, alternating after one untimed stream each.
fn side_by_side(
    a: &crate::Program<u64, u64>,
    b: &crate::Program<u64, u64>,
    ns: u64,
    repetitions: usize,
) -> Result<(f64, f64), Error> {
    let count = (20_000_000 / ns).max(64);
    side_by_side_on(a, b, || (0..count).collect(), repetitions)
}

/// [`side_by_side`] on streams made by `stream` (a fresh one for every run, made before
/// its clock starts).
fn side_by_side_on<E: Send + std::fmt::Debug + 'static>(
    a: &crate::Program<E, E>,
    b: &crate::Program<E, E>,
    stream: impl Fn() -> Vec<E>,
    repetitions: usize,
) -> Result<(f64, f64), Error> {
    let (ta, tb) = side_by_side_samples(a, b, stream, repetitions)?;
    Ok((stats::median(&ta), stats::median(&tb)))
}

/// The ns per element of every timed repetition of [`side_by_side_on`], `(a, b)`.
fn side_by_side_samples<E: Send + std::fmt::Debug + 'static>(
    a: &crate::Program<E, E>,
    b: &crate::Program<E, E>,
    stream: impl Fn() -> Vec<E>,
    repetitions: usize,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    let time = |p: &crate::Program<E, E>| -> Result<f64, Error> {
        let elements = stream();
        let count = elements.len().max(1);
        let m = p
            .run_stream(elements)
            .map_err(|e| Error::Run(e.to_string()))?;
        Ok(m.elapsed.as_nanos() as f64 / count as f64)
    };
    time(a)?;
    time(b)?;
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..repetitions.max(1) {
        ta.push(time(a)?);
        tb.push(time(b)?);
    }
    Ok((ta, tb))
}

/// The median and the fastest of `samples` (ns per element of repetitions).
fn median_min(samples: &[f64]) -> (f64, f64) {
    let fastest = samples.iter().copied().fold(f64::INFINITY, f64::min);
    (stats::median(samples), fastest)
}

/// Busy times of the task-pool calibration, ns.
pub const POOL_SPINS: [u64; 3] = [1_000, 2_000, 4_000];

/// Measure `tpool(n, spin(T))` against `spin(T)` for `n` from 2 to `cores` and each `T`
/// of [`POOL_SPINS`] (stream driver, streams of about 20 ms, alternating).
pub fn calibrate_pool_busy(
    cores: usize,
    repetitions: usize,
    config: &Config,
) -> Result<Vec<PoolBusy>, Error> {
    let build =
        |p| crate::Program::with_config(p, config.clone()).map_err(|e| Error::Run(e.to_string()));
    let mut out = Vec::new();
    for n in 2..=cores {
        let mut points = Vec::new();
        for &ns in &POOL_SPINS {
            let single = build(spin_block(ns))?;
            let pool = build(crate::tpool(n, spin_block(ns)))?;
            let (a, b) = side_by_side(&single, &pool, ns, repetitions)?;
            points.push((ns as f64, b, a));
        }
        out.push(pool_busy_of(n, points));
    }
    Ok(out)
}

/// [`PoolBusy`] from its measured points: the extra of each point is
/// `pool − single/n` (the spin alone through one stage is `T + stage`); the median over
/// the points.
pub fn pool_busy_of(threads: usize, points: Vec<(f64, f64, f64)>) -> PoolBusy {
    let extras: Vec<f64> = points
        .iter()
        .map(|&(_, pool, single)| pool - single / threads as f64)
        .collect();
    PoolBusy {
        threads,
        extra_ns: if extras.is_empty() {
            0.0
        } else {
            stats::median(&extras)
        },
        points,
    }
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

/// Inputs per job of the MapReduce calibration.
pub const JOB_INPUTS: usize = 8;

/// Measure a MapReduce job whose map emits one key and whose reduction adds, for both
/// reduction styles and `threads` from 1 to 2·cores (powers of two).
pub fn calibrate_mapreduce(
    cores: usize,
    repetitions: usize,
    config: &Config,
) -> Result<Vec<JobCost>, Error> {
    let mut out = Vec::new();
    let mut n = 1;
    while n <= (2 * cores).max(2) {
        for style in ["pairwise", "per_key"] {
            let mr = crate::mapreduce(n, "one", |v: &u64| vec![*v], job_reduce(style));
            let program = crate::Program::with_config(mr, config.clone())
                .map_err(|e| Error::Run(e.to_string()))?;
            let time = |count: usize| time_jobs(&program, count);
            let probe = time(64)?;
            let count = ((20e6 / probe.max(1.0)) as usize).clamp(64, 100_000);
            let samples = (0..repetitions.max(1))
                .map(|_| time(count))
                .collect::<Result<Vec<_>, _>>()?;
            out.push(JobCost {
                reduce: style.into(),
                threads: n,
                ns_per_job: stats::median(&samples),
            });
        }
        n *= 2;
    }
    Ok(out)
}

/// One timed stream of a MapReduce calibration: ns per job over `count` jobs of
/// [`JOB_INPUTS`] inputs each.
fn time_jobs(program: &crate::Program<Vec<u64>, Vec<u64>>, count: usize) -> Result<f64, Error> {
    let jobs: Vec<Vec<u64>> = (0..count)
        .map(|_| (0..JOB_INPUTS as u64).collect())
        .collect();
    let m = program
        .run_stream(jobs)
        .map_err(|e| Error::Run(e.to_string()))?;
    Ok(m.elapsed.as_nanos() as f64 / count as f64)
}

/// A MapReduce job whose map keeps the workers busy, against [`JobCost`]'s trivial one.
///
/// With a map of nanoseconds the pool's workers never fall asleep between phases: a
/// worker still spinning on the job queue takes the next task, and on two threads one
/// worker often maps all of a trivial job before the other wakes. Once a job's map takes
/// longer than that spin, every phase hands its tasks to sleeping workers on other cores
/// and the calling thread sleeps until the last result: two wake-ups on the critical
/// path of each phase, and a worker that wakes late maps less of the job. On the 2-core
/// KVM guest this was built on, a blocked thread on the other core woke 15–35 µs
/// (median) after the send on a shared host (`examples/cpu_gaps`, 2026-11-24), a fifth
/// to a half of a two-thread job of four small images (150 µs). Measured as
/// `mapreduce(n, spin(T))` on jobs of [`JOB_INPUTS`] inputs for each `T` of
/// [`JOB_SPINS`] (n ≤ cores), the calls spinning ±15% around `T` as real maps vary
/// ([`JOB_SPIN_SPREAD`]; equal spins finish in lock step and hid the wake-ups: +17 µs at
/// an ideal of 256 µs against +36–46 µs with the spread and +41 µs for the small-image
/// histogram, 2026-11-24), the extra over the ideal `JOB_INPUTS · T / n` and over the
/// trivial job's cost is fitted as
/// `min(cap, slope · ideal)` ([`fit_saturating`]) and added per job like the pipeline
/// wake-up.
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

/// One measured busy job.
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

/// Busy times of one map call in the busy-job calibration, ns.
pub const JOB_SPINS: [u64; 4] = [1_000, 4_000, 16_000, 64_000];

/// How long the calls of a busy job's map spin, as fractions of the mean (±15%, summing
/// to [`JOB_INPUTS`], so a job's total work is exactly `JOB_INPUTS · T` and no job can
/// beat its ideal). Job `j` starts the pattern at `3j mod 8`, so the calls the threads
/// claim differ from job to job.
///
/// Maps of equal length finish in lock step, so the thread that waits for the last
/// result still spins on its queue when the result comes and the helper is still awake
/// when the next job does; real maps vary from call to call, and then both sleep.
/// `mr_phases`, pinned, two threads, jobs of 8 inputs (2026-11-24, 14:55–15:05 UTC):
/// equal spins of 64 µs started the helper 0.7–1.3 µs after the caller and left
/// 1.6–2.4 µs between jobs, the small-image histogram (76 µs; the middle 80% of its
/// calls spread over 16–40% of the median) 9.7–10.4 µs and 23–24 µs.
pub const JOB_SPIN_SPREAD: [f64; JOB_INPUTS] = [1.15, 0.9, 1.0, 0.85, 1.1, 0.95, 1.05, 1.0];

/// A map busy for `ns` times the call's share of [`JOB_SPIN_SPREAD`] without touching
/// memory, emitting one key. Calls are counted over the program's life; every job makes
/// exactly [`JOB_INPUTS`] of them, one after the other job's.
fn spin_map(ns: u64) -> impl Fn(&u64) -> Vec<u64> + Send + Sync + 'static {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    move |v: &u64| {
        let i = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        spin((ns as f64 * spin_share(i)) as u64);
        vec![*v]
    }
}

/// The share of call `i` (job `i / 8`, call `i mod 8` of it): [`JOB_SPIN_SPREAD`]
/// rotated by `3 · job`.
fn spin_share(i: usize) -> f64 {
    let (job, call) = (i / JOB_INPUTS, i % JOB_INPUTS);
    JOB_SPIN_SPREAD[(call + 3 * job) % JOB_INPUTS]
}

/// Measure `mapreduce(n, spin(T))` for both reduction styles, `n` = 1, 2, 4, … up to
/// `cores` (a map that spins for a wall-clock time cannot stand for work on
/// oversubscribed cores; more threads use the nearest calibrated count) and each `T` of
/// [`JOB_SPINS`] (streams of about 20 ms, one untimed first), and fit each against the
/// trivial jobs `trivial`.
pub fn calibrate_mapreduce_busy(
    cores: usize,
    repetitions: usize,
    config: &Config,
    trivial: &[JobCost],
) -> Result<Vec<JobBusy>, Error> {
    let mut out = Vec::new();
    let mut n = 1;
    while n <= cores.max(1) {
        for style in ["pairwise", "per_key"] {
            let mut points = Vec::new();
            for &ns in &JOB_SPINS {
                let mr = crate::mapreduce(n, "spin", spin_map(ns), job_reduce(style));
                let program = crate::Program::with_config(mr, config.clone())
                    .map_err(|e| Error::Run(e.to_string()))?;
                let ideal = (JOB_INPUTS as u64 * ns) as f64 / n as f64;
                let count = ((20e6 / ideal) as usize).clamp(16, 10_000);
                let time = || time_jobs(&program, count);
                time()?;
                let samples = (0..repetitions.max(1))
                    .map(|_| time())
                    .collect::<Result<Vec<_>, _>>()?;
                points.push(JobPoint {
                    spin_ns: ns as f64,
                    ideal_ns: ideal,
                    job_ns: stats::median(&samples),
                });
            }
            out.push(job_busy_of(style, n, points, trivial));
        }
        n *= 2;
    }
    Ok(out)
}

/// [`JobBusy`] from its measured points: the extra of a point is
/// `job − ideal − trivial job` (the trivial job of the same style and thread count, 0
/// when none was measured), fitted with [`fit_saturating`] against the ideal time.
pub fn job_busy_of(
    style: &str,
    threads: usize,
    points: Vec<JobPoint>,
    trivial: &[JobCost],
) -> JobBusy {
    let base = trivial
        .iter()
        .find(|j| j.reduce == style && j.threads == threads)
        .map_or(0.0, |j| j.ns_per_job);
    let extra: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.ideal_ns, p.job_ns - p.ideal_ns - base))
        .collect();
    let (slope, cap_ns) = fit_saturating(&extra);
    JobBusy {
        reduce: style.into(),
        threads,
        points,
        slope,
        cap_ns,
    }
}

/// The calibrated reduction style of the kernel `reduce`: per key for built-in per-key
/// kernels, pairwise otherwise.
fn job_style(reduce: &str) -> &'static str {
    let per_key = Registry::builtin()
        .get(reduce)
        .is_ok_and(|k| matches!(k.op(), crate::Op::ReducePerKey(_)));
    if per_key {
        "per_key"
    } else {
        "pairwise"
    }
}

/// The reduction of the MapReduce calibrations: add the one key.
fn job_reduce(style: &str) -> crate::Reduce<u64> {
    if style == "pairwise" {
        crate::Reduce::pairwise("add", |a: &mut [u64], b: &[u64]| a[0] += b[0])
    } else {
        crate::Reduce::per_key("sum", |_k, v: &[u64]| v.iter().sum())
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
/// design's ([`WAKE_BYTES_PER_NS`]), and composed as straight lines through those points
/// ([`fit_wake_knots`], fitted when calibrating). Composition applies the cost to the
/// wait of the stages next to a pipeline's slowest one: its slowest stage's time less
/// the next slowest's.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakeCalibration {
    pub points: Vec<WakePoint>,
    /// The cost as straight lines between these `(wait, extra)` knots, ns: none up to
    /// the first, the last one's beyond it; empty when no wait the workers do not spin
    /// through costs extra ([`fit_wake_knots`] on the [`slept_points`]).
    pub knots: Vec<(f64, f64)>,
}

impl WakeCalibration {
    /// The wake-up calibration of measured `points`: its knots fitted on the points
    /// whose waiting stage could have slept with workers that spin `spin_ns` before
    /// sleeping ([`slept_points`]; a wait shorter than the spin is spun through and pays
    /// no wake-up, whatever its point read), over the baseline of `pipe(nop, nop)`'s
    /// extra over `nop` and the `nop` stage ([`fit_wake_knots`]).
    pub fn fit(
        points: Vec<WakePoint>,
        pipe_nop_extra_ns: f64,
        nop_stage_ns: f64,
        spin_ns: f64,
    ) -> WakeCalibration {
        let slept = slept_points(&points, nop_stage_ns, spin_ns);
        WakeCalibration {
            knots: fit_wake_knots(&slept, pipe_nop_extra_ns, nop_stage_ns),
            points,
        }
    }
}

/// The stages of a pipeline with nested pipelines flattened: `pipe(pipe(a, b), c)` →
/// `a, b, c`.
fn chain<'a>(plan: &'a Plan, out: &mut Vec<&'a Plan>) {
    match plan {
        Plan::Pipe(parts) => parts.iter().for_each(|p| chain(p, out)),
        other => out.push(other),
    }
}

/// What [`each_pipeline`] calls: `(pipe, index, scale, stages)`.
pub(crate) type OnPipeline<'a> = dyn FnMut(&Plan, usize, f64, &[&Plan]) + 'a;

/// Call `f(pipe, index, scale, stages)` for every pipeline of `plan`: nested pipes are
/// one chain of `stages`; `index` counts the pipelines met so far in the order
/// composition lists them (outermost first, directly nested pipes one pipeline:
/// [`perfcompose_core::compose::Composition::pipelines`]), so that a term can name the
/// pipeline it depends on; `scale` is the task pools' around it (thread counts capped at
/// `cores`).
pub(crate) fn each_pipeline(plan: &Plan, cores: usize, f: &mut OnPipeline<'_>) {
    fn walk(plan: &Plan, cores: usize, scale: f64, pipeline: &mut usize, f: &mut OnPipeline<'_>) {
        match plan {
            Plan::Pipe(_) => {
                let mut stages = Vec::new();
                chain(plan, &mut stages);
                let index = *pipeline;
                *pipeline += 1;
                f(plan, index, scale, &stages);
                stages
                    .into_iter()
                    .for_each(|p| walk(p, cores, scale, pipeline, f));
            }
            Plan::Seq(parts) => parts
                .iter()
                .for_each(|p| walk(p, cores, scale, pipeline, f)),
            Plan::TPool(n, inner) => {
                let n = (*n).min(cores.max(1)) as f64;
                walk(inner, cores, scale * n, pipeline, f)
            }
            Plan::Kernel(_) | Plan::MapReduce { .. } | Plan::Unsupported { .. } => {}
        }
    }
    walk(plan, cores, 1.0, &mut 0, f)
}

/// A calibrated curve's segments ([`wake_segments`]) as saturating terms named `what` on
/// the slack of one pipeline: `(index, scale)` its index in the composition and the scale
/// of the task pools around it.
fn curve_terms(
    what: String,
    segments: &[(f64, f64, f64)],
    (index, scale): (usize, f64),
    relative_threshold: f64,
    out: &mut Vec<perfcompose_core::compose::predict::Saturating>,
) {
    let k = segments.len();
    for (i, &(from, slope, rise)) in segments.iter().enumerate() {
        out.push(perfcompose_core::compose::predict::Saturating {
            what: format!("{what} (part {} of {k} of the calibrated curve)", i + 1),
            scale,
            slope,
            cap_ns: rise,
            threshold_ns: from,
            pipeline_slack: Some(index),
            relative_threshold,
        });
    }
}

/// One measured stage time.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WakePoint {
    /// Busy time of the block, ns.
    pub spin_ns: f64,
    /// Median ns per element of the block alone, and of `pipe(block, nop)`.
    pub stage_ns: f64,
    pub pipe_ns: f64,
}

/// Busy times of the wake-up calibration, ns: dense between 4 and 16 µs, where the cost
/// starts (the waiting stage stops spinning and sleeps) and grows fastest.
pub const WAKE_SPINS: [u64; 9] = [
    1_000, 2_000, 4_000, 6_000, 8_000, 12_000, 16_000, 24_000, 32_000,
];

/// Bytes the wake-up calibration's elements carry per ns of stage time: `spin(T)` passes
/// arrays of `T · 10 / 8` `u64`s, as `inc` does (8 bytes per element at 0.8 ns each), so
/// that a 20 ms stream holds about 200 MB like the streams `validate` runs. On `u64`
/// elements the same stages pay up to twice as much at waits of 6–16 µs
/// (`examples/wake_blocks`, docs/validation.md "What a wake-up costs depends on the
/// stream").
pub const WAKE_BYTES_PER_NS: u64 = 10;

/// A block busy for `ns` without touching memory.
fn spin_block(ns: u64) -> crate::Pattern<u64, u64> {
    spin_block_of(ns)
}

/// [`spin_block`] on elements of any type, passed through untouched.
fn spin_block_of<E: Send + 'static>(ns: u64) -> crate::Pattern<E, E> {
    crate::block(format!("spin{ns}"), move |v: E| {
        spin(ns);
        v
    })
}

/// Stay busy for `ns` of wall-clock time without touching memory.
fn spin(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

/// A program on arrays with `config`, for the wake-up and hand-off calibrations.
fn array_program(
    pattern: crate::Pattern<Vec<u64>, Vec<u64>>,
    config: &Config,
) -> Result<crate::Program<Vec<u64>, Vec<u64>>, Error> {
    crate::Program::with_config(pattern, config.clone()).map_err(|e| Error::Run(e.to_string()))
}

/// Streams of about 20 ms for a stage busy `ns` per element: arrays of
/// [`WAKE_BYTES_PER_NS`] bytes per ns of it, like a design's elements.
fn array_stream(ns: u64) -> impl Fn() -> Vec<Vec<u64>> {
    let count = (20_000_000 / ns.max(1)).max(64);
    let len = (ns * WAKE_BYTES_PER_NS / 8).max(1) as usize;
    move || (0..count).map(|i| vec![i; len]).collect()
}

/// Measure `pipe(spin(T), nop)` against `spin(T)` for each T of [`WAKE_SPINS`] (stream
/// driver, streams of about 20 ms of arrays of [`WAKE_BYTES_PER_NS`] bytes per ns of `T`,
/// alternating) and fit the cost through the points ([`WakeCalibration::fit`]).
pub fn calibrate_wake(
    repetitions: usize,
    config: &Config,
    pipe_nop_extra_ns: f64,
    nop_stage_ns: f64,
) -> Result<WakeCalibration, Error> {
    let mut points = Vec::new();
    for &ns in &WAKE_SPINS {
        let single = array_program(spin_block_of(ns), config)?;
        let piped = array_program(
            crate::pipe(
                spin_block_of(ns),
                crate::block("nop", std::hint::black_box::<Vec<u64>>),
            ),
            config,
        )?;
        let (stage_ns, pipe_ns) = side_by_side_on(&single, &piped, array_stream(ns), repetitions)?;
        points.push(WakePoint {
            spin_ns: ns as f64,
            stage_ns,
            pipe_ns,
        });
    }
    let spin_ns = Calibration::spin_of(config).as_micros() as f64 * 1e3;
    Ok(WakeCalibration::fit(
        points,
        pipe_nop_extra_ns,
        nop_stage_ns,
        spin_ns,
    ))
}

/// What one `pipe` hand-off costs a pipeline of busy stages, by the slack between its two
/// slowest stages (the slower one's time less the other's).
///
/// Two busy stages of equal time rarely wait for each other: the queue between them
/// absorbs the calls' variation, and a hand-off costs little more than one stage's queue
/// operations. Once one stage is faster by a few hundred ns, it waits at its queue for
/// every element, checking it while the slower stage puts the next element in, and each
/// hand-off costs more. The first calibration (`bench --overhead`, 2026-11-26 22:34 UTC,
/// pinned, fastest of 11 streams each): two stages of T = 2 µs with calls varying ±15%
/// paid 59 ns over one stage with no slack, 229, 260 and 213 ns at slacks of 250, 500
/// and 1,000 ns, and 220 before `nop`. Run AI's designs agree: `pipe(inc, inc)` at x = 1,024 ran 78 ns over its
/// slower stage's unit test, `pipe(inc, nop)` 307 ns over its `inc`, where composition
/// added `pipe(nop, nop)`'s 202 ns to both (`pipe(inc, inc)` 10.3% too slow, `pipe(inc,
/// nop)` 7.3% too fast). Measured as `pipe(spin(T), spin(T − d))` (both spins varying from
/// call to call as [`JOB_SPIN_SPREAD`], in different orders) and `pipe(spin(T), nop)`
/// against `spin(T)`: no slack at each T of [`HANDOFF_EQUAL_SPINS_NS`] (the median of
/// the three is the figure: one reads 20–90 ns from calibration to calibration), the
/// slacks `d` of [`HANDOFF_SLACKS`] at T = [`HANDOFF_SPIN_NS`].
/// Composition adds the extra at no slack for every hand-off instead of `pipe(nop, nop)`'s,
/// and the rise beyond it as straight lines through the points at the pipeline's slack
/// ([`HandoffCalibration::ramp_knots`]); the wake-up ([`WakeCalibration`]) adds what
/// waits too long to spin through.
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

    /// What a slack adds over [`HandoffCalibration::equal_ns`]: `(slack, extra − equal)`
    /// knots through the points ([`knots`]: non-decreasing, rises under a twentieth of the
    /// largest count as none), none before the first, the last one's beyond it. Empty
    /// when no slack costs more.
    pub fn ramp_knots(&self, minimum: bool) -> Vec<(f64, f64)> {
        let Some(equal) = self.equal_ns(minimum) else {
            return Vec::new();
        };
        let points: Vec<(f64, f64)> = self
            .points
            .iter()
            .map(|p| (p.slack_ns.max(0.0), p.extra_ns(minimum) - equal))
            .collect();
        knots(&points)
    }
}

/// Mean busy time of the slower stage in the hand-off calibration, ns: about the
/// shortest stage times of the paper suite's pipelines (`inc` at x = 1,024 is 1.1 µs), and
/// short enough that the waiting stage still spins on its queue ([`WAKE_BASELINE_NS`]).
pub const HANDOFF_SPIN_NS: u64 = 2_000;

/// Slacks of the hand-off calibration beyond none, ns: the second stage spins
/// `HANDOFF_SPIN_NS − d` (and a last point passes to `nop`).
pub const HANDOFF_SLACKS: [u64; 3] = [250, 500, 1_000];

/// Share of a pipeline's slowest stage time within which its slack counts as none for
/// the rise of the busy hand-off ([`HandoffCalibration::ramp_knots`], composed on `slack −
/// 0.1 · slowest`). The calibrated rise is a step (full by 250 ns), but a design's slack
/// is the difference of two stage models: the first and the `_remote` second stage of
/// `pipe(inc, inc)`, the same kernel, were modelled 6% apart at x = 1,024 in runs AI and
/// AJ (1,130 and 1,057 ns; 1,131 and 1,064) and 4% at 4,096, while the program ran as
/// fast as one `inc` stage (docs/results/handoff-first-check); on the full rise run AJ
/// predicted it 12.8% too slow at x = 1,024.
pub const HANDOFF_SLACK_RESOLUTION: f64 = 0.1;

/// Busy times of the hand-off calibration's pipelines of two equal stages, ns.
pub const HANDOFF_EQUAL_SPINS_NS: [u64; 3] = [1_000, 1_500, 2_000];

/// A block busy for `ns` times its call's share of [`JOB_SPIN_SPREAD`] (calls counted
/// from `first`) without touching memory, passing its element through.
fn varying_spin_block<E: Send + 'static>(ns: u64, first: usize) -> crate::Pattern<E, E> {
    let calls = std::sync::atomic::AtomicUsize::new(first);
    crate::block(format!("spin{ns}"), move |v: E| {
        let i = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        spin((ns as f64 * spin_share(i)) as u64);
        v
    })
}

/// Measure the hand-off of busy pipelines ([`HandoffCalibration`]): for each slack of
/// [`HANDOFF_SLACKS`] and the `nop` neighbour, the pipeline side by side with its slower
/// stage alone (stream driver, streams of about 20 ms of arrays like the wake-up
/// calibration's, alternating after one untimed stream each).
pub fn calibrate_handoff(repetitions: usize, config: &Config) -> Result<HandoffCalibration, Error> {
    type Arrays = crate::Pattern<Vec<u64>, Vec<u64>>;
    // The second stage's calls start half a job later, so the two vary differently.
    let second = JOB_INPUTS / 2;
    let nop = || crate::block("nop", std::hint::black_box::<Vec<u64>>);
    // (slower stage's busy time, slack, second stage)
    let mut designs: Vec<(u64, u64, Arrays)> = HANDOFF_EQUAL_SPINS_NS
        .iter()
        .map(|&ns| (ns, 0, varying_spin_block(ns, second)))
        .collect();
    let ns = HANDOFF_SPIN_NS;
    designs.extend(
        HANDOFF_SLACKS
            .iter()
            .map(|&d| (ns, d, varying_spin_block(ns.saturating_sub(d), second))),
    );
    designs.push((ns, ns, nop()));
    let mut points = Vec::new();
    for (ns, slack, second) in designs {
        let single = array_program(varying_spin_block(ns, 0), config)?;
        let piped = array_program(crate::pipe(varying_spin_block(ns, 0), second), config)?;
        let (a, b) = side_by_side_samples(&single, &piped, array_stream(ns), repetitions)?;
        let ((stage_ns, stage_min_ns), (pipe_ns, pipe_min_ns)) = (median_min(&a), median_min(&b));
        points.push(HandoffPoint {
            spin_ns: ns as f64,
            slack_ns: slack as f64,
            stage_ns,
            stage_min_ns,
            pipe_ns,
            pipe_min_ns,
        });
    }
    Ok(HandoffCalibration { points })
}

/// The wake-up cost through the calibrated points: `(wait, extra)` knots with straight
/// lines between them ([`wake_segments`]). The extra of a point is `pipe − stage` less
/// that of the busy pipelines that wait too briefly to sleep — the median over the points
/// of at most [`WAKE_BASELINE_NS`] (`pipe_nop_extra`, `pipe(nop, nop)`'s extra over
/// `nop`, without such points), whose own extras count as none: measured on the same
/// streams, it is the hand-off a busy pipeline pays anyway (composition adds it
/// separately, [`HandoffCalibration`]), where `pipe(nop,
/// nop)`'s own median moves with the host (601 ns in run Z's calibration, 258–274 in
/// runs U–Y). The wait is `stage − nop_stage`. Extras under [`WAKE_FLOOR`] of the cap
/// (the median of the two longest waits' extras) count as none —
/// noise, not a wake-up; the rest is made non-decreasing (adjacent violators pooled: a longer
/// wait does not cost less). The knots start at the last wait that costs nothing. Empty
/// when nothing costs extra.
pub fn fit_wake_knots(
    points: &[WakePoint],
    pipe_nop_extra_ns: f64,
    nop_stage_ns: f64,
) -> Vec<(f64, f64)> {
    let busy: Vec<f64> = points
        .iter()
        .filter(|p| p.spin_ns <= WAKE_BASELINE_NS)
        .map(|p| p.pipe_ns - p.stage_ns)
        .collect();
    if busy.is_empty() {
        return knots(&wake_extras(points, pipe_nop_extra_ns, nop_stage_ns));
    }
    // The busy points are the baseline: what one of them has over their median is
    // noise, not a wake-up (it had raised every longer wait's cost by half the busy
    // points' spread, 18–45 ns, in the calibrations of 2026-11-26 evening).
    let extras: Vec<(f64, f64)> = wake_extras(points, stats::median(&busy), nop_stage_ns)
        .into_iter()
        .zip(points)
        .map(|((wait, extra), p)| {
            (
                wait,
                if p.spin_ns <= WAKE_BASELINE_NS {
                    0.0
                } else {
                    extra
                },
            )
        })
        .collect();
    knots(&extras)
}

/// The wake-up points a fit may use when the workers spin `spin_ns` before they sleep:
/// the busy ones of the baseline (at most [`WAKE_BASELINE_NS`]) and those whose `nop`
/// stage waits (`stage − nop_stage`) longer than the spin. A shorter wait is spun
/// through: the waiting stage is awake when its element comes, and whatever the point
/// read is the host's. Run AM's calibration (2026-11-27, AMD EPYC guest, spin 1 ms) read
/// 0–88 ns at waits of 6–24 µs and 6,962 ns at 35 µs, where `spin(32 µs)` alone had run
/// 9% slow (34.9 µs): composed, that point added 5.4 µs to every pipeline of `qsort` at
/// x = 1,024 (15–16% too slow). All the points without a spin.
pub fn slept_points(points: &[WakePoint], nop_stage_ns: f64, spin_ns: f64) -> Vec<WakePoint> {
    points
        .iter()
        .filter(|p| p.spin_ns <= WAKE_BASELINE_NS || p.stage_ns - nop_stage_ns > spin_ns)
        .cloned()
        .collect()
}

/// `(wait, extra)` of each wake-up point: the wait `stage − nop_stage` of its `nop`
/// stage, the extra `pipe − stage − baseline`.
fn wake_extras(points: &[WakePoint], baseline_ns: f64, nop_stage_ns: f64) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|p| {
            (
                (p.stage_ns - nop_stage_ns).max(0.0),
                p.pipe_ns - p.stage_ns - baseline_ns,
            )
        })
        .collect()
}

/// Share of the wake-up cap under which a point's extra counts as noise
/// ([`fit_wake_knots`]). A twentieth: the busy points' extras spread by about 80 ns, and
/// on the Intel host, whose cap is 9 µs, a fifth (until 2026-11-26) zeroed the 1.6 µs
/// that a wait of 4 µs costs, so `pipe(inc, nop)` at x = 4,096 (a wait of 3.8 µs) was
/// predicted 30–40% fast in runs AB, AC and AD.
pub const WAKE_FLOOR: f64 = 0.05;

/// Busy times of the wake-up calibration short enough that the waiting stage never
/// sleeps: their `pipe − stage` is the baseline of [`fit_wake_knots`], ns.
pub const WAKE_BASELINE_NS: f64 = 2_000.0;

/// [`fit_wake_knots`] on `(wait, extra)` pairs.
pub fn knots(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(t, e)| (t, e.max(0.0)))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top: Vec<f64> = sorted.iter().rev().take(2).map(|p| p.1).collect();
    let cap = stats::median(&top);
    if cap.is_nan() || cap <= 0.0 {
        return Vec::new();
    }
    let floor = WAKE_FLOOR * cap;
    // Pool adjacent violators: blocks of (mean, count), non-decreasing.
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &(_, e) in &sorted {
        blocks.push((if e < floor { 0.0 } else { e }, 1));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (b, nb) = blocks.pop().unwrap_or((0.0, 0));
            let (a, na) = blocks.pop().unwrap_or((0.0, 0));
            blocks.push(((a * na as f64 + b * nb as f64) / (na + nb) as f64, na + nb));
        }
    }
    let values = blocks.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n));
    let curve: Vec<(f64, f64)> = sorted.iter().map(|p| p.0).zip(values).collect();
    match curve.iter().rposition(|p| p.1 <= 0.0) {
        Some(last_free) => curve[last_free..].to_vec(),
        // Even the shortest wait costs: the line starts at no wait, no cost.
        None => std::iter::once((0.0, 0.0)).chain(curve).collect(),
    }
}

/// The knots of [`fit_wake_knots`] as a sum of saturating terms, `(from, slope, rise)`:
/// each adds `min(rise, max(0, slope · (W − from)))`, so the sum is the straight lines
/// between the knots, flat beyond the last. Segments that do not rise are left out.
pub fn wake_segments(knots: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    knots
        .windows(2)
        .filter_map(|w| {
            let ((w0, v0), (w1, v1)) = (w[0], w[1]);
            let (run, rise) = (w1 - w0, v1 - v0);
            (run > 0.0 && rise > 0.0 && (rise / run).is_finite()).then(|| (w0, rise / run, rise))
        })
        .collect()
}

/// Fit `min(cap, slope · T)` to measured extra costs `(T, extra)`, negative extras
/// counting as none: the cap is the median of the two slowest points; the slope is the
/// least squares line through the origin of the points below 80% of the cap (the
/// smallest point when none is). `(0, 0)` when nothing costs extra.
pub fn fit_saturating(points: &[(f64, f64)]) -> (f64, f64) {
    let extra: Vec<(f64, f64)> = points.iter().map(|&(t, e)| (t, e.max(0.0))).collect();
    if extra.is_empty() {
        return (0.0, 0.0);
    }
    let mut sorted = extra;
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top: Vec<f64> = sorted.iter().rev().take(2).map(|p| p.1).collect();
    let cap = stats::median(&top);
    if cap <= 0.0 {
        return (0.0, 0.0);
    }
    let mut below: Vec<(f64, f64)> = sorted.iter().copied().filter(|p| p.1 < 0.8 * cap).collect();
    if below.is_empty() {
        below.push(sorted[0]);
    }
    let (num, den) = below
        .iter()
        .fold((0.0, 0.0), |(n, d), (t, w)| (n + t * w, d + t * t));
    let slope = if den > 0.0 { num / den } else { 0.0 };
    (slope, cap)
}

/// Elements streamed per repetition of a calibration run.
pub const DEFAULT_ELEMENTS: usize = 100_000;
/// Repetitions per pattern (runtime and baseline alternate).
pub const DEFAULT_REPETITIONS: usize = 15;

/// The patterns calibrated on a machine with `cores` cores: up to 2·cores workers, so
/// over-subscribed task pools have a measured cost too.
pub fn calibration_terms(cores: usize) -> Vec<Plan> {
    let nop = || Plan::Kernel("nop".into());
    let mut terms = vec![
        nop(),
        Plan::Seq(vec![nop(), nop()]),
        Plan::Pipe(vec![nop(), nop()]),
    ];
    let mut n = 1;
    while n <= (2 * cores).max(2) {
        terms.push(Plan::TPool(n, Box::new(nop())));
        n *= 2;
    }
    terms
}

/// How a stream is fed to a design and collected from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// A producer thread feeds a bounded queue; the calling thread blocks on the last
    /// queue ([`crate::Program::run_measured`]): a whole producer/consumer program.
    ProducerConsumer,
    /// Stream-sized outer queues filled by the calling thread before the clock starts,
    /// drained after it stops; the workers of the last queue wake the caller once they
    /// have counted every output
    /// ([`crate::Program::run_stream`]): the driver of `bench --term` and `validate`.
    Stream,
}

/// The same hand-offs written directly with crossbeam channels: the workers of the shape
/// (one stage, a chain of two, or `n` sharing a queue) calling `black_box`, fed and
/// drained as `driver` says. Returns ns per element.
fn baseline(plan: &Plan, elements: Vec<Data>, capacity: usize, driver: Driver) -> f64 {
    let n_el = elements.len();
    let outer = match driver {
        Driver::ProducerConsumer => capacity,
        Driver::Stream => n_el.max(1),
    };
    let (src_tx, src_rx) = bounded::<Data>(outer);
    let (out_tx, out_rx) = bounded::<Data>(outer);
    let workers = match plan {
        Plan::Pipe(_) => 2,
        Plan::TPool(n, _) => *n,
        _ => 1,
    };
    // Stream: the threads wait at a gate until the stream is fed, as the gated workers of
    // `Program::run_stream` do.
    let gate = crate::ctx::Gate::default();
    if driver == Driver::Stream {
        for _ in 0..workers {
            gate.expect();
        }
    }
    let gate = &gate;
    let stream = driver == Driver::Stream;
    let wait = move || {
        if stream {
            gate.arrive();
        }
    };
    // Stream: the workers of the last queue add what they put there when they end, and
    // the last of them wakes the caller, as in `run_stream`.
    let end = crate::ctx::StreamEnd::new(n_el);
    let end = &end;
    let counted = move |n: usize| {
        if stream {
            end.add(n);
        }
    };
    std::thread::scope(|s| {
        match plan {
            Plan::Pipe(_) => {
                let (mid_tx, mid_rx) = bounded::<Data>(capacity);
                s.spawn(move || {
                    wait();
                    for e in src_rx.iter() {
                        let _ = mid_tx.send(std::hint::black_box(e));
                    }
                });
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in mid_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                        put += 1;
                    }
                    counted(put);
                });
            }
            Plan::TPool(n, _) => {
                for _ in 0..*n {
                    let (rx, tx) = (src_rx.clone(), out_tx.clone());
                    s.spawn(move || {
                        wait();
                        let mut put = 0;
                        for e in rx.iter() {
                            let _ = tx.send(std::hint::black_box(e));
                            put += 1;
                        }
                        counted(put);
                    });
                }
                drop(out_tx);
            }
            Plan::Seq(_) => {
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in src_rx.iter() {
                        let e = std::hint::black_box(std::hint::black_box(e));
                        let _ = out_tx.send(e);
                        put += 1;
                    }
                    counted(put);
                });
            }
            _ => {
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in src_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                        put += 1;
                    }
                    counted(put);
                });
            }
        }
        let mut got = 0usize;
        let elapsed = match driver {
            Driver::ProducerConsumer => {
                let t0 = Instant::now();
                s.spawn(move || {
                    for e in elements {
                        let _ = src_tx.send(e);
                    }
                });
                for e in out_rx.iter() {
                    drop(e);
                    got += 1;
                }
                t0.elapsed()
            }
            Driver::Stream => {
                for e in elements {
                    let _ = src_tx.send(e);
                }
                drop(src_tx);
                let t0 = gate.open();
                end.wait(&|| out_rx.len(), &|| false);
                let elapsed = t0.elapsed();
                for e in out_rx.iter() {
                    drop(e);
                    got += 1;
                }
                elapsed
            }
        };
        debug_assert_eq!(got, n_el);
        elapsed.as_nanos() as f64 / n_el as f64
    })
}

fn nop_elements(count: usize) -> Vec<Data> {
    // Small arrays: the hand-off moves the 32-byte element, not its contents.
    (0..count).map(|i| Data::Ints(vec![i as i32; 16])).collect()
}

/// Measure every calibration term side by side with its baseline (runtime and baseline
/// alternate, so both see the same background load).
pub fn calibrate(
    elements: usize,
    repetitions: usize,
    config: &Config,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Calibration, Error> {
    if elements == 0 || repetitions == 0 {
        return Err(Error::Run(
            "a calibration needs at least one element and one repetition".into(),
        ));
    }
    let cores = available_cores();
    let registry = Registry::builtin();
    let terms = calibration_terms(cores);
    let run = |built: &crate::plan::Built, driver: Driver, count: usize| -> Result<f64, Error> {
        let m = match driver {
            Driver::ProducerConsumer => built.program.run_measured(nop_elements(count))?,
            Driver::Stream => built.program.run_stream(nop_elements(count))?,
        };
        Ok(m.elapsed.as_nanos() as f64 / count as f64)
    };
    const DRIVERS: [Driver; 2] = [Driver::ProducerConsumer, Driver::Stream];
    // One untimed pass over every pattern first: the first patterns measured in a cold
    // process came out up to 3x slower than in later passes (page faults, allocator and
    // CPU frequency warm-up).
    for plan in &terms {
        let built = plan.build(&registry, config.clone())?;
        for d in DRIVERS {
            run(&built, d, elements / 4 + 1)?;
            baseline(plan, nop_elements(elements / 4 + 1), config.capacity, d);
        }
    }
    let mut patterns = Vec::new();
    for (i, plan) in terms.iter().enumerate() {
        let name = plan.to_string();
        progress(&name, i, terms.len());
        let built = plan.build(&registry, config.clone())?;
        // [driver][runtime, baseline]: the four alternate, so all see the same load.
        let mut samples = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for _ in 0..repetitions {
            for (d, driver) in DRIVERS.iter().enumerate() {
                samples[d][0].push(run(&built, *driver, elements)?);
                samples[d][1].push(baseline(
                    plan,
                    nop_elements(elements),
                    config.capacity,
                    *driver,
                ));
            }
        }
        patterns.push(PatternCost {
            term: name,
            ns_per_element: stats::median(&samples[0][0]),
            baseline_ns_per_element: stats::median(&samples[0][1]),
            cv: stats::cv(&samples[0][0]),
            baseline_cv: stats::cv(&samples[0][1]),
            stream_ns_per_element: stats::median(&samples[1][0]),
            stream_baseline_ns_per_element: stats::median(&samples[1][1]),
            stream_min_ns_per_element: samples[1][0].iter().copied().fold(f64::INFINITY, f64::min),
        });
    }
    progress("pipe(spin(T), nop)", terms.len(), terms.len() + 1);
    let (pipe_extra, nop) = wake_baseline(&patterns);
    let pipe_wake = calibrate_wake(repetitions.clamp(1, 7), config, pipe_extra, nop)?;
    progress("pipe(spin(T), spin(T - d))", terms.len(), terms.len() + 1);
    let pipe_handoff = calibrate_handoff(repetitions.clamp(1, 11), config)?;
    progress("tpool(n, spin(T))", terms.len(), terms.len() + 1);
    let pool_busy = calibrate_pool_busy(cores, repetitions.clamp(1, 7), config)?;
    progress("mapreduce(n, spin(T))", terms.len(), terms.len() + 1);
    let mapreduce = calibrate_mapreduce(cores, repetitions.clamp(1, 7), config)?;
    let mapreduce_busy =
        calibrate_mapreduce_busy(cores, repetitions.clamp(1, 7), config, &mapreduce)?;
    progress("nop (unit test)", terms.len(), terms.len() + 1);
    let block_call = calibrate_block_call(repetitions)?;
    Ok(Calibration {
        version: CALIBRATION_VERSION,
        host: hostname(),
        cores,
        elements,
        repetitions,
        patterns,
        pipe_wake,
        pipe_handoff,
        mapreduce,
        mapreduce_busy,
        pool_busy,
        pinned: config.pin,
        spin_us: Calibration::spin_of(config).as_micros() as u64,
        block_call,
    })
}

/// Cores the OS lets this process use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// This machine's name (`/etc/hostname`, `$HOSTNAME`, or `unknown-host`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
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

    /// `$XDG_CONFIG_HOME/perfcompose/overhead-HOST.json`, else
    /// `~/.config/perfcompose/overhead-HOST.json`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        let host: String = hostname()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(
            base.join("perfcompose")
                .join(format!("overhead-{host}.json")),
        )
    }

    /// Write the calibration to `path` as pretty JSON, creating its folder.
    pub fn save(&self, path: &Path) -> Result<(), FileError> {
        let fail = |e: std::io::Error| FileError::new(path, FileErrorKind::Write(e));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| fail(e.into()))?;
        std::fs::write(path, text + "\n").map_err(fail)
    }

    /// Read a calibration that [`Calibration::save`] wrote; `Ok(None)` when the file does
    /// not exist. A file of another [`CALIBRATION_VERSION`], or without one, is an error
    /// that says which version it has; a malformed one an error at its line and column.
    pub fn load(path: &Path) -> Result<Option<Calibration>, FileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FileError::new(path, FileErrorKind::Read(e))),
        };
        let malformed = |e: serde_json::Error| {
            FileError::new(
                path,
                FileErrorKind::Malformed {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                },
            )
        };
        // The version first: a file of another version need not parse as this one.
        let stored: Versioned = serde_json::from_str(&text).map_err(malformed)?;
        if stored.version != Some(CALIBRATION_VERSION) {
            return Err(FileError::new(path, FileErrorKind::Version(stored.version)));
        }
        serde_json::from_str(&text).map(Some).map_err(malformed)
    }

    /// Compose with the statistic the measurements are reduced with: with
    /// [`Measure::Minimum`] the patterns' and the block call's fastest repetitions, else
    /// their medians. Other work on a shared machine only slows a calibration's
    /// repetitions down, as it does a block's. The wake-up, busy-pool, job and hand-off
    /// rise calibrations stay as they were fitted.
    ///
    /// [`Measure::Minimum`]: perfcompose_core::measure::Measure::Minimum
    pub fn for_statistic(&self, measure: perfcompose_core::measure::Measure) -> Composer<'_> {
        Composer {
            calibration: self,
            minimum: measure == perfcompose_core::measure::Measure::Minimum,
        }
    }

    /// The calibrated cost of one MapReduce job ([`JobCost`]) with the reduction style of
    /// the kernel `reduce` (per key for built-in per-key kernels, pairwise otherwise) and
    /// the nearest calibrated thread count; 0 when none is calibrated.
    pub fn job_ns(&self, reduce: &str, threads: usize) -> f64 {
        let style = job_style(reduce);
        self.mapreduce
            .iter()
            .filter(|j| j.reduce == style)
            .min_by_key(|j| j.threads.abs_diff(threads))
            .map_or(0.0, |j| j.ns_per_job)
    }

    /// The busy-job calibration ([`JobBusy`]) for the kernel `reduce`'s style and the
    /// nearest calibrated thread count.
    pub fn job_busy(&self, reduce: &str, threads: usize) -> Option<&JobBusy> {
        let style = job_style(reduce);
        self.mapreduce_busy
            .iter()
            .filter(|j| j.reduce == style)
            .min_by_key(|j| j.threads.abs_diff(threads))
    }
}

/// Just the version of a stored calibration, read before the rest.
#[derive(Deserialize)]
#[serde(expecting = "an overhead calibration (a JSON object)")]
struct Versioned {
    version: Option<u32>,
}

/// A calibration file that cannot be read or written.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub kind: FileErrorKind,
}

/// What is wrong with a calibration file ([`FileError`]).
#[derive(Debug)]
pub enum FileErrorKind {
    Read(std::io::Error),
    Write(std::io::Error),
    /// Not JSON, or not a calibration: where serde stopped.
    Malformed {
        line: usize,
        column: usize,
        message: String,
    },
    /// Another version than [`CALIBRATION_VERSION`] (`None`: none at all).
    Version(Option<u32>),
}

impl FileError {
    fn new(path: &Path, kind: FileErrorKind) -> FileError {
        FileError {
            path: path.to_path_buf(),
            kind,
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        let again = "recalibrate with `perfcompose calibrate overhead`";
        match &self.kind {
            FileErrorKind::Read(e) => write!(f, "cannot read {path}: {e}"),
            FileErrorKind::Write(e) => write!(f, "cannot write {path}: {e}"),
            FileErrorKind::Malformed {
                line,
                column,
                message,
            } => write!(
                f,
                "{path}:{line}:{column}: not a perfcompose overhead calibration: {message}"
            ),
            FileErrorKind::Version(None) => write!(
                f,
                "{path}: an overhead calibration without a version (written by an older perfcompose); this one reads version {CALIBRATION_VERSION}: {again}"
            ),
            FileErrorKind::Version(Some(v)) if *v < CALIBRATION_VERSION => write!(
                f,
                "{path}: an overhead calibration of version {v}, older than this perfcompose reads (version {CALIBRATION_VERSION}): {again}"
            ),
            FileErrorKind::Version(Some(v)) => write!(
                f,
                "{path}: an overhead calibration of version {v}, unknown to this perfcompose (it reads version {CALIBRATION_VERSION}): {again}, or use the perfcompose that wrote it"
            ),
        }
    }
}

impl std::error::Error for FileError {}

impl From<FileError> for Error {
    fn from(e: FileError) -> Error {
        Error::Io(e.to_string())
    }
}

/// A calibration read with the statistic composition uses ([`Calibration::for_statistic`]):
/// what it adds to a design.
#[derive(Clone, Copy, Debug)]
pub struct Composer<'a> {
    calibration: &'a Calibration,
    /// The patterns' and the block call's fastest repetitions instead of their medians.
    minimum: bool,
}

impl Composer<'_> {
    /// What composition adds for a calibrated term under the stream driver of `validate`.
    fn cost(&self, term: &str) -> Option<f64> {
        pattern_ns(&self.calibration.patterns, term, self.minimum)
    }

    /// Per-element cost of one stage on its own thread (the `nop` program).
    pub fn stage_ns(&self) -> f64 {
        self.cost("nop").unwrap_or(0.0)
    }

    /// Extra cost of a task pool of `n` over a single stage: measured for the calibrated
    /// `n`, the nearest calibrated `n` otherwise.
    fn tpool_extra(&self, n: usize) -> f64 {
        let calibrated = self.calibration.patterns.iter().filter_map(|p| {
            let rest = p.term.strip_prefix("tpool(")?;
            let k: usize = rest.split(',').next()?.trim().parse().ok()?;
            Some((k, p.composition_ns(self.minimum)))
        });
        calibrated
            .min_by_key(|(k, _)| k.abs_diff(n))
            .map_or(0.0, |(_, ns)| ns - self.stage_ns())
    }

    /// The per-element overhead of a design: the cost of one stage, plus each pattern
    /// node's extra cost over one stage (`seq(nop, nop)`, `pipe(nop, nop)`,
    /// `tpool(n, nop)` minus `nop`), less one [`BlockCall`] per block as the design
    /// composes its blocks. Exact for the calibrated shapes; an additive estimate
    /// for deeper nestings. A MapReduce job (one element) adds its calibrated job cost
    /// ([`JobCost`]); its map and reduce calls are in that cost's ideal and keep theirs.
    pub fn overhead_ns(&self, plan: &Plan) -> f64 {
        (self.stage_ns() + self.extra(plan)).max(0.0)
    }
    /// The whole overhead of a design, for composition: the constant
    /// [`Composer::overhead_ns`] plus, for every pipeline, the rise of the busy
    /// hand-off with the slack ([`HandoffCalibration`]) and the saturating wake-up cost
    /// ([`WakeCalibration`]), scaled by the task pools around the pipeline
    /// (thread counts capped at the calibrated cores, as composition caps them).
    pub fn overhead(
        &self,
        plan: &Plan,
        source: &str,
    ) -> perfcompose_core::compose::predict::Overhead {
        let mut saturating = Vec::new();
        self.slack_terms(plan, &mut saturating);
        self.busy_pools(plan, 1.0, &mut saturating);
        self.busy_jobs(plan, 1.0, &mut saturating);
        perfcompose_core::compose::predict::Overhead {
            ns_per_element: self.overhead_ns(plan),
            source: source.to_string(),
            saturating,
            phases: Vec::new(),
        }
    }

    /// What each hand-off of a pipeline of busy stages costs at no slack: the spinning
    /// stages' ([`HandoffCalibration::equal_ns`]), or `pipe(nop, nop)`'s extra over `nop`
    /// when the hand-off calibration has no point at no slack.
    fn busy_handoff_ns(&self) -> f64 {
        match self.calibration.pipe_handoff.equal_ns(self.minimum) {
            Some(equal) => equal,
            None => self
                .cost("pipe(nop, nop)")
                .map_or(0.0, |c| c - self.stage_ns()),
        }
    }

    /// For every task pool of `n` ≤ cores workers with a [`PoolBusy`] calibration: the
    /// cost busy workers add over the `tpool(n, nop)` figure already in
    /// [`Calibration::overhead_ns`], `Δ = extra + stage/n − (stage + tpool(n, nop) extra)`,
    /// reached once a worker's task takes the shortest calibrated spin (1 µs): the
    /// saturating term `min(Δ, Δ/1 µs · T)` at the time `T` a worker spends per element.
    fn busy_pools(
        &self,
        plan: &Plan,
        scale: f64,
        out: &mut Vec<perfcompose_core::compose::predict::Saturating>,
    ) {
        match plan {
            Plan::TPool(n, inner) => {
                let k = (*n).min(self.calibration.cores.max(1));
                if let Some(b) = self.calibration.pool_busy.iter().find(|b| b.threads == *n) {
                    let stage = self.stage_ns();
                    let delta = b.extra_ns + stage / k as f64 - (stage + self.tpool_extra(k));
                    if delta > 0.0 && delta.is_finite() {
                        out.push(perfcompose_core::compose::predict::Saturating {
                            what: format!("busy workers' hand-off in {plan}"),
                            scale: scale * k as f64,
                            slope: delta / POOL_SPINS[0] as f64,
                            cap_ns: delta,
                            threshold_ns: 0.0,
                            pipeline_slack: None,
                            relative_threshold: 0.0,
                        });
                    }
                }
                self.busy_pools(inner, scale * k as f64, out);
            }
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                parts.iter().for_each(|p| self.busy_pools(p, scale, out))
            }
            Plan::Kernel(_) | Plan::MapReduce { .. } | Plan::Unsupported { .. } => {}
        }
    }

    /// For every MapReduce with a [`JobBusy`] calibration: the saturating cost of waking
    /// its workers for every phase of a job, at the job's time (scaled by the task pools
    /// around it, like [`Calibration::busy_pools`]).
    fn busy_jobs(
        &self,
        plan: &Plan,
        scale: f64,
        out: &mut Vec<perfcompose_core::compose::predict::Saturating>,
    ) {
        match plan {
            Plan::MapReduce {
                reduce, threads, ..
            } => {
                if let Some(b) = self.calibration.job_busy(reduce, *threads) {
                    if b.slope > 0.0 && b.cap_ns > 0.0 {
                        out.push(perfcompose_core::compose::predict::Saturating {
                            what: format!(
                                "waking the sleeping workers of {plan} for every phase of a job"
                            ),
                            scale,
                            slope: b.slope,
                            cap_ns: b.cap_ns,
                            threshold_ns: 0.0,
                            pipeline_slack: None,
                            relative_threshold: 0.0,
                        });
                    }
                }
            }
            Plan::TPool(n, inner) => {
                let k = (*n).min(self.calibration.cores.max(1));
                self.busy_jobs(inner, scale * k as f64, out)
            }
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                parts.iter().for_each(|p| self.busy_jobs(p, scale, out))
            }
            Plan::Kernel(_) | Plan::Unsupported { .. } => {}
        }
    }

    /// The slack-dependent terms of `plan`'s pipelines, each naming the pipeline whose
    /// slack it depends on: the busy hand-off's rise over its no-slack figure
    /// ([`HandoffCalibration::ramp_knots`]) and the wake-up ([`WakeCalibration`]). The
    /// slowest stage pays them per element to the neighbours that wait for it; one of
    /// each per chain, on the wait of the next slowest stage (two when the slowest sits
    /// in the middle, which this leaves out).
    fn slack_terms(
        &self,
        plan: &Plan,
        out: &mut Vec<perfcompose_core::compose::predict::Saturating>,
    ) {
        let ramp = wake_segments(&self.calibration.pipe_handoff.ramp_knots(self.minimum));
        let wake = wake_segments(&self.calibration.pipe_wake.knots);
        each_pipeline(
            plan,
            self.calibration.cores,
            &mut |pipe, index, scale, stages| {
                if stages.len() < 2 {
                    return;
                }
                curve_terms(
                    format!("busy stages' hand-off at the slack of {pipe}"),
                    &ramp,
                    (index, scale),
                    HANDOFF_SLACK_RESOLUTION,
                    out,
                );
                curve_terms(
                    format!("wake-up cost of the slowest stage's hand-off in {pipe}"),
                    &wake,
                    (index, scale),
                    0.0,
                    out,
                );
            },
        );
    }

    /// ns per block call counted twice by composition ([`BlockCall`]).
    pub fn block_call_ns(&self) -> f64 {
        self.calibration.block_call.ns(self.minimum).max(0.0)
    }

    fn extra(&self, plan: &Plan) -> f64 {
        let stage = self.stage_ns();
        match plan {
            // Its unit test counted the call the calibrated patterns count too.
            Plan::Kernel(_) => -self.block_call_ns(),
            Plan::Unsupported { .. } => 0.0,
            // Measured through one stage of the stream driver, like `nop`.
            Plan::MapReduce {
                reduce, threads, ..
            } => (self.calibration.job_ns(reduce, *threads) - stage).max(0.0),
            Plan::Seq(parts) => {
                let per = self.cost("seq(nop, nop)").map_or(0.0, |c| c - stage);
                per * parts.len().saturating_sub(1) as f64
                    + parts.iter().map(|p| self.extra(p)).sum::<f64>()
            }
            Plan::Pipe(parts) => {
                let per = self.busy_handoff_ns();
                // The slowest stage's (a stage's extra may be negative: its calls).
                per * parts.len().saturating_sub(1) as f64
                    + parts
                        .iter()
                        .map(|p| self.extra(p))
                        .reduce(f64::max)
                        .unwrap_or(0.0)
            }
            // Over the workers that run at once, as composition caps them at the cores.
            Plan::TPool(n, inner) => {
                self.tpool_extra(*n)
                    + self.extra(inner) / (*n).min(self.calibration.cores.max(1)) as f64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfcompose_core::measure::Measure;

    /// Composition with the medians, as `predict` composes (test shorthands).
    impl Calibration {
        fn overhead_ns(&self, plan: &Plan) -> f64 {
            self.for_statistic(Measure::Median).overhead_ns(plan)
        }

        fn overhead(
            &self,
            plan: &Plan,
            source: &str,
        ) -> perfcompose_core::compose::predict::Overhead {
            self.for_statistic(Measure::Median).overhead(plan, source)
        }
    }

    #[test]
    fn busy_job_spins_vary_by_call_but_every_job_does_the_same_work() {
        for job in 0..16 {
            let shares: Vec<f64> = (0..JOB_INPUTS)
                .map(|c| spin_share(job * JOB_INPUTS + c))
                .collect();
            assert!((shares.iter().sum::<f64>() - JOB_INPUTS as f64).abs() < 1e-9);
            assert!(shares.iter().all(|s| (0.85..=1.15).contains(s)));
            let next: Vec<f64> = (0..JOB_INPUTS)
                .map(|c| spin_share((job + 1) * JOB_INPUTS + c))
                .collect();
            assert_ne!(shares, next, "consecutive jobs claim different patterns");
        }
    }

    fn cal() -> Calibration {
        let p = |term: &str, ns: f64| PatternCost {
            term: term.into(),
            ns_per_element: ns,
            baseline_ns_per_element: ns,
            cv: 0.0,
            baseline_cv: 0.0,
            stream_ns_per_element: ns,
            stream_baseline_ns_per_element: ns,
            stream_min_ns_per_element: ns,
        };
        // No wake-up, no busy hand-off (pipelines add `pipe(nop, nop)`'s), no block call.
        Calibration {
            version: CALIBRATION_VERSION,
            host: "h".into(),
            cores: 2,
            elements: 10,
            repetitions: 1,
            pipe_wake: WakeCalibration {
                points: Vec::new(),
                knots: Vec::new(),
            },
            pipe_handoff: HandoffCalibration { points: Vec::new() },
            mapreduce: Vec::new(),
            mapreduce_busy: Vec::new(),
            pool_busy: Vec::new(),
            pinned: false,
            spin_us: 0,
            block_call: BlockCall {
                x: BLOCK_CALL_X,
                ns: 0.0,
                min_ns: 0.0,
            },
            patterns: vec![
                p("nop", 100.0),
                p("seq(nop, nop)", 105.0),
                p("pipe(nop, nop)", 180.0),
                p("tpool(1, nop)", 110.0),
                p("tpool(2, nop)", 90.0),
            ],
        }
    }

    /// Sums of a few binary fractions: exact in f64 up to rounding of the last bit.
    const TOL: f64 = 1e-9;

    #[test]
    fn with_the_minimum_composition_adds_the_fastest_repetitions() {
        let mut c = cal();
        // Stream medians 100 / 180 for nop / pipe(nop, nop), fastest repetitions 90 / 130;
        // seq(nop, nop)'s fastest is its median, 105.
        for p in &mut c.patterns {
            p.stream_min_ns_per_element = match p.term.as_str() {
                "nop" => 90.0,
                "pipe(nop, nop)" => 130.0,
                _ => p.stream_ns_per_element,
            };
        }
        let pipe = Plan::Pipe(vec![Plan::Kernel("a".into()), Plan::Kernel("b".into())]);
        let seq = Plan::Seq(vec![Plan::Kernel("a".into()), Plan::Kernel("b".into())]);
        assert!((c.overhead_ns(&pipe) - 180.0).abs() < TOL);
        let fastest = c.for_statistic(Measure::Minimum);
        assert!((fastest.overhead_ns(&pipe) - 130.0).abs() < TOL);
        // 90 + (105 − 90).
        assert!((fastest.overhead_ns(&seq) - 105.0).abs() < TOL);
        // Every statistic other than the minimum composes with the medians.
        for m in [Measure::Median, Measure::Mean, Measure::Maximum] {
            assert!((c.for_statistic(m).overhead_ns(&pipe) - 180.0).abs() < TOL);
        }
    }

    #[test]
    fn calibrated_shapes_get_their_measured_cost() {
        let c = cal();
        let k = |s: &str| Plan::Kernel(s.into());
        assert!((c.overhead_ns(&k("qsort")) - 100.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b")])) - 180.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Seq(vec![k("a"), k("b")])) - 105.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::TPool(2, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nearest calibrated n for an uncalibrated one.
        assert!((c.overhead_ns(&Plan::TPool(3, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nesting adds: a 3-stage pipe pays two hand-offs.
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b"), k("c")])) - 260.0).abs() < TOL);
    }

    #[test]
    fn each_block_call_is_taken_out_once_as_the_design_composes_its_blocks() {
        let k = |n: &str| Plan::Kernel(n.into());
        let seq = |a: Plan, b: Plan| Plan::Seq(vec![a, b]);
        let pool = |n: usize, p: Plan| Plan::TPool(n, Box::new(p));
        let mut c = cal();
        let without: Vec<f64> = [
            seq(k("a"), k("b")),
            Plan::Pipe(vec![k("a"), k("b")]),
            pool(2, seq(k("a"), k("b"))),
            Plan::Pipe(vec![seq(k("a"), k("b")), k("c")]),
            pool(4, k("a")),
        ]
        .iter()
        .map(|p| c.overhead_ns(p))
        .collect();
        // cal(): nop 100, seq(nop, nop) 105, pipe(nop, nop) 180, tpool(2, nop) 90.
        assert!((without[0] - 105.0).abs() < TOL);
        c.block_call = BlockCall {
            x: BLOCK_CALL_X,
            ns: 20.0,
            min_ns: 10.0,
        };
        let with = |c: &Calibration, p: &Plan| c.overhead_ns(p);
        // Two calls in a seq, each counted by its block's unit test.
        assert!((with(&c, &seq(k("a"), k("b"))) - (without[0] - 40.0)).abs() < TOL);
        // A pipeline's slowest stage: one call.
        let pipe = Plan::Pipe(vec![k("a"), k("b")]);
        assert!((with(&c, &pipe) - (without[1] - 20.0)).abs() < TOL);
        // A pool's seq: its two calls shared by two workers.
        let pooled = pool(2, seq(k("a"), k("b")));
        assert!((with(&c, &pooled) - (without[2] - 20.0)).abs() < TOL);
        // A pipeline whose first stage is a seq: the stage with the largest extra, the
        // lone block (one call), not the seq (5 − 40).
        let mixed = Plan::Pipe(vec![seq(k("a"), k("b")), k("c")]);
        assert!((without[3] - 185.0).abs() < TOL);
        assert!((with(&c, &mixed) - 160.0).abs() < TOL);
        // Four workers on two cores: the call over the two that run at once.
        assert!((with(&c, &pool(4, k("a"))) - (without[4] - 10.0)).abs() < TOL);
        // With the minimum, the fastest repetition.
        let m = c.for_statistic(Measure::Minimum);
        assert!((m.block_call_ns() - 10.0).abs() < TOL);
        // Never below nothing.
        c.block_call.ns = 1e6;
        assert_eq!(c.overhead_ns(&seq(k("a"), k("b"))), 0.0);
    }

    fn wake_point(stage: f64, extra: f64) -> WakePoint {
        WakePoint {
            spin_ns: stage,
            stage_ns: stage,
            pipe_ns: stage + 100.0 + extra,
        }
    }

    /// The sum of `segments` at wait `w`, as composition adds them.
    fn segments_at(segments: &[(f64, f64, f64)], w: f64) -> f64 {
        segments
            .iter()
            .map(|&(from, slope, rise)| rise.min((slope * (w - from)).max(0.0)))
            .sum()
    }

    #[test]
    fn the_busy_wake_points_are_the_baseline_and_cost_nothing_themselves() {
        // Busy points 200 ns apart around their median (the baseline): the one above it
        // is noise (over the floor, a twentieth of the 1,500 ns cap), so the cost rises
        // from nothing, not from 100 ns at the shortest wait.
        let pts = [
            wake_point(1000.0, 100.0),
            wake_point(2000.0, -100.0),
            wake_point(6000.0, 1000.0),
            wake_point(8000.0, 2000.0),
        ];
        // `wake_point` adds 100 ns, the busy median 100 ns too: extras 0, 0, 1000, 2000
        // at waits of stage − 100.
        let k = fit_wake_knots(&pts, 80.0, 100.0);
        assert_eq!(k, [(1900.0, 0.0), (5900.0, 1000.0), (7900.0, 2000.0)]);
        // Without busy points the baseline is `pipe(nop, nop)`'s extra, and a point's
        // extra over it counts.
        let k = fit_wake_knots(&pts[2..], 80.0, 100.0);
        assert_eq!(k, [(0.0, 0.0), (5900.0, 1020.0), (7900.0, 2020.0)]);
        // (Until 2026-11-26 the busy point above the median kept its 100 ns.)
        let old = knots(&wake_extras(&pts, 100.0, 100.0));
        assert_ne!(old[..2], [(1900.0, 0.0), (5900.0, 1000.0)], "{old:?}");
    }

    #[test]
    fn wake_knots_go_through_the_points_from_the_last_wait_that_costs_nothing() {
        // 03:22's `spin(T)` on arrays (extras over pipe(nop, nop), ns): nothing up to
        // 4 µs, then 0.86, 0.98, 1.64, 3.36 and 4.25 µs; a dip at 24 µs is pooled with
        // its neighbour (a longer wait does not cost less).
        let pts = [
            (1000.0, 40.0),
            (2000.0, -10.0),
            (4000.0, 70.0),
            (6000.0, 860.0),
            (8000.0, 980.0),
            (12000.0, 1640.0),
            (16000.0, 3360.0),
            (24000.0, 3000.0),
            (32000.0, 4250.0),
        ];
        let k = knots(&pts);
        // 70 ns is under a twentieth of the cap (median of 3000 and 4250): no cost at
        // 4 µs.
        assert_eq!(k[0], (4000.0, 0.0));
        assert_eq!(
            &k[1..4],
            &[(6000.0, 860.0), (8000.0, 980.0), (12000.0, 1640.0)]
        );
        // 3360 and 3000 pooled to their mean.
        assert!(
            (k[4].1 - 3180.0).abs() < TOL && (k[5].1 - 3180.0).abs() < TOL,
            "{k:?}"
        );
        assert_eq!(k[6], (32000.0, 4250.0));
        let segs = wake_segments(&k);
        // The flat pooled stretch adds no term.
        assert_eq!(segs.len(), 5, "{segs:?}");
        // The terms sum to the straight lines between the knots, flat beyond the last.
        for (w, want) in [
            (0.0, 0.0),
            (4000.0, 0.0),
            (5000.0, 430.0),
            (7000.0, 920.0),
            (10000.0, 1310.0),
            (20000.0, 3180.0),
            (28000.0, 3715.0),
            (32000.0, 4250.0),
            (1e6, 4250.0),
        ] {
            let got = segments_at(&segs, w);
            assert!((got - want).abs() < 1e-6, "at {w}: {got} against {want}");
        }
        // Run AD's calibration on the Intel host (extras over the busy points, ns): the
        // cap is 9 µs, and the 1.6 µs that a wait of 4 µs costs is a wake-up, not noise.
        let intel = [
            (1080.0, 40.0),
            (2100.0, -40.0),
            (4140.0, 1621.0),
            (6180.0, 2158.0),
            (8260.0, 2912.0),
            (12320.0, 4433.0),
            (16400.0, 7579.0),
            (24580.0, 7689.0),
            (32560.0, 10396.0),
        ];
        let k = knots(&intel);
        assert_eq!(&k[..2], &[(2100.0, 0.0), (4140.0, 1621.0)], "{k:?}");
        // Costs from the shortest wait: the lines start at no wait, no cost.
        let k = knots(&[(1000.0, 500.0), (2000.0, 1000.0)]);
        assert_eq!(k, vec![(0.0, 0.0), (1000.0, 500.0), (2000.0, 1000.0)]);
        // Nothing costs extra, or nothing usable: no knots, no terms.
        assert!(knots(&[(1000.0, -5.0), (2000.0, 0.0)]).is_empty());
        assert!(knots(&[]).is_empty());
        assert!(knots(&[(f64::NAN, 1.0)]).is_empty());
        assert!(wake_segments(&[]).is_empty());
    }

    /// Wake-up points at [`WAKE_SPINS`] with the given extras over the busy baseline
    /// (with `cal()`'s `nop` stage of 100 ns and `wake_point`'s 100: waits of T, stages
    /// of T + 100).
    fn wake_points(extras: &[f64]) -> Vec<WakePoint> {
        WAKE_SPINS
            .iter()
            .zip(extras)
            .map(|(&t, e)| wake_point(t as f64 + 100.0, e - 20.0))
            .collect()
    }

    /// `cal()`'s wake-up baseline: `pipe(nop, nop)` 80 ns over a `nop` stage of 100.
    fn fit_wake(points: Vec<WakePoint>, spin_ns: f64) -> WakeCalibration {
        WakeCalibration::fit(points, 80.0, 100.0, spin_ns)
    }

    #[test]
    fn waits_the_workers_spin_through_pay_no_wake_up() {
        // Next to nothing up to 24 µs, then one disturbed point at 32 µs.
        let points = wake_points(&[0.0, 0.0, 0.0, 0.0, 88.0, 88.0, 88.0, 88.0, 6962.0]);
        let free = fit_wake(points.clone(), 0.0);
        assert_eq!(
            free.knots.last().map(|k| k.1),
            Some(6962.0),
            "without a spin every point counts"
        );
        // Spinning 1 ms, every calibrated wait is spun through: no wake-up term, and the
        // points are kept as measured.
        let spun = Calibration {
            spin_us: 1000,
            pipe_wake: fit_wake(points.clone(), 1e6),
            ..cal()
        };
        assert!(
            spun.pipe_wake.knots.is_empty(),
            "{:?}",
            spun.pipe_wake.knots
        );
        assert_eq!(spun.pipe_wake.points, points);
        let k = |s: &str| Plan::Kernel(s.into());
        let pipe = Plan::Pipe(vec![k("a"), k("b")]);
        assert!(spun.overhead(&pipe, "test").saturating.is_empty());
        // Extras of 129 down to -405 ns, all spun through: no knots, nothing added.
        let noise = wake_points(&[129.0, 81.0, 84.0, 94.0, 70.0, 60.0, -32.0, -9.0, -405.0]);
        assert!(fit_wake(noise, 1e6).knots.is_empty());
        // A spin of 10 µs: the waits beyond it still count, the busy baseline too.
        let kept = slept_points(&points, 100.0, 10_000.0);
        let spins: Vec<f64> = kept.iter().map(|p| p.spin_ns).collect();
        assert_eq!(spins, [1100.0, 12100.0, 16100.0, 24100.0, 32100.0]);
        assert_eq!(slept_points(&points, 100.0, 0.0), points);
    }

    #[test]
    fn array_calibrations_compose_their_wake_up_through_the_points() {
        let mut c = cal();
        // `wake_point` adds 100 ns; the calibration's pipe(nop, nop) extra is 80 and its
        // `nop` stage 100: waits of T − 100, extras of the given ones + 20.
        let extras = [
            0.0, 0.0, 0.0, 1000.0, 1200.0, 2000.0, 3000.0, 3500.0, 4000.0,
        ];
        let points = wake_points(&extras);
        c.pipe_wake = fit_wake(points.clone(), 0.0);
        let w = c.pipe_wake.clone();
        assert_eq!(w.knots, fit_wake_knots(&points, 80.0, 100.0));
        assert_eq!(w.knots[0], (4000.0, 0.0));
        // The baseline is the busy pipelines' own hand-off at 1–2 µs, not pipe(nop, nop)'s:
        // every point 220 ns slower, or a disturbed pipe(nop, nop), leaves the knots.
        let slower: Vec<WakePoint> = points
            .iter()
            .map(|p| WakePoint {
                pipe_ns: p.pipe_ns + 220.0,
                ..p.clone()
            })
            .collect();
        assert_eq!(fit_wake_knots(&slower, 80.0, 100.0), w.knots);
        assert_eq!(fit_wake_knots(&points, 500.0, 100.0), w.knots);
        let k = |s: &str| Plan::Kernel(s.into());
        let o = c.overhead(&Plan::Pipe(vec![k("a"), k("b")]), "test");
        assert_eq!(o.saturating.len(), 6, "{:?}", o.saturating);
        assert!(o.saturating.iter().all(|s| s.pipeline_slack == Some(0)));
        assert!(
            o.saturating[0].what.contains("part 1 of 6"),
            "{}",
            o.saturating[0].what
        );
        let segs: Vec<(f64, f64, f64)> = o
            .saturating
            .iter()
            .map(|s| (s.threshold_ns, s.slope, s.cap_ns))
            .collect();
        assert!((segments_at(&segs, 5000.0) - 500.0).abs() < 1e-6);
        assert!((segments_at(&segs, 20000.0) - 3250.0).abs() < 1e-6);
        assert!((segments_at(&segs, 50000.0) - 4000.0).abs() < 1e-6);
    }

    #[test]
    fn wake_up_terms_name_their_pipelines_in_the_order_composition_lists_them() {
        use perfcompose_core::components::Components;
        use perfcompose_core::compose::{compose, ComposeOptions};
        let mut c = cal();
        // Half a nanosecond per ns of slack, up to a second.
        c.pipe_wake.knots = vec![(0.0, 0.0), (2e9, 1e9)];
        let text = "seq(pipe(a, b), tpool(2, pipe(c, pipe(d, e))), pipe(tpool(2, pipe(a, c)), e))";
        let term = perfcompose_core::term::parse_term("t", text).unwrap();
        let plan = crate::validate::plan_from_term(&term).unwrap();
        let o = c.overhead(&plan, "test");
        let opts = ComposeOptions { cores: Some(2) };
        let comps = Components::from_models(
            "t",
            &[
                ("a", "10"),
                ("b", "4"),
                ("c", "30"),
                ("d", "1"),
                ("e", "20"),
            ],
        )
        .unwrap();
        let comp = compose(&term, &comps, opts).unwrap();
        let spans: Vec<&str> = comp
            .pipelines
            .iter()
            .map(|p| &text[p.span.start..p.span.end])
            .collect();
        assert_eq!(
            spans,
            [
                "pipe(a, b)",
                "pipe(c, pipe(d, e))",
                "pipe(tpool(2, pipe(a, c)), e)",
                "pipe(a, c)"
            ]
        );
        let named: Vec<(Option<usize>, String)> = o
            .saturating
            .iter()
            .map(|s| (s.pipeline_slack, s.what.clone()))
            .collect();
        for (i, span) in spans.iter().enumerate() {
            assert!(
                named
                    .iter()
                    .any(|(p, what)| *p == Some(i) && what.contains(&format!("in {span} ("))),
                "{i} {span}: {named:?}"
            );
        }
        // Slacks 10 − 4, 30 − 20 (tpool(2, ...) halves the stages to 15 and 10, `scale`
        // restores them), 20 − 15 and 30 − 10, at half a nanosecond each.
        let total = o.apply_composed(&comp, &term, &comps, opts);
        let model = comp.model.eval_at(&[]).unwrap();
        let v = total.eval_at(&[]).unwrap();
        let wakes = 0.5 * (6.0 + 10.0 + 5.0 + 20.0);
        assert!((v - (model + o.ns_per_element + wakes)).abs() < 1e-9, "{v}");
    }

    /// A hand-off calibration whose pipelines add, over one stage, 60 ns (fastest
    /// repetitions 50) with no slack, 200 (190) at 250 ns, 210 (210) at 500 and 205
    /// (200) with a `nop` neighbour.
    fn handoff() -> HandoffCalibration {
        let p = |slack_ns: f64, pipe_ns: f64, pipe_min_ns: f64| HandoffPoint {
            spin_ns: 2000.0,
            slack_ns,
            stage_ns: 2000.0,
            stage_min_ns: 1990.0,
            pipe_ns,
            pipe_min_ns,
        };
        HandoffCalibration {
            points: vec![
                p(0.0, 2060.0, 2040.0),
                p(250.0, 2200.0, 2180.0),
                p(500.0, 2210.0, 2200.0),
                p(2000.0, 2205.0, 2190.0),
            ],
        }
    }

    #[test]
    fn busy_pipelines_add_the_no_slack_hand_off_and_its_rise_at_the_pipeline_slack() {
        use perfcompose_core::components::Components;
        use perfcompose_core::compose::{compose, ComposeOptions};
        let mut c = cal();
        c.pipe_handoff = handoff();
        let k = |s: &str| Plan::Kernel(s.into());
        let pipe = Plan::Pipe(vec![k("a"), k("b")]);
        // The constant: one stage (`nop`, 100) and the hand-off at no slack (median 60),
        // instead of `pipe(nop, nop)`'s 80; per hand-off.
        assert!((c.overhead_ns(&pipe) - 160.0).abs() < TOL);
        let pipe3 = Plan::Pipe(vec![k("a"), k("b"), k("c")]);
        assert!((c.overhead_ns(&pipe3) - 220.0).abs() < TOL);
        // The fastest repetitions with the minimum.
        let m = c.for_statistic(Measure::Minimum);
        assert!((m.overhead_ns(&pipe) - 150.0).abs() < TOL);
        // The rise over it: 140 at 250, then the last two pooled (never falling): 147.5
        // with the medians, 155 with the fastest repetitions; nothing at no slack.
        let h = handoff();
        assert_eq!(
            h.ramp_knots(false),
            [(0.0, 0.0), (250.0, 140.0), (500.0, 147.5), (2000.0, 147.5)]
        );
        assert_eq!(
            h.ramp_knots(true),
            [(0.0, 0.0), (250.0, 140.0), (500.0, 155.0), (2000.0, 155.0)]
        );
        // Composed on the slack of the pipeline less a tenth of its slowest stage
        // (HANDOFF_SLACK_RESOLUTION, 100 ns here): equal stages pay the constant only,
        // and so does a slack of 100; 125 pays a tenth of the first rise, 500 (400 on
        // the curve) most of the second, 1,000 all of it.
        let o = c.overhead(&pipe, "test");
        assert!(o
            .saturating
            .iter()
            .all(|s| s.pipeline_slack == Some(0) && s.what.contains("busy stages' hand-off")));
        let term = perfcompose_core::term::parse_term("t", "pipe(a, b)").unwrap();
        let opts = ComposeOptions { cores: Some(2) };
        for (b, rise) in [
            (1000.0, 0.0),
            (900.0, 0.0),
            (875.0, 14.0),
            (500.0, 144.5),
            (0.0, 147.5),
        ] {
            let comps =
                Components::from_models("t", &[("a", "1000"), ("b", &b.to_string())]).unwrap();
            let comp = compose(&term, &comps, opts).unwrap();
            let v = o
                .apply_composed(&comp, &term, &comps, opts)
                .eval_at(&[])
                .unwrap();
            assert!((v - (1000.0 + 160.0 + rise)).abs() < 1e-9, "b = {b}: {v}");
        }
        // Without points at no slack, the pipeline keeps `pipe(nop, nop)`'s hand-off and
        // gets no rise.
        let mut none = handoff();
        none.points.retain(|p| p.slack_ns > 0.0);
        c.pipe_handoff = none;
        assert!((c.overhead_ns(&pipe) - 180.0).abs() < TOL);
        assert!(c.overhead(&pipe, "test").saturating.is_empty());
    }

    #[test]
    fn pipelines_get_a_saturating_wake_up_term_scaled_by_the_pools_around_them() {
        let mut c = cal();
        // A quarter of a nanosecond per ns of slack, up to 2 µs.
        c.pipe_wake.knots = vec![(0.0, 0.0), (8000.0, 2000.0)];
        let k = |s: &str| Plan::Kernel(s.into());
        let pipe3 = Plan::Pipe(vec![k("a"), k("b"), k("c")]);
        let o = c.overhead(&pipe3, "test");
        assert!((o.ns_per_element - 260.0).abs() < TOL);
        assert_eq!(o.saturating.len(), 1);
        // One wake-up per chain (the slowest stage's hand-off), however many stages.
        assert!((o.saturating[0].slope - 0.25).abs() < TOL);
        assert!((o.saturating[0].cap_ns - 2000.0).abs() < TOL);
        assert!((o.saturating[0].scale - 1.0).abs() < TOL);
        assert_eq!(o.saturating[0].pipeline_slack, Some(0));
        let nested = Plan::Pipe(vec![Plan::Pipe(vec![k("a"), k("b")]), k("c")]);
        assert_eq!(c.overhead(&nested, "test").saturating.len(), 1);
        // A pipeline inside a stage of another is still part of the one chain; one in a
        // task pool inside a stage is a chain of its own.
        let inner = Plan::Pipe(vec![
            k("a"),
            Plan::TPool(2, Box::new(Plan::Pipe(vec![k("b"), k("c")]))),
        ]);
        let o = c.overhead(&inner, "test");
        assert_eq!(o.saturating.len(), 2);
        assert!((o.saturating[1].scale - 2.0).abs() < TOL);
        assert_eq!(o.saturating[1].pipeline_slack, Some(1));
        // Inside tpool(4, ...) on 2 calibrated cores: each pipeline sees every 2nd element.
        let pooled = Plan::TPool(4, Box::new(Plan::Pipe(vec![k("a"), k("b")])));
        let o = c.overhead(&pooled, "test");
        assert!((o.saturating[0].scale - 2.0).abs() < TOL);
        // apply(): model + c + min(cap, slope·scale·model), evaluated.
        let model = perfcompose_core::model::parse_model("10 * x").unwrap();
        let total = o.apply(&model);
        let at = |x: f64| total.eval_at(&[("x", x)]).unwrap();
        let c0 = o.ns_per_element;
        assert!((at(10.0) - (100.0 + c0 + 0.25 * 2.0 * 100.0)).abs() < 1e-6);
        assert!((at(1e4) - (1e5 + c0 + 2000.0)).abs() < 1e-6);
        // No pipeline, no wake-up term.
        assert!(c.overhead(&k("a"), "test").saturating.is_empty());
    }

    #[test]
    fn mapreduce_jobs_add_their_calibrated_cost_by_style_and_nearest_threads() {
        let mut c = cal();
        c.mapreduce = vec![
            JobCost {
                reduce: "pairwise".into(),
                threads: 1,
                ns_per_job: 5000.0,
            },
            JobCost {
                reduce: "per_key".into(),
                threads: 2,
                ns_per_job: 12000.0,
            },
        ];
        let mr = |reduce: &str, threads| Plan::MapReduce {
            map: "map".into(),
            reduce: reduce.into(),
            nodes: 1,
            threads,
        };
        // Measured through one stage: the total is the job cost itself.
        assert!((c.overhead_ns(&mr("reduce_pairwise", 4)) - 5000.0).abs() < TOL);
        assert!((c.overhead_ns(&mr("reduce_per_key", 1)) - 12000.0).abs() < TOL);
        // An unknown (user) reduce kernel counts as pairwise.
        assert!((c.overhead_ns(&mr("mine", 2)) - 5000.0).abs() < TOL);
    }

    #[test]
    fn busy_jobs_fit_the_extra_over_the_ideal_and_the_trivial_job() {
        let trivial = [JobCost {
            reduce: "pairwise".into(),
            threads: 2,
            ns_per_job: 2_000.0,
        }];
        // Two threads, 8 inputs: ideal = 4·T. Extra over ideal + trivial: 0.5·ideal up
        // to 30 µs.
        let points: Vec<JobPoint> = JOB_SPINS
            .iter()
            .map(|&t| {
                let ideal = 4.0 * t as f64;
                JobPoint {
                    spin_ns: t as f64,
                    ideal_ns: ideal,
                    job_ns: ideal + 2_000.0 + (0.5 * ideal).min(30_000.0),
                }
            })
            .collect();
        let b = job_busy_of("pairwise", 2, points.clone(), &trivial);
        assert!((b.cap_ns - 30_000.0).abs() < 1e-6, "{}", b.cap_ns);
        assert!((b.slope - 0.5).abs() < 1e-9, "{}", b.slope);
        // No trivial job of that style and count measured: nothing is subtracted.
        let b = job_busy_of("per_key", 2, points.clone(), &trivial);
        assert!((b.cap_ns - 32_000.0).abs() < 1e-6, "{}", b.cap_ns);
        // Jobs no slower than ideal + trivial: no busy cost at all.
        let flat: Vec<JobPoint> = points
            .iter()
            .map(|p| JobPoint {
                job_ns: p.ideal_ns + 1_000.0,
                ..p.clone()
            })
            .collect();
        let b = job_busy_of("pairwise", 2, flat, &trivial);
        assert_eq!((b.slope, b.cap_ns), (0.0, 0.0));
    }

    #[test]
    fn mapreduce_jobs_get_a_saturating_wake_up_term_by_style_and_nearest_threads() {
        let mut c = cal();
        let busy = |reduce: &str, threads, cap_ns| JobBusy {
            reduce: reduce.into(),
            threads,
            points: Vec::new(),
            slope: 0.5,
            cap_ns,
        };
        c.mapreduce_busy = vec![
            busy("pairwise", 1, 10_000.0),
            busy("pairwise", 2, 40_000.0),
            busy("per_key", 2, 70_000.0),
        ];
        let mr = |reduce: &str, threads| Plan::MapReduce {
            map: "map".into(),
            reduce: reduce.into(),
            nodes: 1,
            threads,
        };
        let o = c.overhead(&mr("reduce_pairwise", 2), "test");
        assert_eq!(o.saturating.len(), 1);
        assert!((o.saturating[0].cap_ns - 40_000.0).abs() < TOL);
        assert!((o.saturating[0].scale - 1.0).abs() < TOL);
        // Nearest calibrated thread count; per-key kernels get the per-key figure.
        let o = c.overhead(&mr("reduce_per_key", 4), "test");
        assert!((o.saturating[0].cap_ns - 70_000.0).abs() < TOL);
        let o = c.overhead(&mr("reduce_pairwise", 1), "test");
        assert!((o.saturating[0].cap_ns - 10_000.0).abs() < TOL);
        // Inside a task pool of 2 (2 calibrated cores), each job sees every 2nd element.
        let pooled = Plan::TPool(2, Box::new(mr("reduce_pairwise", 2)));
        assert!((c.overhead(&pooled, "test").saturating[0].scale - 2.0).abs() < TOL);
        // apply(): the job model plus min(cap, slope·model).
        let model = perfcompose_core::model::parse_model("75000 * x").unwrap();
        let total = c.overhead(&mr("reduce_pairwise", 2), "test").apply(&model);
        let at = |x: f64| total.eval_at(&[("x", x)]).unwrap();
        let c0 = c.overhead_ns(&mr("reduce_pairwise", 2));
        assert!((at(4.0) - (300_000.0 + c0 + 40_000.0)).abs() < 1e-6);
        // Nothing calibrated: no term; no MapReduce: no term.
        c.mapreduce_busy.clear();
        assert!(c
            .overhead(&mr("reduce_pairwise", 2), "test")
            .saturating
            .is_empty());
    }

    #[test]
    fn busy_pools_add_what_busy_workers_lose_beyond_the_nop_figure() {
        let mut c = cal();
        let k = |s: &str| Plan::Kernel(s.into());
        let pool = Plan::TPool(2, Box::new(k("a")));
        // Without a busy-pool calibration: nothing saturating.
        assert!(c.overhead(&pool, "t").saturating.is_empty());
        // Two busy workers: pool = single/2 + 200 at every spin time.
        let points = vec![
            (1000.0, 750.0, 1100.0),
            (2000.0, 1250.0, 2100.0),
            (4000.0, 2250.0, 4100.0),
        ];
        c.pool_busy = vec![pool_busy_of(2, points)];
        assert!((c.pool_busy[0].extra_ns - 200.0).abs() < TOL);
        let o = c.overhead(&pool, "t");
        assert_eq!(o.saturating.len(), 1);
        let s = &o.saturating[0];
        // (T + 100)/2 + 200 per element against the nop figure's T/2 + 90: Δ = 160 more.
        assert!((s.cap_ns - 160.0).abs() < TOL, "{s:?}");
        assert!(
            (s.slope - 0.16).abs() < TOL && (s.scale - 2.0).abs() < TOL,
            "{s:?}"
        );
        // Applied to a block of 800 ns per task (400 per element): 0.16 · 800 = 128 ns.
        let model = o.apply(&perfcompose_core::Expr::constant(400.0));
        let v = model.eval_at(&[]).unwrap();
        assert!((v - (400.0 + 90.0 + 128.0)).abs() < 1e-6, "{v}");
        // Oversubscribed pools and pools of other sizes: no busy term.
        assert!(c
            .overhead(&Plan::TPool(4, Box::new(k("a"))), "t")
            .saturating
            .is_empty());
        // Inside a pipeline, and a pool of pools scales the worker's time.
        let nested = Plan::Pipe(vec![k("b"), pool.clone()]);
        assert_eq!(c.overhead(&nested, "t").saturating.len(), 1);
    }

    /// A fresh scratch folder for `name`.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pc-overhead-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A calibration with every part filled in.
    fn full() -> Calibration {
        let mut c = cal();
        let extras = [
            0.0, 0.0, 0.0, 1000.0, 1200.0, 2000.0, 3000.0, 3500.0, 4000.0,
        ];
        c.pipe_wake = fit_wake(wake_points(&extras), 0.0);
        c.pipe_handoff = handoff();
        c.mapreduce = vec![JobCost {
            reduce: "pairwise".into(),
            threads: 1,
            ns_per_job: 5000.0,
        }];
        let point = JobPoint {
            spin_ns: 1000.0,
            ideal_ns: 8000.0,
            job_ns: 17000.0,
        };
        c.mapreduce_busy = vec![job_busy_of("pairwise", 1, vec![point], &c.mapreduce)];
        c.pool_busy = vec![pool_busy_of(2, vec![(1000.0, 750.0, 1100.0)])];
        c.pinned = true;
        c.spin_us = 1000;
        c.block_call = BlockCall {
            x: BLOCK_CALL_X,
            ns: 40.0,
            min_ns: 37.0,
        };
        c
    }

    #[test]
    fn a_saved_calibration_loads_as_it_was_saved() {
        let dir = scratch("round-trip");
        let path = dir.join("sub").join("o.json");
        let c = full();
        assert!(!c.pipe_wake.knots.is_empty() && c.mapreduce_busy[0].cap_ns > 0.0);
        c.save(&path).unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), Some(c));
        // Fitted values are stored as fitted when calibrating, not fitted again on loading.
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["version"], CALIBRATION_VERSION);
        json["pipe_wake"]["knots"] = serde_json::json!([[0.0, 0.0], [1.0, 2.0]]);
        std::fs::write(&path, json.to_string()).unwrap();
        let back = Calibration::load(&path).unwrap().unwrap();
        assert_eq!(back.pipe_wake.knots, [(0.0, 0.0), (1.0, 2.0)]);
        // No file: no calibration.
        assert_eq!(Calibration::load(&dir.join("missing.json")).unwrap(), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_calibration_of_another_version_is_refused_with_a_request_to_recalibrate() {
        let dir = scratch("versions");
        let path = dir.join("o.json");
        let load = |json: &serde_json::Value| {
            std::fs::write(&path, serde_json::to_string_pretty(json).unwrap()).unwrap();
            Calibration::load(&path)
        };
        let mut json = serde_json::to_value(full()).unwrap();
        // None: written before calibrations had versions.
        json.as_object_mut().unwrap().remove("version");
        let err = load(&json).unwrap_err();
        assert!(matches!(err.kind, FileErrorKind::Version(None)), "{err:?}");
        let text = err.to_string();
        for needle in [
            "o.json: ",
            "without a version",
            &format!("reads version {CALIBRATION_VERSION}"),
            "recalibrate with `perfcompose calibrate overhead`",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        // The version comes first: a file of the shape of older builds (optional parts
        // missing, fitted lines this one does not store) is told its version, not its
        // shape.
        let old = serde_json::json!({
            "host": "h",
            "cores": 2,
            "patterns": [],
            "pipe_wake": {"points": [], "slope": 0.0, "cap_ns": 0.0},
            "pinned": true,
        });
        let err = load(&old).unwrap_err();
        assert!(matches!(err.kind, FileErrorKind::Version(None)), "{err:?}");
        // An older and an unknown (newer) version.
        for (v, says) in [
            (CALIBRATION_VERSION - 1, "older than this perfcompose reads"),
            (CALIBRATION_VERSION + 1, "unknown to this perfcompose"),
        ] {
            json["version"] = v.into();
            let err = load(&json).unwrap_err();
            assert!(
                matches!(err.kind, FileErrorKind::Version(Some(got)) if got == v),
                "{err:?}"
            );
            let text = err.to_string();
            for needle in [
                format!("version {v}, {says}"),
                format!("version {CALIBRATION_VERSION}"),
                "perfcompose calibrate overhead".to_string(),
            ] {
                assert!(text.contains(&needle), "{needle}: {text}");
            }
        }
        // The current version loads.
        json["version"] = CALIBRATION_VERSION.into();
        assert_eq!(load(&json).unwrap(), Some(full()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_malformed_calibration_is_an_error_at_its_file_line_and_column() {
        let dir = scratch("malformed");
        let path = dir.join("o.json");
        let error = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let err = Calibration::load(&path).unwrap_err();
            assert!(
                matches!(err.kind, FileErrorKind::Malformed { .. }),
                "{err:?}"
            );
            err.to_string()
        };
        let err = error("{ not json");
        assert!(
            err.contains("o.json:1:3: not a perfcompose overhead calibration"),
            "{err}"
        );
        let err = error("5");
        assert!(
            err.contains("an overhead calibration (a JSON object)"),
            "{err}"
        );
        // The current version with a field missing, one it does not know, one of the
        // wrong type (on line 2 of the file).
        let mut json = serde_json::to_value(full()).unwrap();
        json.as_object_mut().unwrap().remove("block_call");
        let err = error(&json.to_string());
        assert!(err.contains("missing field `block_call`"), "{err}");
        let mut json = serde_json::to_value(full()).unwrap();
        json["block_calls"] = 1.into();
        let err = error(&json.to_string());
        assert!(err.contains("unknown field `block_calls`"), "{err}");
        let text = format!("{{\"version\": {CALIBRATION_VERSION},\n  \"host\": 7}}");
        let err = error(&text);
        assert!(err.contains("o.json:2:"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
