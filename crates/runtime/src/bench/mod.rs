//! Unit performance tests of kernels and whole-program measurement, over a sweep of input
//! sizes.
//!
//! Per size: warm-up runs, then repetitions until the 95% confidence interval of the
//! median is within the target (adaptive mode — measure only as much as the accuracy
//! needs, in the spirit of seed 003's threshold rule) or the repetition/time budget is
//! spent. Calls too short for the clock are batched so one sample lasts at least
//! [`Sampling::min_sample`]; a sample is the time per call (ns).
//!
//! The kernel is timed the way programs call it (seed 000 §4 times its blocks as the
//! program invokes them): inputs are prepared and outputs dropped outside the timed
//! region, and a cold input ([`InputState::Cold`]) arrives exactly as a program's stream
//! delivers it — each repetition makes a fresh stream of inputs the way a whole-program
//! measurement does ([`stream_len`]) and times the kernel over all of it, in order. (Two
//! earlier protocols were wrong by up to 30% for the memory-bound `inc`: copying the input
//! just before the call left it in the cache, and drawing inputs from a long-lived pool
//! twice the size of the last-level cache made its speed depend on when the pool was
//! written: the cache is not LRU, so "evicted by newer data" is not "not in the cache".)
//! A block that runs after another block of a `seq` is timed warm ([`InputState::Warm`]),
//! one that runs after another stage of a `pipe` on an input just written by another
//! thread ([`InputState::Remote`]). A whole program is timed on a stream of elements and
//! reports total time / elements, the seed's metric.

mod gather;
mod replica;
mod stage;
pub mod stats;

pub use stats::quantiles;
pub mod tandem;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use perfcompose_core::measure::{Experiment, SeriesKey};
use serde::Serialize;

use crate::ctx::Config;
use crate::data::Data;
use crate::error::{Error, KernelError};
use crate::host::{available_cores, available_memory, cache_bytes, last_level_cache_bytes};
use crate::kernel::{input_pool_size, unit_call, Inputs, Kernel, Registry};
use crate::plan::{stream_inputs, Built, Plan};

/// Metric name written to measurement files.
pub const METRIC: &str = "time";
/// Parameter name written to measurement files.
pub const PARAMETER: &str = "x";

/// How many repetitions to take per point.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// Untimed repetitions before sampling.
    pub warmup: u32,
    pub min_reps: u32,
    pub max_reps: u32,
    /// Adaptive stop: relative half-width of the median's 95% CI to reach. `None` takes
    /// exactly `min_reps` repetitions... up to `max_reps` (always `max_reps` when
    /// `min_reps == max_reps`).
    pub target: Option<f64>,
    /// A sample lasts at least this long (short calls are batched).
    pub min_sample: Duration,
    /// Stop repeating a point after this long even if the target is not reached (the
    /// point is still reported, with its CI).
    pub max_point_time: Duration,
}

impl Sampling {
    /// Fast defaults: about a minute for all built-in kernels.
    pub fn quick() -> Sampling {
        Sampling {
            warmup: 1,
            min_reps: 7,
            max_reps: 40,
            target: Some(0.02),
            min_sample: Duration::from_micros(200),
            max_point_time: Duration::from_millis(1500),
        }
    }

    /// The seed's protocol: 256 repetitions per point, no early stop.
    pub fn full() -> Sampling {
        Sampling {
            warmup: 3,
            min_reps: 256,
            max_reps: 256,
            target: None,
            min_sample: Duration::from_micros(200),
            max_point_time: Duration::from_secs(3600),
        }
    }
}

/// Statistics of one measured point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PointStats {
    pub x: u64,
    /// Time per call (kernels) or per element (programs) of each repetition, ns.
    pub values: Vec<f64>,
    pub median: f64,
    /// Coefficient of variation of `values`.
    pub cv: f64,
    /// 95% confidence interval of the median (equal to the median below 6 repetitions).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Calls (kernels) or elements (programs) per repetition.
    pub batch: u64,
    /// Whether the adaptive target was reached (always true without a target).
    pub converged: bool,
    /// A pipeline stage's unit test ([`Stage`]): the mean call time of each window of
    /// [`PHASE_WINDOW`] consecutive calls over its repetition's mean, every repetition
    /// pooled, as [`PHASE_QUANTILES`] quantiles in ascending order (empty for other
    /// measurements): how the stage's slow and fast phases spread, for the stochastic
    /// `max` of a pipeline (`bench::tandem::phase_hinges`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<f64>,
}

/// Calls per window of a stage's phases ([`PointStats::phases`]): the runtime's queue
/// capacity, since a queue absorbs the swings of shorter stretches.
pub const PHASE_WINDOW: usize = crate::ctx::DEFAULT_CAPACITY;
/// Quantiles kept of a stage's phases ([`PointStats::phases`]).
pub const PHASE_QUANTILES: usize = 64;

/// A measured series: one kernel or one program over the sweep.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Series {
    /// Kernel name or term.
    pub name: String,
    /// `kernel` or `program`.
    pub kind: &'static str,
    pub unit: &'static str,
    pub parameter: &'static str,
    pub points: Vec<PointStats>,
}

impl Series {
    /// A kernel's unit performance test (ns per call over `x`).
    pub fn kernel(name: impl Into<String>, points: Vec<PointStats>) -> Series {
        Series {
            name: name.into(),
            kind: "kernel",
            unit: "ns",
            parameter: PARAMETER,
            points,
        }
    }

    /// A whole program's measurement (ns per element over `x`).
    pub fn program(name: impl Into<String>, points: Vec<PointStats>) -> Series {
        Series {
            kind: "program",
            ..Series::kernel(name, points)
        }
    }
}

/// Progress reports for a progress bar.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    pub label: &'a str,
    pub x: u64,
    pub done: usize,
    pub total: usize,
}

/// Repeat `one` (returns ns per call of one repetition) according to `spec`.
pub fn sample(
    spec: &Sampling,
    mut one: impl FnMut() -> Result<f64, Error>,
) -> Result<(Vec<f64>, bool), Error> {
    for _ in 0..spec.warmup {
        one()?;
    }
    let start = Instant::now();
    let mut values = Vec::new();
    loop {
        values.push(one()?);
        let n = values.len() as u32;
        if n < spec.min_reps {
            continue;
        }
        let converged = match spec.target {
            None => true,
            Some(t) => stats::relative_ci_half_width(&values).is_some_and(|w| w <= t),
        };
        if (spec.target.is_some() && converged) || n >= spec.max_reps {
            return Ok((values, converged));
        }
        if start.elapsed() >= spec.max_point_time {
            return Ok((values, false));
        }
    }
}

impl PointStats {
    /// Statistics of repetitions pooled from several measurements (batch unknown: 0; the
    /// confidence target not checked: `converged` false).
    pub fn of(x: u64, values: Vec<f64>) -> PointStats {
        point(x as usize, values, 0, false)
    }
}

fn point(x: usize, values: Vec<f64>, batch: u64, converged: bool) -> PointStats {
    let median = stats::median(&values);
    let (ci_low, ci_high) = stats::median_ci(&values).unwrap_or((median, median));
    PointStats {
        x: x as u64,
        cv: stats::cv(&values),
        median,
        ci_low,
        ci_high,
        values,
        batch,
        converged,
        phases: Vec::new(),
    }
}

/// Memory a benchmark may use for inputs: half of what the OS reports available (Linux
/// `MemAvailable`), or 4 GiB where that cannot be read.
pub fn default_memory_limit() -> u128 {
    available_memory().map_or(4 << 30, |bytes| bytes / 2)
}

/// Most calls batched into one sample (bounds the inputs prepared in advance).
const MAX_BATCH: u64 = 100_000;

/// Where a kernel's input is when its call starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputState {
    /// In memory, not in a cache: a stream element, or what a queue hands over.
    #[default]
    Cold,
    /// In this core's cache: the input was just written by the block before it on the same
    /// thread (the second block of a `seq`). Timed on copies made right before the calls,
    /// with the batch bounded to half the level-2 cache. A per-key reduction is timed as a
    /// MapReduce job runs it, on the values its thread gathers, key after key, from `x` map
    /// outputs into one reused vector (`gather.rs`).
    Warm,
    /// Just written by another thread: the stage before it in a `pipe` wrote it on another
    /// core and handed it over through a queue. Timed over a stream made like a cold
    /// one, which a helper thread writes (one word per cache line, [`Data::touch`]) and
    /// hands over through a queue of the runtime's default capacity, running ahead as the
    /// stage before a slower one does; the calls are timed in groups of what is waiting.
    Remote,
}

impl InputState {
    /// Suffix of the component key of a kernel measured in this state (`inc_warm`).
    pub fn suffix(self) -> &'static str {
        match self {
            InputState::Cold => "",
            InputState::Warm => "_warm",
            InputState::Remote => "_remote",
        }
    }
}

/// How a unit test times its block: where the input is, how many other threads run the
/// same block meanwhile, and, for a stage of a pipeline, which blocks run next to it.
///
/// `siblings` > 0 is the block as a worker of a task pool (or a MapReduce) runs it: the
/// other workers run the same block at the same time, and share the caches, the memory
/// bus and, on a virtual machine, whatever the host puts behind the cores. Cold, one
/// stream is made for all and put in one queue that every thread takes from, as a pool's
/// workers take the elements of one stream; a sibling that runs out, and every sibling of
/// a warm or handed-over test, goes on with fresh copies of its own until the timed calls
/// end. Each call is timed on its own (the queue operations are the pattern's overhead,
/// calibrated on their own). Cold, the calls of every thread on the shared stream count,
/// pooled (their summed time over their number): the threads take elements as they get
/// free, so a thread on a slower core takes fewer, and the pooled mean is the time per
/// call at which the threads together get through the stream — what a task pool's
/// throughput is made of. Otherwise only the timed thread's calls count. With streams of
/// their own the siblings did not slow `inc` down, while each worker of `tpool(2, inc)`
/// ran 2.5× slower than `inc` alone at x = 1,024; dealt out in turn (element i to thread
/// i mod N) the test saw most of it, but the threads drift apart, and neighbouring
/// elements are then seldom worked on at the same time as in the pool: at x = 1,024 the
/// pool's calls took 3–15% longer than dealt ones, as long as queued ones
/// (docs/runtime.md, "Loaded unit tests").
///
/// `stage` is the block as one stage of a pipeline runs it ([`Stage`]): the other stages
/// run on threads of their own, on the same stream, at the pace the pipeline sets.
///
/// `replica` is the block as one of a pool's `seq` runs it ([`Replica`]): the timed thread
/// and its siblings all run the whole `seq` on the elements of one cold stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    pub input: InputState,
    /// Other threads running the block meanwhile.
    pub siblings: usize,
    /// The pipeline the block is a stage of, if it is timed as one.
    pub stage: Option<Stage>,
    /// The `seq` a task pool's workers run that the block is part of, if it is timed as
    /// one of its blocks (with `siblings` > 0).
    pub replica: Option<Replica>,
}

/// A block timed as a stage of a pipeline whose stages are single blocks (`pipe(qsort,
/// inc)`, `pipe(pipe(qsort, inc), nop)`): each of the other stages runs on a thread of its
/// own, connected by queues of the runtime's default capacity, and the stream flows
/// through all of them as through the program — the stages before it write the element
/// and hand it over, the stages after it take what it returns. Every stage takes one
/// element at a time and hands it on as soon as its call returns, waiting on its queues
/// as a pinned program's workers do. Only the calls of the timed stage are counted,
/// without the queue operations (those are the pattern's overhead, calibrated on their
/// own). A stage of a pipeline
/// runs next to its neighbours at the pace of the slowest: measured alone, `inc` did not
/// show what a busy neighbour core costs it, which changed from 0 to 60% within minutes
/// on the development host (docs/validation.md, run N).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Position of the timed block among the stages, from 0.
    pub index: usize,
    /// Registry names of the stages' blocks, in order, the timed one included.
    pub kernels: Vec<String>,
}

impl Stage {
    /// `_stageI_of_A_then_B…` (I from 1).
    fn suffix(&self) -> String {
        format!(
            "_stage{}_of_{}",
            self.index + 1,
            self.kernels.join("_then_")
        )
    }

    /// Split `NAME_stageI_of_A_then_B…` into `NAME` and the stage, if `name` ends that way
    /// (I from 1, no leading zero, at most the number of stages; at least two stages).
    fn parse(name: &str) -> Option<(&str, Stage)> {
        let (base, index, kernels) = split_group(name, "_stage")?;
        Some((base, Stage { index, kernels }))
    }
}

/// A block of the `seq` a task pool's workers run (`tpool(2, seq(inc, inc))`), timed as
/// the pool runs it: every thread, the timed one and its siblings, takes elements of one
/// cold stream and runs the whole `seq` on each, block after block on the same thread;
/// only the calls of the timed block are counted, on every thread, pooled as a cold
/// `_parN` test pools them ([`Conditions`]). Timed next to
/// siblings running the block alone (`_parN`), the first `inc` of `tpool(2, seq(inc,
/// inc))` ran 9–18% faster at x = 2,048 than next to siblings running the replica, and
/// the second one (warm) 10–13% faster (`examples/pool_replica`,
/// docs/results/pool-seq-calls/).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replica {
    /// Position of the timed block in the `seq`, from 0.
    pub index: usize,
    /// Registry names of the blocks of the `seq`, in order, the timed one included.
    pub kernels: Vec<String>,
}

impl Replica {
    /// `_seqI_of_A_then_B…` (I from 1).
    fn suffix(&self) -> String {
        format!("_seq{}_of_{}", self.index + 1, self.kernels.join("_then_"))
    }

    /// Split `NAME_seqI_of_A_then_B…` into `NAME` and the replica, as [`Stage::parse`].
    fn parse(name: &str) -> Option<(&str, Replica)> {
        let (base, index, kernels) = split_group(name, "_seq")?;
        Some((base, Replica { index, kernels }))
    }
}

/// Split `NAME{marker}I_of_A_then_B…` into `NAME`, I − 1 and the names `A`, `B`, …, if
/// `name` ends that way: I from 1 without a leading zero, at most the number of names,
/// at least two names, none empty.
fn split_group<'n>(name: &'n str, marker: &str) -> Option<(&'n str, usize, Vec<String>)> {
    for (at, _) in name.match_indices(marker) {
        let rest = &name[at + marker.len()..];
        let Some((digits, list)) = rest.split_once("_of_") else {
            continue;
        };
        let Ok(i) = digits.parse::<usize>() else {
            continue;
        };
        let kernels: Vec<String> = list.split("_then_").map(str::to_string).collect();
        if i == 0
            || i.to_string() != digits
            || i > kernels.len()
            || kernels.len() < 2
            || kernels.iter().any(String::is_empty)
        {
            continue;
        }
        return Some((&name[..at], i - 1, kernels));
    }
    None
}

impl Conditions {
    /// Suffix of the component key of a kernel measured this way: the input state's,
    /// then `_parN` when N threads (the timed one and its siblings) run it (`inc_warm_par2`),
    /// then `_stageI_of_A_then_B…` when it is the I-th stage of `pipe(A, B, …)`
    /// (`inc_remote_stage2_of_qsort_then_inc`) or `_seqI_of_A_then_B…` when it is the I-th
    /// block of the `seq(A, B, …)` a pool's workers run (`inc_warm_par2_seq2_of_inc_then_inc`).
    pub fn suffix(&self) -> String {
        let mut s = self.input.suffix().to_string();
        if self.siblings > 0 {
            s += &format!("_par{}", self.siblings + 1);
        }
        if let Some(stage) = &self.stage {
            s += &stage.suffix();
        }
        if let Some(replica) = &self.replica {
            s += &replica.suffix();
        }
        s
    }

    /// Split a kernel name of an input plan into the registry name and the conditions
    /// its suffixes name (`inc_warm_par2` → `inc`, warm, 1 sibling). The inverse of
    /// [`Conditions::suffix`].
    pub fn parse(name: &str) -> (&str, Conditions) {
        let mut c = Conditions::default();
        let mut base = name;
        if let Some((b, stage)) = Stage::parse(base) {
            c.stage = Some(stage);
            base = b;
        } else if let Some((b, replica)) = Replica::parse(base) {
            c.replica = Some(replica);
            base = b;
        }
        if let Some((b, digits)) = base.rsplit_once("_par") {
            // Only the form `suffix` writes: `_par` and a count ≥ 2 without a leading zero.
            match digits.parse::<usize>() {
                Ok(n) if n >= 2 && n.to_string() == digits => {
                    c.siblings = n - 1;
                    base = b;
                }
                _ => {}
            }
        }
        for state in [InputState::Warm, InputState::Remote] {
            if let Some(b) = base.strip_suffix(state.suffix()) {
                c.input = state;
                base = b;
                break;
            }
        }
        (base, c)
    }

    /// The same conditions without the load: no siblings, no neighbouring stages, no
    /// replica (the block timed alone, with its input where it was).
    pub fn alone(&self) -> Conditions {
        Conditions::from(self.input)
    }
}

impl From<InputState> for Conditions {
    fn from(input: InputState) -> Conditions {
        Conditions {
            input,
            ..Conditions::default()
        }
    }
}

/// Time one kernel at one size (unit performance test), inputs cold.
pub fn time_kernel(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
) -> Result<PointStats, Error> {
    time_kernel_in(kernel, x, inputs, spec, memory_limit, InputState::Cold)
}

/// Time one kernel at one size under `how` (an [`InputState`] or [`Conditions`]).
pub fn time_kernel_in(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: impl Into<Conditions>,
) -> Result<PointStats, Error> {
    sample_point(
        spec,
        &mut KernelSampler::new(kernel, x, inputs, spec, memory_limit, how)?,
    )
}

/// One thing timed repeatedly at one size: a kernel in an input state
/// ([`KernelSampler`]) or a whole program on a stream ([`ProgramSampler`]).
pub trait Repeated {
    /// The size measured.
    fn x(&self) -> usize;
    /// Calls (kernels) or elements (programs) per repetition.
    fn batch(&self) -> u64;
    /// One repetition: ns per call or per element.
    fn one(&mut self) -> Result<f64, Error>;
    /// The phases recorded over the repetitions so far ([`PointStats::phases`], not yet
    /// summarised), taken away: a pipeline stage's unit test has them, nothing else.
    fn take_phases(&mut self) -> Vec<f64> {
        Vec::new()
    }
}

/// A unit performance test of one kernel at one size, ready to repeat: distinct inputs
/// made (the templates every repetition copies its inputs from) and the batch sized from
/// a probe.
pub struct KernelSampler<'a> {
    kernel: &'a dyn Kernel,
    op: crate::kernel::Op,
    x: usize,
    state: InputState,
    siblings: usize,
    templates: Arc<Vec<Data>>,
    next: usize,
    batch: u64,
    outputs: Vec<Data>,
    /// The pipeline around a stage's unit test ([`Stage`]).
    rig: Option<stage::Rig>,
    /// The `seq` a pool's workers run around the timed block ([`Replica`]).
    replica: Option<replica::Chain>,
    /// A warm per-key reduction: the map outputs it gathers each key's values from.
    gather: Option<gather::Gather>,
    /// A stage's phases over the repetitions so far ([`PointStats::phases`]).
    phases: Vec<f64>,
}

impl<'a> KernelSampler<'a> {
    /// The unit test of the block `name` of `registry` under `how`: [`KernelSampler::staged`]
    /// for a pipeline stage, [`KernelSampler::new`] otherwise.
    pub fn for_block(
        registry: &'a Registry,
        name: &str,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        if how.stage.is_some() {
            return KernelSampler::staged(registry, x, inputs, spec, memory_limit, how);
        }
        if how.replica.is_some() {
            return KernelSampler::replicated(registry, x, inputs, spec, memory_limit, how);
        }
        let kernel = registry.get(name)?.as_ref();
        KernelSampler::new(kernel, x, inputs, spec, memory_limit, how)
    }

    /// A unit test of `kernel` under `how`. A pipeline stage's test (`how.stage`) needs its
    /// neighbours' blocks: [`KernelSampler::staged`]; a block of a pool's `seq`
    /// (`how.replica`) the other blocks of the `seq`: [`KernelSampler::replicated`].
    pub fn new(
        kernel: &'a dyn Kernel,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: impl Into<Conditions>,
    ) -> Result<KernelSampler<'a>, Error> {
        let Conditions {
            input: state,
            siblings,
            stage,
            replica,
        } = how.into();
        if let Some(stage) = stage {
            return Err(Error::Run(format!(
                "`{}` as stage {} of {} is timed next to the other stages: build its test with KernelSampler::staged",
                kernel.name(),
                stage.index + 1,
                stage.kernels.join(", ")
            )));
        }
        if let Some(replica) = replica {
            return Err(Error::Run(format!(
                "`{}` as block {} of seq({}) is timed in that seq: build its test with KernelSampler::replicated",
                kernel.name(),
                replica.index + 1,
                replica.kernels.join(", ")
            )));
        }
        let bytes = kernel.input_bytes(x, inputs);
        // Each sibling holds a stream of its own.
        if bytes.saturating_mul(2 * (1 + siblings as u128)) > memory_limit {
            return Err(KernelError::TooLarge {
                what: format!("an input of size x={x} for `{}`", kernel.name()),
                needed_bytes: bytes.saturating_mul(2 * (1 + siblings as u128)),
                limit_bytes: memory_limit,
            }
            .into());
        }
        let templates = templates(kernel, x, inputs, memory_limit)?;
        let mut s = KernelSampler {
            kernel,
            op: kernel.op(),
            x,
            state,
            siblings,
            templates,
            next: 0,
            batch: 1,
            outputs: Vec::new(),
            rig: None,
            replica: None,
            gather: None,
            phases: Vec::new(),
        };
        // Probe (twice: the first call pays for cold caches and page faults) to size the
        // batch.
        let mut probe = f64::INFINITY;
        for _ in 0..2 {
            let input = s.copy(0)?;
            let t0 = Instant::now();
            let out = s.call(input)?;
            probe = probe.min(t0.elapsed().as_secs_f64().max(1e-9));
            drop(out);
        }
        // A warm per-key reduction runs on what its thread just gathered from the job's
        // map outputs: timed that way (`gather`), probed over one pass of the keys.
        if let (InputState::Warm, crate::kernel::Op::ReducePerKey(f)) = (state, &s.op) {
            let mut g = gather::Gather::new(kernel, f.clone(), x, inputs, memory_limit / 2)?;
            let keys = gather::GATHER_KEYS;
            g.time(keys, kernel.name())?;
            probe = g.time(keys, kernel.name())? * 1e-9;
            s.gather = Some(g);
        }
        let batch = match state {
            // A stream as long as a program's repetition (`MIN_RUN`).
            InputState::Cold | InputState::Remote => {
                stream_len(probe, bytes, memory_limit / (1 + siblings as u128)) as u64
            }
            // As many calls as one sample needs, within half the level-2 cache.
            InputState::Warm => {
                let by_memory =
                    (memory_limit / (1 + siblings as u128) / bytes.max(1)).max(1) as u64;
                let by_time = (spec.min_sample.as_secs_f64() / probe).ceil() as u64;
                let by_cache =
                    (cache_bytes(2).unwrap_or(1 << 20) as u128 / 2 / bytes.max(1)).max(1);
                by_time
                    .clamp(1, MAX_BATCH)
                    .min(by_memory)
                    .min(by_cache as u64)
            }
        };
        s.batch = batch;
        s.outputs = Vec::with_capacity(batch as usize);
        Ok(s)
    }

    fn copy(&self, i: usize) -> Result<Data, Error> {
        self.templates[i]
            .try_clone()
            .ok_or_else(|| self.not_copyable())
    }

    fn not_copyable(&self) -> Error {
        not_copyable(self.kernel.name())
    }

    fn call(&self, input: Data) -> Result<Data, Error> {
        crate::unwind::catch(|| unit_call(&self.op, input))
            .map_err(|m| Error::Run(format!("kernel `{}` panicked: {m}", self.kernel.name())))
    }

    /// The next input template (distinct inputs, cycled).
    fn next_copy(&mut self) -> Result<Data, Error> {
        self.next = (self.next + 1) % self.templates.len();
        self.copy(self.next)
    }
}

impl Repeated for KernelSampler<'_> {
    fn x(&self) -> usize {
        self.x
    }

    fn batch(&self) -> u64 {
        self.batch
    }

    fn take_phases(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.phases)
    }

    fn one(&mut self) -> Result<f64, Error> {
        if self.rig.is_some() {
            return self.one_in_pipeline();
        }
        if self.siblings == 0 && self.replica.is_none() {
            return self.one_alone();
        }
        let stop = AtomicBool::new(false);
        let started = Barrier::new(self.siblings + 1);
        let len = self.batch as usize;
        // What every thread runs on an element, and the inputs its streams are made of:
        // the block, or a pool's whole `seq` and the inputs of its first block.
        let (chain, templates) = match &self.replica {
            Some(r) => (r.ops(), r.first()),
            None => (vec![self.op.clone()], Arc::clone(&self.templates)),
        };
        // Cold (and a pool's `seq`, which starts on a stream element): one stream made for
        // all, in one queue that every thread takes from, as the workers of a task pool
        // take the elements of one stream.
        let mut queue: Option<Receiver<Data>> = None;
        if self.state == InputState::Cold || self.replica.is_some() {
            queue = Some(self.queued_stream(&templates, len * (self.siblings + 1))?);
        }
        // Which block of what every thread runs is timed.
        let timed_block = self.replica.as_ref().map_or(0, |r| r.index);
        let name = self.kernel.name().to_string();
        let ran = match &self.replica {
            Some(chain) => format!("a block of seq({})", chain.names().join(", ")),
            None => format!("kernel `{name}`"),
        };
        // A warm per-key reduction's siblings gather and reduce keys of their own from the
        // same map outputs, as the other threads of a job do.
        let mut gathers: Vec<Option<gather::Gather>> = (0..self.siblings)
            .map(|i| {
                self.gather
                    .as_ref()
                    .map(|g| g.sibling(i + 1, self.siblings + 1))
            })
            .collect();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.siblings)
                .map(|i| {
                    let (templates, chain, stop, started) =
                        (Arc::clone(&templates), &chain, &stop, &started);
                    let first = queue.clone();
                    let gather = gathers[i].take();
                    on_core(scope, LOAD_THREAD_NAME, i + 1, move || match gather {
                        Some(g) => gathering_sibling(g, len, stop, started),
                        None => {
                            let run = (chain.as_slice(), timed_block);
                            sibling(&templates, run, len, i, first, stop, started)
                        }
                    })
                })
                .collect();
            let (stop, started) = (&stop, &started);
            let mine = queue.take();
            let timed = on_core(scope, TIMED_THREAD_NAME, 0, move || {
                started.wait();
                let timed = match mine {
                    Some(queue) => self.time_queued(&queue),
                    None => self.one_alone().map(|ns| (ns, Tally::default())),
                };
                stop.store(true, Ordering::Release);
                timed
            })
            .join();
            // However the timed thread ended, the siblings stop.
            stop.store(true, Ordering::Release);
            let mut theirs = Tally::default();
            for w in workers {
                match w.join() {
                    Ok(t) => theirs = theirs.and(t),
                    Err(_) => {
                        return Err(Error::Run(format!("{ran} panicked on a sibling thread")))
                    }
                }
            }
            let (ns, mine) = timed
                .map_err(|_| Error::Run(format!("the timed thread of `{name}`'s test failed")))??;
            // The timed thread took none of the shared stream (it timed one of its own
            // afterwards): its figure alone, as the siblings did not run next to it.
            if mine.calls == 0 {
                return Ok(ns);
            }
            Ok(mine.and(theirs).per_call(clock_read_ns()))
        })
    }
}

/// The error of a unit test whose block `kernel`'s input cannot be copied.
fn not_copyable(kernel: &str) -> Error {
    KernelError::BadInput {
        kernel: kernel.to_string(),
        message: "its input cannot be copied for repetitions".into(),
    }
    .into()
}

/// The distinct inputs of `kernel` at size `x` that the repetitions of its unit test copy
/// their inputs from, as many as [`input_pool_size`] within half of `memory_limit`.
fn templates(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    memory_limit: u128,
) -> Result<Arc<Vec<Data>>, Error> {
    let bytes = kernel.input_bytes(x, inputs);
    let pool = input_pool_size(x).min((memory_limit / 2 / bytes.max(1)).max(1) as usize);
    Ok(Arc::new(
        (0..pool)
            .map(|v| kernel.input(x, &inputs.variant(v as u64)))
            .collect::<Result<Vec<_>, _>>()?,
    ))
}

/// Name of the thread a loaded or staged unit test times its block on.
pub const TIMED_THREAD_NAME: &str = "perfcompose-timed";
/// Name of the other threads of a loaded or staged unit test (siblings, other stages).
pub const LOAD_THREAD_NAME: &str = "perfcompose-load";

/// Start `f` on a thread named `name`, pinned to the `core`-th core (modulo the cores,
/// where the OS allows pinning): the threads of a loaded or staged unit test each get a
/// core of their own, as the workers of a pinned program do (`Config { pin: true }`, the
/// default of `validate` and `bench --term`). Unpinned, the scheduler at times kept two
/// busy threads on one core of the two (examples/placement.rs).
fn on_core<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    core: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, move || {
            if let Some(ids) = core_affinity::get_core_ids().filter(|c| !c.is_empty()) {
                let _ = core_affinity::set_for_current(ids[core % ids.len()]);
            }
            f()
        })
        .expect("the OS refused to start a unit test's thread")
}

/// Calls timed on one thread of a loaded unit test: their summed time and their number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    ns: u128,
    calls: u64,
}

impl Tally {
    /// One more call that took `ns`.
    fn add(&mut self, ns: u128) {
        self.ns += ns;
        self.calls += 1;
    }

    /// The calls of both.
    fn and(self, other: Tally) -> Tally {
        Tally {
            ns: self.ns + other.ns,
            calls: self.calls + other.calls,
        }
    }

    /// ns per call, less what reading the clock costs (`clock`); 0 without calls.
    fn per_call(self, clock: f64) -> f64 {
        if self.calls == 0 {
            return 0.0;
        }
        (self.ns as f64 / self.calls as f64 - clock).max(0.0)
    }
}

/// A sibling of a loaded unit test ([`Conditions::siblings`]): run `chain` (the block, or
/// the blocks of a pool's `seq` one after the other) on what it takes from `first` (the
/// queue of a cold stream that the timed thread takes from too), then on fresh copies of
/// the inputs (streams of `len`, starting at another input than the timed thread) until
/// `stop`; it signals `started` once it is ready. The calls of block `timed` of `chain`
/// on the shared stream are timed, each on its own, and returned (those on its own
/// streams, which the timed thread does not share, are not). A panicking block ends the
/// sibling (the caller reports it).
fn sibling(
    templates: &[Data],
    (chain, timed): (&[crate::kernel::Op], usize),
    len: usize,
    index: usize,
    first: Option<Receiver<Data>>,
    stop: &AtomicBool,
    started: &Barrier,
) -> Tally {
    let make = |offset: usize| copies(templates, offset, len.max(1)).unwrap_or_default();
    let mut offset = 7 * (index + 1);
    let mut stream = if first.is_some() {
        Vec::new()
    } else {
        make(offset)
    };
    started.wait();
    let run = |input: Data| chain.iter().fold(input, |d, op| unit_call(op, d));
    let mut tally = Tally::default();
    if let Some(queue) = first {
        while let Ok(input) = queue.try_recv() {
            if stop.load(Ordering::Acquire) {
                return tally;
            }
            let mut d = input;
            for (j, op) in chain.iter().enumerate() {
                if j == timed {
                    let t = Instant::now();
                    d = unit_call(op, d);
                    tally.add(t.elapsed().as_nanos());
                } else {
                    d = unit_call(op, d);
                }
            }
            drop(std::hint::black_box(d));
        }
    }
    while !stop.load(Ordering::Acquire) {
        for input in std::mem::take(&mut stream) {
            if stop.load(Ordering::Acquire) {
                return tally;
            }
            drop(std::hint::black_box(run(input)));
        }
        offset += len;
        stream = make(offset);
    }
    tally
}

/// A sibling of a warm per-key reduction's test: gathers and reduces `len` keys at a time
/// from its own map outputs until `stop`, as another thread of the job does (not timed).
fn gathering_sibling(
    mut g: gather::Gather,
    len: usize,
    stop: &AtomicBool,
    started: &Barrier,
) -> Tally {
    started.wait();
    // At least one pass (`len` keys), then until the timed thread is done. A panic here
    // was already met by the probe on the timed thread.
    while g.time(len, "sibling").is_ok() && !stop.load(Ordering::Acquire) {}
    Tally::default()
}

/// `len` fresh copies of the distinct inputs, cycled from the `offset`-th: a stream made the
/// way a program's is (`plan::stream_inputs`). `None` if an input cannot be copied.
fn copies(templates: &[Data], offset: usize, len: usize) -> Option<Vec<Data>> {
    (0..len)
        .map(|i| templates[(offset + i) % templates.len()].try_clone())
        .collect()
}

impl KernelSampler<'_> {
    /// One repetition on this thread alone (see [`Repeated::one`]).
    fn one_alone(&mut self) -> Result<f64, Error> {
        let batch = self.batch as usize;
        if let Some(g) = &mut self.gather {
            return g.time(batch, self.kernel.name());
        }
        let prepared: Vec<Data> = match self.state {
            InputState::Cold => self.fresh_stream(batch)?,
            InputState::Remote => {
                let stream = self.fresh_stream(batch)?;
                return self.time_handed_over(stream);
            }
            InputState::Warm => (0..batch)
                .map(|_| self.next_copy())
                .collect::<Result<Vec<_>, _>>()?,
        };
        self.time_calls(prepared)
    }

    /// Take elements from `queue` until it is empty (sibling threads take from it too)
    /// and time each call on its own: ns per call, less what reading the clock costs
    /// ([`clock_read_ns`]), and the calls themselves. A block of a pool's `seq` gets each
    /// element from the blocks before it and hands what it returns to the blocks after
    /// it, on this thread, untimed. Falls back to timing a stream of its own if the
    /// siblings took everything (no calls then: none ran next to the siblings).
    fn time_queued(&mut self, queue: &Receiver<Data>) -> Result<(f64, Tally), Error> {
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let mut tally = Tally::default();
        while let Ok(input) = queue.try_recv() {
            let out = match &self.replica {
                Some(chain) => chain.run_timed(self, input, &mut tally.ns),
                None => {
                    let t = Instant::now();
                    let out = self.call(input);
                    tally.ns += t.elapsed().as_nanos();
                    out
                }
            };
            outputs.push(out?);
            tally.calls += 1;
        }
        outputs.clear();
        self.outputs = outputs;
        if tally.calls == 0 {
            let alone = match &self.replica {
                Some(chain) => {
                    let own = self.queued_stream(&chain.first(), self.batch.max(1) as usize)?;
                    self.time_queued(&own)?.0
                }
                None => self.one_alone()?,
            };
            return Ok((alone, Tally::default()));
        }
        Ok((tally.per_call(clock_read_ns()), tally))
    }

    /// Time the calls on `prepared`, in order: ns per call.
    fn time_calls(&mut self, prepared: Vec<Data>) -> Result<f64, Error> {
        let batch = prepared.len().max(1);
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let t = Instant::now();
        for input in prepared {
            outputs.push(self.call(input)?);
        }
        let ns = t.elapsed().as_nanos() as f64 / batch as f64;
        outputs.clear();
        self.outputs = outputs;
        Ok(ns)
    }
}

impl KernelSampler<'_> {
    /// `len` inputs made like a program's stream (`plan::stream_inputs`: the distinct
    /// inputs cycled, each a fresh copy), and out of the caches as a program's stream is
    /// when its run starts (see `ProgramSampler::one`).
    fn fresh_stream(&self, len: usize) -> Result<Vec<Data>, Error> {
        self.cold_copies(&self.templates, len)
    }

    /// `len` fresh copies of `templates`, cycled, out of the caches.
    fn cold_copies(&self, templates: &[Data], len: usize) -> Result<Vec<Data>, Error> {
        let stream = copies(templates, 0, len).ok_or_else(|| self.not_copyable())?;
        evict_unless_cold(&stream);
        Ok(stream)
    }

    /// A cold stream of `len` copies of `templates`, made as [`KernelSampler::fresh_stream`]
    /// makes one, in a queue that holds all of it.
    fn queued_stream(&self, templates: &[Data], len: usize) -> Result<Receiver<Data>, Error> {
        let stream = self.cold_copies(templates, len)?;
        let (tx, rx) = crossbeam_channel::bounded::<Data>(stream.len().max(1));
        for d in stream {
            // Cannot fail: the queue holds the whole stream and `rx` lives.
            let _ = tx.send(d);
        }
        Ok(rx)
    }

    /// One repetition of a [`InputState::Remote`] test: a helper thread writes each
    /// element of `stream` and queues it; this thread takes what is waiting (at most a
    /// quarter of its level-2 cache at a time), times the calls on it, and goes on. Time
    /// spent waiting for the helper is not counted: the cost of the hand-off itself is
    /// the pattern's overhead, calibrated on its own.
    fn time_handed_over(&mut self, stream: Vec<Data>) -> Result<f64, Error> {
        let n = stream.len().max(1);
        let bytes = stream.first().map_or(1, Data::bytes).max(1);
        let group = (cache_bytes(2).unwrap_or(1 << 20) / 4 / bytes).max(1) as usize;
        let (tx, rx) = crossbeam_channel::bounded::<Data>(crate::ctx::DEFAULT_CAPACITY);
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let timed = std::thread::scope(|scope| {
            scope.spawn(move || {
                for mut d in stream {
                    d.touch();
                    if tx.send(d).is_err() {
                        break;
                    }
                }
            });
            let mut total = Duration::ZERO;
            let mut taken = Vec::with_capacity(group);
            while let Ok(first) = rx.recv() {
                taken.push(first);
                while taken.len() < group {
                    match rx.try_recv() {
                        Ok(d) => taken.push(d),
                        Err(_) => break,
                    }
                }
                let t = Instant::now();
                for input in taken.drain(..) {
                    outputs.push(self.call(input)?);
                }
                total += t.elapsed();
            }
            Ok::<Duration, Error>(total)
        });
        outputs.clear();
        self.outputs = outputs;
        Ok(timed?.as_nanos() as f64 / n as f64)
    }
}

/// Inputs in one repetition of a cold unit test: as many as a whole-program repetition
/// streams at that speed (at least [`MIN_RUN`] of calls, at most [`MAX_ELEMENTS`]),
/// within the memory limit; `probe` is the time of one call, seconds.
pub fn stream_len(probe: f64, input_bytes: u128, memory_limit: u128) -> usize {
    let wanted = (MIN_RUN.as_secs_f64() / probe.max(1e-9)).ceil();
    let by_memory = (memory_limit / input_bytes.max(1)).max(1);
    (wanted.clamp(1.0, MAX_ELEMENTS as f64) as u128).min(by_memory) as usize
}

/// Evict the caches when `stream` is too small to push itself out of them: a stream
/// smaller than twice the last-level cache would still be in it when the run starts, and
/// stream elements (of programs and of cold unit tests alike) are to be cold.
fn evict_unless_cold(stream: &[Data]) {
    let total: u128 = stream.iter().map(|d| d.bytes() as u128).sum();
    if total < 2 * last_level_cache_bytes() as u128 {
        evict_caches();
    }
}

/// What one reading of the clock adds to a call timed on its own (two `Instant::now()`
/// around it): the median of 10,001 back-to-back readings, measured once (23 ns on the
/// Intel guest, 1.5–2% of an `inc` of 1,024 ints).
pub fn clock_read_ns() -> f64 {
    static CLOCK: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *CLOCK.get_or_init(|| {
        let mut d: Vec<f64> = (0..10_001)
            .map(|_| {
                let a = Instant::now();
                let b = Instant::now();
                (b - a).as_nanos() as f64
            })
            .collect();
        d.sort_by(f64::total_cmp);
        d[d.len() / 2]
    })
}

/// Write (and read back) a buffer twice the size of the last-level cache, so that data
/// touched before the call is in memory, not in a cache, afterwards.
///
/// The buffer is kept from call to call: a fresh one of 64 MiB (on a 32 MiB L3) is a
/// fresh mapping whose 16,384 pages fault and are zeroed on every call, several times
/// the cost of writing it. A call that finds it in use by another thread writes one of
/// its own.
pub fn evict_caches() {
    static KEPT: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    let len = 2 * last_level_cache_bytes() as usize;
    let sweep = |buf: &mut Vec<u8>| {
        buf.resize(len, 0);
        for (i, b) in buf.iter_mut().enumerate().step_by(64) {
            *b = i as u8;
        }
        std::hint::black_box(buf.iter().step_by(64).fold(0u8, |a, &b| a ^ b));
    };
    match KEPT.try_lock() {
        Ok(mut buf) => sweep(&mut buf),
        Err(_) => sweep(&mut Vec::new()),
    }
}

/// Keep memory freed by this process for its next allocations (glibc: no trimming of
/// the heap, no separate mapping below 32 MiB) instead of handing it back to the OS.
///
/// A cold unit test or a program's repetition copies a stream of fresh inputs (up to
/// 4,096 of them, tens of MiB) before its clock starts and frees it after; with glibc's
/// defaults each repetition's copies fault in and zero every page again, which made up
/// most of `validate`'s wall time on short kernels (`seq(inc, nop)`: a third of its
/// cycles in the kernel's page-fault and unmapping paths; `perf record`, 2026-11-29).
/// Timed calls run on inputs already written either way. Call once, before any
/// measurement; elsewhere than glibc it does nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes the allocator's tunables; called before the
    // measurement threads start.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

/// Time a kernel over a sweep of sizes, inputs cold.
pub fn bench_kernel(
    kernel: &dyn Kernel,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    bench_kernel_in(
        kernel,
        sizes,
        inputs,
        spec,
        memory_limit,
        InputState::Cold,
        progress,
    )
}

/// Time a kernel over a sweep of sizes under `how` (an [`InputState`] or [`Conditions`]).
pub fn bench_kernel_in(
    kernel: &dyn Kernel,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: impl Into<Conditions>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let how = how.into();
    sweep(kernel.name(), sizes, progress, |x| {
        time_kernel_in(kernel, x, inputs, spec, memory_limit, how.clone())
    })
}

/// Time the block `name` of `registry` over a sweep of sizes under `how`, a pipeline
/// stage's conditions included ([`KernelSampler::for_block`]).
#[allow(clippy::too_many_arguments)]
pub fn bench_block(
    registry: &Registry,
    name: &str,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: Conditions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let kernel = registry.get(name)?;
    sweep(kernel.name(), sizes, progress, |x| {
        let mut s =
            KernelSampler::for_block(registry, name, x, inputs, spec, memory_limit, how.clone())?;
        sample_point(spec, &mut s)
    })
}

/// One point per size, with progress.
fn sweep(
    label: &str,
    sizes: &[usize],
    progress: &mut dyn FnMut(Progress<'_>),
    mut point: impl FnMut(usize) -> Result<PointStats, Error>,
) -> Result<Series, Error> {
    let mut points = Vec::with_capacity(sizes.len());
    for (i, &x) in sizes.iter().enumerate() {
        progress(Progress {
            label,
            x: x as u64,
            done: i,
            total: sizes.len(),
        });
        points.push(point(x)?);
    }
    Ok(Series::kernel(label, points))
}

/// How long one repetition of a whole-program measurement should at least stream, so that
/// filling and draining the pipeline is a small part of it.
pub const MIN_RUN: Duration = Duration::from_millis(20);
/// Bounds on the stream length of one repetition.
pub const MIN_ELEMENTS: usize = 16;
pub const MAX_ELEMENTS: usize = 4096;
/// Elements a repetition streams at least per core, beyond the first, that a design keeps
/// busy ([`tail_floor`]).
pub const TAIL_ELEMENTS: usize = 64;

/// The shortest stream of a design working on `in_flight` elements at once
/// ([`crate::Pattern::in_flight`]) on `cores` cores, so that the end of the stream
/// weighs little: the last elements leave up to `min(in_flight, cores) − 1` cores idle for
/// part of an element each (a pool's workers finish unevenly, a pipeline drains), about
/// `(k − 1) / 2n` of a stream of `n` elements on `k` busy cores, and the fill of a
/// pipeline costs as much at the start. `tpool(2, qsort)` at x = 32,768 streamed 16
/// elements (20 ms of calls), and its workers sat idle for 2.6–6.6% of the run; with 64
/// elements 0.3–2.1% (`COUNT=16`/`COUNT=64 PIN=1 examples/pool_calls 32768 2 7`).
pub fn tail_floor(in_flight: usize, cores: usize) -> usize {
    TAIL_ELEMENTS * (in_flight.min(cores).max(1) - 1)
}

/// Time a whole program at one size: average time per element over a stream.
pub fn time_program(
    built: &Built,
    registry: &Registry,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
) -> Result<PointStats, Error> {
    sample_point(
        spec,
        &mut ProgramSampler::new(built, registry, x, inputs, memory_limit)?,
    )
}

/// A whole-program measurement at one size, ready to repeat: the stream length sized from
/// a probe so that one repetition streams for at least [`MIN_RUN`].
pub struct ProgramSampler<'a> {
    built: &'a Built,
    registry: &'a Registry,
    inputs: &'a Inputs,
    x: usize,
    count: usize,
    memory_limit: u128,
}

impl<'a> ProgramSampler<'a> {
    pub fn new(
        built: &'a Built,
        registry: &'a Registry,
        x: usize,
        inputs: &'a Inputs,
        memory_limit: u128,
    ) -> Result<ProgramSampler<'a>, Error> {
        let threads = built.program.pattern().threads();
        let tail = tail_floor(built.program.pattern().in_flight(), available_cores());
        let mut s = ProgramSampler {
            built,
            registry,
            inputs,
            x,
            count: MIN_ELEMENTS.max(4 * threads),
            memory_limit,
        };
        // Probe with a short stream to size the stream of a repetition, then again with a
        // quarter of that: the first probe's few elements carry the whole run's fixed
        // costs (waking the workers, the end of the stream), which made the streams of
        // fast designs a quarter to half as long as meant (1,000–3,000 `tpool(2, inc)`
        // elements at x = 1,024 instead of 4,096), and those costs then weighed more
        // on every element of the repetitions. A design with several elements in flight
        // streams at least its tail floor (see `tail_floor`).
        let per_input = registry
            .get(&built.source_kernel)?
            .input_bytes(x, inputs)
            .max(1);
        let by_memory = (memory_limit / per_input).max(1) as usize;
        let shortest = s.count;
        let wanted =
            |per_element: f64| (MIN_RUN.as_nanos() as f64 / per_element.max(1.0)).ceil() as usize;
        let first = wanted(s.one()?);
        // (`min` then `max`, not `clamp`: a design of more than 1,024 threads has a
        // shortest stream above the cap.)
        s.count = (first / 4)
            .min(MAX_ELEMENTS / 4)
            .max(shortest)
            .min(by_memory);
        let second = wanted(s.one()?);
        s.count = second
            .min(MAX_ELEMENTS)
            .max(shortest)
            .max(tail)
            .min(by_memory);
        Ok(s)
    }
}

impl Repeated for ProgramSampler<'_> {
    fn x(&self) -> usize {
        self.x
    }

    fn batch(&self) -> u64 {
        self.count as u64
    }

    fn one(&mut self) -> Result<f64, Error> {
        let stream = stream_inputs(
            self.registry,
            &self.built.source_kernel,
            self.x,
            self.count,
            self.inputs,
            self.memory_limit,
        )?;
        evict_unless_cold(&stream);
        let n = stream.len();
        let m = self.built.program.run_stream(stream)?;
        Ok(m.elapsed.as_nanos() as f64 / n as f64)
    }
}

/// Repeat one measurement according to `spec` (see [`sample`]) and summarise it.
pub fn sample_point(spec: &Sampling, item: &mut dyn Repeated) -> Result<PointStats, Error> {
    for _ in 0..spec.warmup {
        item.one()?;
    }
    let warm = Sampling {
        warmup: 0,
        ..spec.clone()
    };
    let (values, converged) = sample(&warm, || item.one())?;
    let mut p = point(item.x(), values, item.batch(), converged);
    p.phases = quantiles(&item.take_phases(), PHASE_QUANTILES);
    Ok(p)
}

/// Measure a plan over a sweep of sizes (whole-program measurement).
#[allow(clippy::too_many_arguments)]
pub fn bench_plan(
    plan: &Plan,
    registry: &Registry,
    config: Config,
    sizes: &[usize],
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Series, Error> {
    let built = plan.build(registry, config)?;
    let name = plan.to_string();
    let mut points = Vec::with_capacity(sizes.len());
    for (i, &x) in sizes.iter().enumerate() {
        progress(Progress {
            label: &name,
            x: x as u64,
            done: i,
            total: sizes.len(),
        });
        points.push(time_program(
            &built,
            registry,
            x,
            inputs,
            spec,
            memory_limit,
        )?);
    }
    Ok(Series::program(name, points))
}

/// The series as measurements: parameter `x`, metric `time` (ns), one callpath per series
/// (the kernel name or the term), one value per repetition.
pub fn to_experiment(series: &[Series]) -> Experiment {
    let mut e = Experiment::new(vec![PARAMETER.to_string()]);
    for s in series {
        let key = SeriesKey {
            callpath: s.name.clone(),
            metric: METRIC.to_string(),
        };
        for p in &s.points {
            e.push(key.clone(), vec![p.x as f64], p.values.clone());
        }
    }
    e
}

/// Series grouped by their sweep: Extra-P's text format needs every series of a file at
/// the same points, so series measured over different sizes go to different files. Each
/// group is named after its first series.
pub fn group_by_sweep(series: &[Series]) -> Vec<(String, Vec<Series>)> {
    let mut groups: Vec<(Vec<u64>, String, Vec<Series>)> = Vec::new();
    for s in series {
        let mut xs: Vec<u64> = s.points.iter().map(|p| p.x).collect();
        xs.sort_unstable();
        match groups.iter_mut().find(|g| g.0 == xs) {
            Some(g) => g.2.push(s.clone()),
            None => groups.push((xs, s.name.clone(), vec![s.clone()])),
        }
    }
    groups.into_iter().map(|(_, n, s)| (n, s)).collect()
}

/// Extra-P's text format for an experiment (the writer of `perfcompose_core::measure`;
/// every series must share the same points, see [`group_by_sweep`]).
pub fn extrap_text(e: &Experiment) -> Result<String, Error> {
    perfcompose_core::measure::text::write(e).map_err(|w| Error::Io(w.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_are_evicted_from_several_threads_at_once() {
        // One thread gets the kept buffer, the others write their own; none waits.
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..2 {
                        evict_caches();
                    }
                });
            }
        });
        evict_caches();
    }

    #[test]
    fn cold_streams_last_a_program_repetition_within_the_memory_limit() {
        // 1 µs per call: 20 ms of calls, at most MAX_ELEMENTS.
        assert_eq!(stream_len(1e-6, 4096, u128::MAX), 20_000.min(MAX_ELEMENTS));
        assert_eq!(stream_len(1e-4, 4096, u128::MAX), 200);
        // A call longer than a repetition: one input.
        assert_eq!(stream_len(0.5, 4096, u128::MAX), 1);
        // Memory-bound: 10 inputs of 1000 bytes fit in 10,000.
        assert_eq!(stream_len(1e-6, 1000, 10_000), 10);
        assert_eq!(stream_len(1e-6, 1 << 40, 1000), 1);
    }

    #[test]
    fn handed_over_inputs_are_each_called_once_on_the_timing_thread() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::{Arc, Mutex};
        let calls = Arc::new(AtomicU64::new(0));
        let threads = Arc::new(Mutex::new(std::collections::HashSet::new()));
        let mut reg = crate::kernel::Registry::empty();
        let (c, t) = (Arc::clone(&calls), Arc::clone(&threads));
        reg.register_block("count", "counts its calls", move |d| {
            c.fetch_add(1, Ordering::Relaxed);
            t.lock().unwrap().insert(std::thread::current().id());
            d
        });
        let kernel = reg.get("count").unwrap().as_ref();
        let spec = Sampling::quick();
        let mut s = KernelSampler::new(
            kernel,
            1024,
            &Inputs::default(),
            &spec,
            1 << 30,
            InputState::Remote,
        )
        .unwrap();
        // Sizing the batch called the kernel here: only the repetition's calls count.
        let before = calls.load(Ordering::Relaxed);
        threads.lock().unwrap().clear();
        let ns = s.one().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        assert_eq!(calls.load(Ordering::Relaxed) - before, s.batch());
        // The helper thread only writes the inputs; the kernel runs on this thread.
        let seen = threads.lock().unwrap();
        assert_eq!(*seen, [std::thread::current().id()].into_iter().collect());
    }

    #[test]
    fn loaded_unit_tests_run_the_block_on_siblings_while_one_thread_is_timed() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Mutex;
        use std::thread::ThreadId;
        let timed = || std::thread::current().name() == Some(TIMED_THREAD_NAME);
        // (thread, timed?) of every call.
        let log: Arc<Mutex<Vec<(ThreadId, bool)>>> = Arc::default();
        let armed = Arc::new(AtomicBool::new(false));
        let mut reg = crate::kernel::Registry::empty();
        let (l, a) = (Arc::clone(&log), Arc::clone(&armed));
        reg.register_block("log", "logs its thread", move |d| {
            l.lock()
                .unwrap()
                .push((std::thread::current().id(), timed()));
            // Once armed, the timed calls wait (10 s at most) until both siblings have
            // called the block: they run while the timed thread is timed.
            let t = Instant::now();
            while timed() && a.load(Ordering::Acquire) && t.elapsed() < Duration::from_secs(10) {
                let others: std::collections::HashSet<ThreadId> = l
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|c| !c.1)
                    .map(|c| c.0)
                    .collect();
                if others.len() == 2 {
                    a.store(false, Ordering::Release);
                    break;
                }
                std::thread::yield_now();
            }
            d
        });
        let kernel = reg.get("log").unwrap().as_ref();
        let spec = Sampling::quick();
        let how = Conditions {
            input: InputState::Cold,
            siblings: 2,
            ..Default::default()
        };
        let mut s =
            KernelSampler::new(kernel, 1024, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        log.lock().unwrap().clear();
        armed.store(true, Ordering::Release);
        let ns = s.one().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        let log = log.lock().unwrap();
        // Every timed call ran on one thread (not this one), the siblings' on two others.
        let here = std::thread::current().id();
        let on = |is_timed: bool| -> std::collections::HashSet<ThreadId> {
            log.iter()
                .filter(|c| c.1 == is_timed)
                .map(|c| c.0)
                .collect()
        };
        // The three threads take from one stream of 3 batches: the timed one took some
        // of it (all of it if it outran both siblings).
        let timed_calls = log.iter().filter(|c| c.1).count() as u64;
        assert!(
            (1..=3 * s.batch()).contains(&timed_calls),
            "{timed_calls} of {}",
            3 * s.batch()
        );
        assert_eq!(on(true).len(), 1);
        assert_eq!(on(false).len(), 2);
        assert!(!on(true).contains(&here) && !on(false).contains(&here));
        assert!(on(true).is_disjoint(&on(false)));
    }

    #[test]
    fn cold_loaded_unit_tests_pool_the_calls_of_every_thread_on_the_shared_stream() {
        use std::sync::atomic::{AtomicBool, Ordering};
        // A sibling's call takes at least 10 ms; the timed thread's first call waits until
        // a sibling has started one (so at least one ran on the shared stream), its others
        // return at once.
        let started = Arc::new(AtomicBool::new(false));
        let mut reg = crate::kernel::Registry::empty();
        let s0 = Arc::clone(&started);
        reg.register_block("skewed", "slow on the siblings", move |d| {
            let t = Instant::now();
            match std::thread::current().name() {
                Some(LOAD_THREAD_NAME) => {
                    s0.store(true, Ordering::Release);
                    while t.elapsed() < Duration::from_millis(10) {
                        std::hint::spin_loop();
                    }
                }
                Some(TIMED_THREAD_NAME) => {
                    while !s0.load(Ordering::Acquire) && t.elapsed() < Duration::from_secs(10) {
                        std::thread::yield_now();
                    }
                }
                _ => {}
            }
            d
        });
        reg.register_block("pass", "passes its element on", |d| d);
        let alone = Conditions {
            input: InputState::Cold,
            siblings: 1,
            ..Default::default()
        };
        let in_seq = Conditions {
            siblings: 1,
            replica: Some(Replica {
                index: 0,
                kernels: vec!["skewed".into(), "pass".into()],
            }),
            ..Default::default()
        };
        for how in [alone, in_seq] {
            started.store(false, Ordering::Release);
            // 64 ints per element within 64 KiB: streams of at most 128 elements a thread.
            let spec = Sampling::quick();
            let mut s = KernelSampler::for_block(
                &reg,
                "skewed",
                64,
                &Inputs::default(),
                &spec,
                64 << 10,
                how.clone(),
            )
            .unwrap();
            let ns = s.one().unwrap();
            // One call of 10 ms among at most two streams' worth: timed alone, the
            // thread's calls would be about as long as its wait for the sibling.
            let floor = 1e7 / (2 * s.batch()) as f64 - clock_read_ns();
            assert!(s.batch() <= 128, "{}", s.batch());
            assert!(ns >= floor, "{how:?}: {ns} ns per call, below {floor}");
        }
    }

    #[test]
    fn the_tail_floor_counts_busy_cores_beyond_the_first() {
        assert_eq!(tail_floor(1, 2), 0);
        assert_eq!(tail_floor(2, 2), TAIL_ELEMENTS);
        // Elements beyond the cores wait in the queue: no more cores idle at the end.
        assert_eq!(tail_floor(24, 2), TAIL_ELEMENTS);
        assert_eq!(tail_floor(4, 8), 3 * TAIL_ELEMENTS);
        assert_eq!(tail_floor(0, 0), 0);
    }

    #[test]
    fn program_streams_of_slow_parallel_designs_are_at_least_the_tail_floor() {
        use crate::plan::Plan;
        let mut reg = crate::kernel::Registry::builtin();
        // 2 ms per element: 20 ms of a two-worker pool is 20 elements.
        reg.register_block("slow", "sleeps 2 ms", |d| {
            std::thread::sleep(Duration::from_millis(2));
            d
        });
        let k = |n: &str| Plan::Kernel(n.into());
        let inputs = Inputs::default();
        let count = |plan: Plan, memory: u128| {
            let built = plan.build(&reg, crate::Config::default()).unwrap();
            ProgramSampler::new(&built, &reg, 64, &inputs, memory)
                .unwrap()
                .count
        };
        let cores = available_cores();
        let pool = Plan::TPool(2, Box::new(Plan::Seq(vec![k("inc"), k("slow")])));
        assert_eq!(
            count(pool.clone(), u128::MAX),
            MIN_ELEMENTS.max(tail_floor(2, cores))
        );
        // One element at a time: no floor beyond the shortest stream.
        assert_eq!(
            count(Plan::Seq(vec![k("inc"), k("slow")]), u128::MAX),
            MIN_ELEMENTS
        );
        // The memory limit still caps the stream (64 ints of 4 bytes each, 20 inputs).
        assert_eq!(count(pool, 20 * 256), 20);
    }

    #[test]
    fn a_block_that_panics_on_a_sibling_is_an_error_not_a_hang() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let mut reg = crate::kernel::Registry::empty();
        // Once armed, the timed calls wait (10 s at most) for a sibling to have panicked,
        // so that the siblings are not stopped before their first call.
        let (armed, fired) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (a, f) = (Arc::clone(&armed), Arc::clone(&fired));
        reg.register_block("boom", "panics on the siblings' threads", move |d| {
            if std::thread::current().name() == Some(LOAD_THREAD_NAME) {
                f.store(true, Ordering::Release);
                panic!("sibling boom");
            }
            let t = Instant::now();
            while a.load(Ordering::Acquire)
                && !f.load(Ordering::Acquire)
                && t.elapsed() < Duration::from_secs(10)
            {
                std::thread::yield_now();
            }
            d
        });
        let kernel = reg.get("boom").unwrap().as_ref();
        let how = Conditions {
            input: InputState::Warm,
            siblings: 1,
            ..Default::default()
        };
        let spec = Sampling::quick();
        let mut s =
            KernelSampler::new(kernel, 256, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        armed.store(true, Ordering::Release);
        let err = s.one().unwrap_err().to_string();
        assert!(err.contains("sibling"), "{err}");
    }
    #[test]
    fn a_warm_per_key_reduction_is_timed_on_each_key_gathered_from_x_map_outputs() {
        use std::sync::{Arc, Mutex};
        // A per-key reduction that logs the key and how many values it got.
        struct Logged(Arc<Mutex<Vec<(usize, usize)>>>);
        impl Kernel for Logged {
            fn name(&self) -> &str {
                "logged_per_key"
            }
            fn summary(&self) -> &str {
                "sums one key's values, logging each call"
            }
            fn op(&self) -> crate::kernel::Op {
                let log = Arc::clone(&self.0);
                crate::kernel::Op::ReducePerKey(Arc::new(move |key, values| {
                    log.lock().unwrap().push((key, values.len()));
                    values.iter().sum()
                }))
            }
            fn size_meaning(&self) -> &str {
                "values of the key"
            }
            fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
                crate::kernel::ReducePerKey.input(x, inputs)
            }
            fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
                8 * x as u128
            }
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let kernel = Logged(Arc::clone(&log));
        let spec = Sampling::quick();
        let x = 6;
        let mut warm = KernelSampler::new(
            &kernel,
            x,
            &Inputs::default(),
            &spec,
            1 << 30,
            InputState::Warm,
        )
        .unwrap();
        log.lock().unwrap().clear();
        let ns = warm.one().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        let calls = std::mem::take(&mut *log.lock().unwrap());
        // One call per key, keys in turn (cycling over the map outputs' keys), each on the
        // x values gathered from the x map outputs.
        assert_eq!(calls.len() as u64, warm.batch());
        assert!(calls.len() > 1, "a batch of calls");
        for w in calls.windows(2) {
            assert_eq!(w[1].0, (w[0].0 + 1) % gather::GATHER_KEYS, "{w:?}");
        }
        assert!(calls.iter().all(|&(_, n)| n == x), "{calls:?}");
        // With a sibling (as `_par2`), the sibling gathers keys too, as a job's other
        // thread does, at least one batch of them: not one call per template as key 0.
        let mut loaded = KernelSampler::new(
            &kernel,
            x,
            &Inputs::default(),
            &spec,
            1 << 30,
            Conditions {
                input: InputState::Warm,
                siblings: 1,
                ..Default::default()
            },
        )
        .unwrap();
        log.lock().unwrap().clear();
        let ns = loaded.one().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        let calls = std::mem::take(&mut *log.lock().unwrap());
        let batch = loaded.batch() as usize;
        assert!(
            calls.len() >= 2 * batch,
            "{} calls, batch {batch}",
            calls.len()
        );
        assert!(calls.iter().all(|&(_, n)| n == x));
        let key_0 = calls.iter().filter(|&&(k, _)| k == 0).count();
        let passes = calls.len() / gather::GATHER_KEYS + 2;
        assert!(key_0 <= passes, "{key_0} calls on key 0 of {}", calls.len());
        // Cold, the test calls it on a stream of vectors of x values of its own, as key 0.
        let mut cold = KernelSampler::new(
            &kernel,
            x,
            &Inputs::default(),
            &spec,
            1 << 30,
            InputState::Cold,
        )
        .unwrap();
        log.lock().unwrap().clear();
        cold.one().unwrap();
        let calls = std::mem::take(&mut *log.lock().unwrap());
        assert_eq!(calls.len() as u64, cold.batch());
        assert!(calls.iter().all(|&c| c == (0, x)), "{:?}", &calls[..3]);
    }
}
