//! End-to-end validation of composed predictions on this machine (seed 000 §4).
//!
//! For every configuration of a suite: measure the building blocks (unit performance
//! tests), fit their models, compose the term's model from them ("modular"), run the
//! whole design on the runtime and fit its measurements ("monolithic"), and compare:
//!
//! - `coefficient_error`: relative difference of the *leading terms* of the two models,
//!   evaluated at the largest measured `x` (with equal leading monomials this is exactly
//!   the relative error of the leading coefficients, the seed's Table 2 metric; when the
//!   fitted monomials differ it still compares the dominant behaviour where it was
//!   measured);
//! - `time_error`: the largest relative error of the modular model against the measured
//!   time over the measured points (the repetitions' minimum by default, `Options::measure`).
//!
//! Configurations that need more threads than the machine has are run anyway; the
//! prediction caps thread counts at the cores (`ComposeOptions::cores`) and the row says
//! so. With an overhead calibration ([`crate::overhead`]) the modular model includes the
//! pattern's own per-element cost.

use std::collections::BTreeMap;

use perfcompose_core::components::{Component, ComponentSource, Components};
use perfcompose_core::compose::predict::{Overhead, PhaseLoss};
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::diag::Diagnostic;
use perfcompose_core::fit::{modeler, FitOptions, Measure};
use perfcompose_core::measure::Point;
use perfcompose_core::model::{format_significant, Expr};
use perfcompose_core::term::{parse_term, Node, NodeKind, Term};
use serde::Serialize;

use crate::bench::{self, Progress, Sampling, Series};
use crate::ctx::Config;
use crate::data::ImageSize;
use crate::error::Error;
use crate::kernel::{Inputs, Kernel, Registry};
use crate::overhead::Calibration;
use crate::plan::Plan;

/// Acceptance bound on the relative error for seq/pipe/tpool configurations that fit in
/// the machine's cores (the issue's target).
pub const TARGET_PATTERNS: f64 = 0.10;
/// Acceptance bound for MapReduce configurations.
pub const TARGET_MAPREDUCE: f64 = 0.15;
/// Above this coefficient of variation a point counts as noisy in the reasons of a miss.
pub const NOISY_CV: f64 = 0.05;
/// Above this relative miss of a block model at its own points, the reasons of a miss
/// name it (the fit alone costs the prediction that much).
pub const FIT_FLOOR_NOTE: f64 = 0.03;

/// A term as the runtime's plan; errors point into the term's source.
pub fn plan_from_term(term: &Term) -> Result<Plan, Diagnostic> {
    node_plan(term, &term.root)
}

/// Parse a term and convert it.
pub fn parse_plan(origin: &str, text: &str) -> Result<(Term, Plan), Diagnostic> {
    let term = parse_term(origin, text)?;
    let plan = plan_from_term(&term)?;
    Ok((term, plan))
}

fn located(term: &Term, node: &Node, message: String, hint: &str) -> Diagnostic {
    Diagnostic::new(&term.origin, &term.source, node.span, message).with_hint(hint)
}

fn count(
    term: &Term,
    node: &Node,
    c: &perfcompose_core::term::Count,
    what: &str,
) -> Result<usize, Diagnostic> {
    match c.as_int() {
        Some(0) => Err(Diagnostic::new(
            &term.origin,
            &term.source,
            c.span,
            format!("{what} must be at least 1 to run"),
        )),
        Some(n) => usize::try_from(n).map_err(|_| {
            Diagnostic::new(
                &term.origin,
                &term.source,
                c.span,
                format!("{what} {n} is too large"),
            )
        }),
        None => Err(located(
            term,
            node,
            format!("{what} is symbolic; the runtime needs a number"),
            "write a number, e.g. tpool(2, qsort), to run the design",
        )),
    }
}

fn node_plan(term: &Term, node: &Node) -> Result<Plan, Diagnostic> {
    Ok(match &node.kind {
        NodeKind::Component(name) => Plan::Kernel(name.clone()),
        NodeKind::Seq(parts) => Plan::Seq(
            parts
                .iter()
                .map(|p| node_plan(term, p))
                .collect::<Result<_, _>>()?,
        ),
        NodeKind::Pipe(parts) => Plan::Pipe(
            parts
                .iter()
                .map(|p| node_plan(term, p))
                .collect::<Result<_, _>>()?,
        ),
        NodeKind::Tpool { threads, body } => Plan::TPool(
            count(term, node, threads, "the thread count")?,
            Box::new(node_plan(term, body)?),
        ),
        NodeKind::MapReduce(mr) => {
            let name = |n: &Node, role: &str| match &n.kind {
                NodeKind::Component(c) => Ok(c.clone()),
                _ => Err(located(
                    term,
                    n,
                    format!("the {role} of a mapreduce must be a kernel name to run"),
                    "use a registered map/reduce kernel, e.g. mapreduce(map, reduce_per_key, ...)",
                )),
            };
            Plan::MapReduce {
                map: name(&mr.map, "map")?,
                reduce: name(&mr.reduce, "reduce")?,
                nodes: count(term, node, &mr.nodes, "the node count")?,
                threads: count(term, node, &mr.threads, "the thread count")?,
            }
        }
        NodeKind::Dc(_) => Plan::Unsupported {
            what: term.text(node.span).to_string(),
            why: "divide and conquer runs on P message-passing processes; the thread \
                  runtime has no implementation of it"
                .into(),
        },
    })
}

/// One configuration of a suite.
#[derive(Clone, Debug)]
pub struct Case {
    /// The seed table it reproduces (`Table 2, sequential`, ...).
    pub group: String,
    /// The term, as written.
    pub term: String,
    /// Sizes `x` of the whole-program sweep.
    pub sizes: Vec<usize>,
    /// Image resolution (MapReduce).
    pub image: ImageSize,
}

/// A set of configurations and how hard to measure them.
#[derive(Clone, Debug)]
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
    /// Sweep of each kernel's unit performance test (kernels not listed use their
    /// default sweep).
    pub kernel_sizes: BTreeMap<String, Vec<usize>>,
    pub sampling: Sampling,
    /// With [`Options::revisit`], a point is measured again once it stands out from its
    /// neighbouring sizes by more than this share of its row's target. Below 1 where the
    /// time allows: a row's ratio of measured to predicted carries a systematic part
    /// (`tpool(2, …)` 1.02–1.05 over most sizes in runs U and W), so a burst of 7–9% on
    /// top of it already breaks a 10% row without standing out by the target (run W:
    /// `tpool(2, qsort)` at x = 65,536 and 98,304, +6.4% and +6.0% off their neighbours,
    /// 1.12 and 1.09 of the prediction).
    pub revisit_share: f64,
    /// Length of the cores' speed-state sample at each end of a configuration within the
    /// cores ([`bench::states::validate_sample`]): [`bench::states::VALIDATE_LENGTH`],
    /// shorter in the quick suite, whose two minutes it would otherwise overrun (one
    /// second at each end of its designs took it from 107 s to 129–130 s).
    pub state_sample: std::time::Duration,
}

/// The configurations of `suite` whose term is one of `terms` (compared as parsed, so
/// spacing does not matter; a MapReduce keeps every image the suite runs it on), in the
/// suite's order: re-running the rows of a long suite that missed. A term the suite does
/// not have is an error that lists the suite's terms.
pub fn select(mut suite: Suite, terms: &[String]) -> Result<Suite, Error> {
    let canonical = |t: &str| -> Result<String, Error> {
        Ok(parse_plan("<--only>", t)
            .map_err(|d| Error::Run(d.render()))?
            .1
            .to_string())
    };
    let wanted: Vec<String> = terms
        .iter()
        .map(|t| canonical(t))
        .collect::<Result<_, _>>()?;
    let mut keys = Vec::with_capacity(suite.cases.len());
    for c in &suite.cases {
        keys.push(canonical(&c.term)?);
    }
    if let Some((t, _)) = terms.iter().zip(&wanted).find(|(_, w)| !keys.contains(w)) {
        let mut known: Vec<&str> = Vec::new();
        for c in &suite.cases {
            if !known.contains(&c.term.as_str()) {
                known.push(&c.term);
            }
        }
        return Err(Error::Run(format!(
            "suite `{}` has no configuration `{t}`; its configurations: {}",
            suite.name,
            known.join("; ")
        )));
    }
    let mut keep = keys.iter().map(|k| wanted.contains(k));
    suite.cases.retain(|_| keep.next().unwrap_or(false));
    Ok(suite)
}

/// How a configuration's measurements are named in saved files (the callpath of its
/// program, the prefix `ID->` of its blocks): the term as written, and for a MapReduce
/// the image size too (`TERM@small`), since the suites run one term on several.
pub fn case_id(c: &Case, plan: &Plan) -> String {
    if reduces_of_mapreduce(plan).is_empty() {
        c.term.clone()
    } else {
        format!("{}@{}", c.term, c.image.name())
    }
}

fn case(group: &str, term: &str, sizes: &[usize]) -> Case {
    Case {
        group: group.into(),
        term: term.into(),
        sizes: sizes.to_vec(),
        image: ImageSize::Small,
    }
}

fn mapreduce_cases(threads: &[usize], images: &[ImageSize], sizes: &[usize]) -> Vec<Case> {
    let mut out = Vec::new();
    for &image in images {
        for &n in threads {
            for (style, keys, per_key) in [
                ("reduce_pairwise", "x", "768"),
                ("reduce_per_key", "768", "x"),
            ] {
                out.push(Case {
                    group: format!("MapReduce, {} image", image.name()),
                    term: format!(
                        "mapreduce(map, {style}, nodes=1, threads={n}, keys={keys}, per_key={per_key})"
                    ),
                    sizes: sizes.to_vec(),
                    image,
                });
            }
        }
    }
    out
}

/// A CI-sized suite (under two minutes on this machine, revisits and host checks
/// included: 85–107 s on the noisy AMD guest, docs/validation.md "The quick suite back
/// under two minutes"): one or two configurations of each of the seed's tables, on a
/// short grid.
pub fn quick_suite() -> Suite {
    let grid = [2048, 4096, 8192, 16384, 32768, 65536];
    let mut cases = vec![
        case("Table 2, sequential", "seq(qsort, inc)", &grid),
        case("Table 2, sequential", "seq(inc, nop)", &grid),
        case("Table 2, task pool", "tpool(2, qsort)", &grid),
        case("Table 2, task pool", "tpool(4, qsort)", &grid),
        case("Table 2, pipeline", "pipe(qsort, inc)", &grid),
        case("Table 2, pipeline", "pipe(inc, nop)", &grid),
        case(
            "Table 4, associativity",
            "pipe(pipe(qsort, inc), nop)",
            &grid,
        ),
        case("Table 6, layering", "tpool(2, pipe(qsort, inc))", &grid),
        case("Table 7, pipe vs tpool", "tpool(2, seq(inc, qsort))", &grid),
    ];
    cases.extend(mapreduce_cases(
        &[2],
        &[ImageSize::Small],
        &[8, 16, 24, 32, 48, 64],
    ));
    Suite {
        name: "quick".into(),
        cases,
        kernel_sizes: kernel_grid(&grid, &[1, 2, 3, 4, 6, 8]),
        sampling: Sampling {
            warmup: 1,
            min_reps: 5,
            max_reps: 15,
            target: Some(0.02),
            min_sample: std::time::Duration::from_micros(500),
            max_point_time: std::time::Duration::from_millis(350),
            batch: None,
        },
        // The two-minute budget: points beyond the whole target only, and half-second
        // speed-state samples.
        revisit_share: 1.0,
        state_sample: bench::states::QUICK_LENGTH,
    }
}

/// The seed's configurations (Tables 2, 4, 6, 7 and the single-node MapReduce with both
/// reductions and all three image sizes) over the seed's range of `x`.
pub fn paper_suite() -> Suite {
    let grid: Vec<usize> = [1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 224, 256]
        .iter()
        .map(|k| k * 1024)
        .collect();
    let g = &grid[..];
    let mut cases = Vec::new();
    for t in [
        "seq(qsort, nop)",
        "seq(qsort, inc)",
        "seq(inc, qsort)",
        "seq(inc, inc)",
        "seq(inc, nop)",
    ] {
        cases.push(case("Table 2, sequential", t, g));
    }
    for n in [1, 2, 4, 8, 12, 24] {
        cases.push(case("Table 2, task pool", &format!("tpool({n}, qsort)"), g));
    }
    for t in [
        "pipe(qsort, nop)",
        "pipe(qsort, inc)",
        "pipe(inc, qsort)",
        "pipe(inc, inc)",
        "pipe(inc, nop)",
    ] {
        cases.push(case("Table 2, pipeline", t, g));
    }
    for t in [
        "pipe(pipe(qsort, inc), nop)",
        "pipe(qsort, pipe(inc, nop))",
        "pipe(pipe(qsort, nop), inc)",
        "pipe(qsort, pipe(nop, inc))",
        "pipe(pipe(inc, qsort), nop)",
        "pipe(inc, pipe(qsort, nop))",
        "pipe(pipe(inc, nop), qsort)",
        "pipe(inc, pipe(nop, qsort))",
    ] {
        cases.push(case("Table 4, associativity/commutativity", t, g));
    }
    for n in [1, 2, 4, 8] {
        cases.push(case(
            "Table 6, layering",
            &format!("pipe(tpool({n}, qsort), tpool({n}, inc))"),
            g,
        ));
        cases.push(case(
            "Table 6, layering",
            &format!("tpool({n}, pipe(qsort, inc))"),
            g,
        ));
    }
    for t in [
        "seq(qsort, nop)",
        "seq(qsort, inc)",
        "seq(inc, qsort)",
        "seq(inc, inc)",
        "seq(inc, nop)",
    ] {
        cases.push(case("Table 7, pipe vs tpool", &format!("tpool(2, {t})"), g));
    }
    cases.extend(mapreduce_cases(
        &[1, 2, 4],
        &ImageSize::ALL,
        &[4, 8, 16, 32, 48, 64],
    ));
    Suite {
        name: "paper".into(),
        cases,
        kernel_sizes: kernel_grid(g, &[1, 2, 4, 8, 16]),
        sampling: Sampling {
            warmup: 2,
            min_reps: 9,
            max_reps: 41,
            target: Some(0.01),
            min_sample: std::time::Duration::from_millis(1),
            max_point_time: std::time::Duration::from_secs(4),
            batch: None,
        },
        revisit_share: REVISIT_SHARE,
        state_sample: bench::states::VALIDATE_LENGTH,
    }
}

fn kernel_grid(ints: &[usize], images: &[usize]) -> BTreeMap<String, Vec<usize>> {
    let mut m = BTreeMap::new();
    for k in ["nop", "inc", "qsort"] {
        m.insert(k.to_string(), ints.to_vec());
    }
    m.insert("map".into(), images.to_vec());
    m.insert(
        "reduce_pairwise".into(),
        vec![256, 512, 768, 1024, 1536, 2048],
    );
    // Per key, the reduction runs on `per_key = x` values: the suites' jobs of 4 to 64
    // images. Its sweep starts below them, so the model is interpolated there, not
    // extrapolated (a sweep from 128 gave `−97.8 + 7.94·x^(1/4)·log2(x) + …`, negative at
    // x = 4: small per-key jobs predicted 1.4–1.7× too fast).
    m.insert(
        "reduce_per_key".into(),
        (2..=13).map(|e| 1usize << e).collect(),
    );
    m
}

/// The share of a row's target beyond which the paper suite and `--term` measure a
/// point again ([`Suite::revisit_share`]).
pub const REVISIT_SHARE: f64 = 0.5;

/// A one-configuration suite for `--term`.
pub fn term_suite(term: &str, sizes: Vec<usize>, image: ImageSize, sampling: Sampling) -> Suite {
    Suite {
        name: "term".into(),
        kernel_sizes: kernel_grid(&sizes, &[1, 2, 4, 8]),
        cases: vec![Case {
            group: "user design".into(),
            term: term.into(),
            sizes,
            image,
        }],
        sampling,
        revisit_share: REVISIT_SHARE,
        state_sample: bench::states::VALIDATE_LENGTH,
    }
}

/// How to validate.
#[derive(Clone, Debug)]
pub struct Options {
    /// Cores available: thread counts above it are capped in the prediction.
    pub cores: usize,
    /// Overhead calibration to add to the modular models (`None`: pure composition),
    /// reduced with [`Options::measure`] where it can be
    /// ([`Calibration::for_statistic`]).
    pub overhead: Option<Calibration>,
    pub config: Config,
    pub memory_limit: u128,
    /// Statistic of the repetitions that blocks and programs are reduced to before they
    /// are fitted and compared: the minimum by default (the seed: median). Other work on
    /// a shared machine only ever slows a repetition down, so the minimum is the estimate
    /// of the undisturbed time that least depends on how much of it there was;
    /// `docs/validation.md`, "Which statistic of the repetitions".
    pub measure: Measure,
    /// `--measure auto`: measure under [`Options::measure`] (the minimum) and, once the
    /// suite has ended, validate every row again under the mean if the cores were mostly
    /// in their slow state at the ends of the designs ([`AutoMeasure`]): on a host whose
    /// cores switch between two speeds and are rarely fast, a point's minimum lands in a
    /// fast span or not depending on where its few seconds fall, for a block and its
    /// program alike (docs/validation.md, "Which statistic on a two-state host").
    pub auto_measure: bool,
    /// Modeler name (see `perfcompose fit --list-modelers`).
    pub modeler: String,
    /// When the blocks are measured relative to the whole programs.
    pub protocol: Protocol,
    /// Time blocks as the design loads them (the default): the workers of a task pool or
    /// a MapReduce next to siblings running the same block (`_parN`), the stages of a
    /// pipeline next to the other stages (`_stageI_of_…`). `false` times every block
    /// alone, as seed 000 does (input states stay), to see what the loads change.
    pub loaded: bool,
    /// Per-configuration protocols: after a sweep, measure again (blocks and program) the
    /// program points that stand out from their neighbouring sizes by more than the
    /// suite's share of the row's target ([`Suite::revisit_share`]; [`disturbed_point`],
    /// at most [`max_revisits`] per sweep), and keep
    /// one visit ([`Keep::for_measure`]: the faster under the minimum, else the one
    /// closer to what the neighbours say); then, over the visits kept, each
    /// block's own sweep the same way (a block point measured again with its program by
    /// default, [`Options::block_revisit`]), its offset
    /// weighed by its share of the blocks measured at its size
    /// ([`weighted_disturbed_point`]). Decided by the measurements only, never the
    /// prediction; every revisit is noted in the row ([`revisit_sweep`]).
    pub revisit: bool,
    /// What a block point that stands out is measured again with
    /// ([`BlockRevisit`]): alone, or with its program and the rest of its visit.
    pub block_revisit: BlockRevisit,
    /// Sizes of the machine's data caches in bytes, one per level (the default: this
    /// machine's, [`bench::cache_sizes`]). Where a block's input outgrows one within its
    /// sweep, the segmented modeler may break its model there ([`cache_breaks`]).
    pub caches: Vec<u64>,
    /// Before and after each configuration of two threads or more within the cores,
    /// check how much a busy core slows `inc` and `qsort` on another
    /// ([`bench::neighbour::check`], under a second each; a check right after one
    /// configuration serves as the next one's check before it): [`Row::host`],
    /// [`Report::host_check`], and a note on each such row that misses, saying whether a
    /// neighbour slowed a block by more than [`bench::neighbour::NEIGHBOUR_TOLERANCE`]
    /// at either end of its measurement.
    pub host_check: bool,
    /// With [`Options::host_check`]: before measuring a configuration of two threads or
    /// more, while the check reads a busy neighbour over the tolerance, wait up to this
    /// long, checking again every [`QUIET_RECHECK`] ([`wait_for_quiet`]); the row notes
    /// the wait. Zero (the default): measure at once.
    pub quiet_wait: std::time::Duration,
    /// Add what each pipeline of single blocks loses to its stages' slow and fast phases
    /// (the stochastic `max`, [`phase_losses`]) wherever its stages' unit tests recorded
    /// them ([`bench::PointStats::phases`]). On by default.
    pub phases: bool,
    /// Time each block that is timed alone on a thread pinned to the first core, where a
    /// pinned program of one thread runs its worker ([`bench::Conditions::first_core`]),
    /// instead of on the calling thread, which `ps` found on the other core. Off by
    /// default: on the host at its usual speed the paired A/B of 2026-11-29 put
    /// `seq(inc, inc)` and `seq(inc, nop)` within target either way, 1.2 points
    /// further off with it on average; where the cores switch speeds on their own it is
    /// untried (docs/validation.md, "Lone unit tests on the program's core").
    pub pin_lone_tests: bool,
}

impl Options {
    /// The cores the unit tests may load (`1`: every block timed alone).
    fn load_cores(&self) -> usize {
        if self.loaded {
            self.cores
        } else {
            1
        }
    }
}

/// What a block point that stands out from its neighbouring sizes is measured again
/// with ([`Options::revisit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockRevisit {
    /// The block alone, and the visit it keeps ([`Keep`]) replaces the first. Under the
    /// minimum that can only lower the block, while its program keeps the one visit it
    /// had: the pair a protocol measures together is split, and where the program met
    /// the same slow spell as the block's first visit the prediction there drops below
    /// it (run BE, `tpool(2, seq(qsort, inc))`: its worst point, predicted 16% low, a
    /// block kept from a lone second visit 14% faster). The default until the paired
    /// A/B of 2026-11-28 (docs/validation.md, "Block revisits alone or with their
    /// program, A/B").
    Alone,
    /// The whole visit again (the default): the program and every block at that size,
    /// as the protocol measures them together ([`merge_visit`]). Under the minimum each
    /// measurement keeps its faster visit (both are more repetitions of the same point),
    /// so the program gets the same second chance as its block; otherwise the second
    /// visit replaces the first as a whole if its block is the one kept. In a paired
    /// A/B on this 2-vCPU host it met the target in more rows than [`Alone`]
    /// (docs/validation.md, "Block revisits alone or with their program, A/B").
    ///
    /// [`Alone`]: BlockRevisit::Alone
    #[default]
    Visit,
}

impl std::str::FromStr for BlockRevisit {
    type Err = String;
    fn from_str(s: &str) -> Result<BlockRevisit, String> {
        match s {
            "alone" => Ok(BlockRevisit::Alone),
            "visit" => Ok(BlockRevisit::Visit),
            other => Err(format!(
                "unknown block revisit `{other}` (expected `alone` or `visit`)"
            )),
        }
    }
}

/// When the unit tests of the blocks run relative to the whole-program measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// Per configuration and size, the configuration's blocks are timed right before the
    /// program, and each configuration is predicted from its own block measurements. A
    /// drift of the machine's speed (memory-bound blocks move by several percent within
    /// minutes on a shared host) then moves the prediction and the measurement together.
    /// (Alternating single repetitions of blocks and program was tried and is worse: a
    /// repetition right after another measurement's stream of fresh inputs runs up to
    /// 15% slower.)
    #[default]
    Interleaved,
    /// Every block once over its sweep, before all programs (the seed's order; a long
    /// suite then compares a program with blocks measured up to half an hour earlier).
    Separate,
    /// [`Protocol::Interleaved`] with the program measured twice per size, right before
    /// its blocks and right after them (program, blocks, program). The prediction is
    /// compared with the two measurements pooled, and [`Row::repeat_error`] says how far
    /// apart they are: how well the machine reproduces the program itself over the
    /// seconds its blocks take. A prediction cannot be checked more closely than that.
    Sandwich,
    /// Randomised multiple interleaved trials: per configuration and size, the program
    /// and its blocks take turns in rounds, in an order shuffled every round, each with
    /// one untimed repetition (the state its own repetitions leave) and up to
    /// [`bench::ROUND_REPS`] timed ones, until all meet the sampling's target
    /// ([`bench::sample_rounds`]). A change of the machine's speed lasting longer than a
    /// round (tens to hundreds of milliseconds) reaches the program and its blocks alike;
    /// [`Row::repeat_error`] compares the program's first and second half of the rounds.
    Rounds,
}

impl Protocol {
    /// What a change of the host's speed across a configuration did to its measurements
    /// under this protocol (the end of [`note_host`]'s note on a missed row).
    pub fn speed_change_meant(self) -> &'static str {
        match self {
            Protocol::Interleaved | Protocol::Sandwich => {
                "the blocks and the program of one size, measured one after the other, may have met different speeds"
            }
            Protocol::Rounds => {
                "its program and its blocks took turns in the same rounds, so only a change within a round reaches one and not the other"
            }
            Protocol::Separate => {
                "its blocks, measured before all programs, and its program met hosts of different speeds"
            }
        }
    }

    /// Whether each configuration measures its own blocks next to its program.
    pub fn per_configuration(self) -> bool {
        !matches!(self, Protocol::Separate)
    }

    /// The suffixes of the two halves of a program measurement this protocol saves, if
    /// it measures the program twice ([`SANDWICH_HALVES`], [`ROUNDS_HALVES`]).
    pub fn halves(self) -> Option<[&'static str; 2]> {
        match self {
            Protocol::Sandwich => Some(SANDWICH_HALVES),
            Protocol::Rounds => Some(ROUNDS_HALVES),
            Protocol::Interleaved | Protocol::Separate => None,
        }
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        match s {
            "interleaved" => Ok(Protocol::Interleaved),
            "separate" => Ok(Protocol::Separate),
            "sandwich" => Ok(Protocol::Sandwich),
            "rounds" => Ok(Protocol::Rounds),
            other => Err(format!(
                "unknown protocol `{other}` (expected `interleaved`, `separate`, `sandwich` or `rounds`)"
            )),
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cores: crate::overhead::available_cores(),
            overhead: None,
            config: Config::default(),
            memory_limit: bench::default_memory_limit(),
            measure: Measure::Minimum,
            auto_measure: false,
            modeler: VALIDATE_MODELER.to_string(),
            protocol: Protocol::default(),
            loaded: true,
            revisit: true,
            block_revisit: BlockRevisit::default(),
            caches: bench::cache_sizes(),
            host_check: true,
            quiet_wait: std::time::Duration::ZERO,
            phases: true,
            pin_lone_tests: false,
        }
    }
}

/// One measured point of a configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Compared {
    pub x: u64,
    /// The measured time per element, reduced with the statistic the models are fitted
    /// to (`Options::measure`: the minimum by default).
    pub measured: f64,
    pub cv: f64,
    pub predicted: f64,
}

/// One row of the report.
#[derive(Clone, Debug)]
pub struct Row {
    pub group: String,
    pub configuration: String,
    pub threads: usize,
    pub within_cores: bool,
    pub modular: Expr,
    pub monolithic: Expr,
    pub coefficient_error: f64,
    pub time_error: f64,
    /// Overhead added to the modular model, ns per element (0 without calibration).
    pub overhead_ns: f64,
    /// Acceptance bound that applies (`None`: oversubscribed, reported only).
    pub target: Option<f64>,
    /// Notes from composition (cores capping) and the reasons of a miss.
    pub notes: Vec<String>,
    pub points: Vec<Compared>,
    /// The block models the prediction was composed from (component key → model).
    pub components: BTreeMap<String, Expr>,
    /// The block whose model's miss at its own measurements is the largest share of the
    /// prediction: a prediction composed from the models inherits that error from the
    /// fit alone (`None` when unknown).
    pub fit_floor: Option<FitFloor>,
    /// The largest relative error of the prediction composed, size by size, from the
    /// blocks' measured statistics instead of their models (`None` where the blocks are
    /// not all measured at the program's sizes, as in a MapReduce): the composition's
    /// own error, without the fits'.
    pub error_from_measured_blocks: Option<f64>,
    /// Under [`Protocol::Sandwich`]: the largest relative difference, over the sizes,
    /// between the program measured before and after its blocks ([`repeat_error`]);
    /// under [`Protocol::Rounds`], between its first and second half of the rounds.
    /// `None` under the other protocols.
    pub repeat_error: Option<f64>,
    /// The host check right before and right after this configuration was measured
    /// ([`Options::host_check`]; rows of two threads or more within the cores); `None`
    /// for other rows, without the check, and in a re-analysis.
    pub host: Option<HostAtRow>,
}

/// The host check at both ends of one configuration's measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct HostAtRow {
    pub before: bench::neighbour::NeighbourCheck,
    pub after: bench::neighbour::NeighbourCheck,
    /// How long the suite waited for the host to quiet down before measuring
    /// ([`Options::quiet_wait`]), and what the first check of that wait read (`None`:
    /// no wait, the first check read quiet).
    pub waited: Option<(std::time::Duration, bench::neighbour::NeighbourCheck)>,
    /// Each work's median idle time over the suite's checks before this configuration
    /// ([`bench::neighbour::typical`]: the host's usual speed so far; `None` at the
    /// first): what [`HostAtRow::slowdown`] and `--wait-quiet` compare the host's speed
    /// with.
    pub usual: Option<bench::neighbour::NeighbourCheck>,
    /// The cores' speed states sampled right before and right after the measurement
    /// ([`bench::states::validate_sample`]; `None` where the machine cannot sample them).
    pub states: [Option<bench::states::CoreStates>; 2],
    /// Each core's fastest window over every sample of the suite so far (over the whole
    /// suite once it has ended, [`bench::states::fastest`]): what [`HostAtRow::states`] are
    /// judged against.
    pub fastest: Vec<f64>,
}

impl HostAtRow {
    /// How much slower the host ran the check's works alone when the measurement began
    /// than its usual speed before ([`HostAtRow::usual`]; 1.0 at the first).
    pub fn slowdown(&self) -> f64 {
        self.usual.as_ref().map_or(1.0, |f| self.before.slowdown(f))
    }

    /// The check's works alone right after the measurement over right before it (the
    /// work that moved the most; 1.25: the host a quarter slower at the end).
    pub fn speed_change(&self) -> f64 {
        self.after.speed_change(&self.before)
    }

    /// Whether the host's speed moved across the measurement by more than
    /// [`bench::neighbour::SPEED_TOLERANCE`] either way.
    pub fn speed_moved(&self) -> bool {
        self.speed_change().ln().abs() > bench::neighbour::SPEED_TOLERANCE.ln()
    }

    /// The largest slowdown either end read.
    pub fn worst(&self) -> f64 {
        self.before.worst().max(self.after.worst())
    }

    /// Whether either end read a busy neighbour over the tolerance.
    pub fn disturbing(&self) -> bool {
        self.before.disturbing() || self.after.disturbing()
    }

    /// The shares of [`HostAtRow::states`] in the fast state, judged against
    /// [`HostAtRow::fastest`]: right before and right after; `None` without both samples.
    pub fn state_shares(&self) -> Option<[bench::states::Shares; 2]> {
        let [Some(before), Some(after)] = &self.states else {
            return None;
        };
        Some([before.shares(&self.fastest), after.shares(&self.fastest)])
    }
}

impl Row {
    pub fn passed(&self) -> Option<bool> {
        self.target
            .map(|t| self.coefficient_error <= t && self.time_error <= t)
    }
}

/// How far a fitted block model is from one of its own measured points.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PointMiss {
    pub x: u64,
    /// The point's statistic (`--measure`), ns.
    pub value: f64,
    /// `|model − statistic|`, ns.
    pub ns: f64,
    /// `|model − statistic| / statistic`.
    pub relative: f64,
}

/// The worst [`PointMiss`] of a row's blocks, as a share of the row's prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitFloor {
    pub block: String,
    pub x: u64,
    pub relative: f64,
    /// The miss over the composed prediction at that `x` (the relative miss where the
    /// block is measured at other sizes than the program, as `map` over images).
    pub share: f64,
}

/// Blocks timed in more than one configuration of a run — the same component key (kernel,
/// input, load), so the same measurement — whose medians at a common size disagree by
/// more than the row's target (10% without one) and whose 95% confidence intervals there
/// do not overlap: the machine's speed changed between the two, and a row composed from
/// such a block can miss (or pass) for the host's sake, not the model's. Returns per row (`blocks` pairs a row index with one of its block series,
/// named by key; `ids[i]` names row `i`) one note per disagreeing key, naming the worst
/// size and the other configuration. On 2026-11-24 one run timed the map of a large image
/// next to its sibling at 6.0 ms for one configuration and 10.7 ms minutes later for the
/// next, whose row then measured 0.61–0.69 of its prediction.
pub(crate) fn block_drift_notes(
    ids: &[String],
    targets: &[Option<f64>],
    blocks: &[(usize, Series)],
) -> Vec<Vec<String>> {
    let mut notes = vec![Vec::new(); ids.len()];
    for (a, (row, mine)) in blocks.iter().enumerate() {
        let limit = 1.0 + targets.get(*row).copied().flatten().unwrap_or(0.10);
        // The worst disagreement of this block with the same key in another row.
        let mut worst: Option<(f64, u64, f64, f64, usize)> = None;
        for (b, (other_row, theirs)) in blocks.iter().enumerate() {
            if a == b || other_row == row || theirs.name != mine.name {
                continue;
            }
            for p in &mine.points {
                let Some(q) = theirs.points.iter().find(|q| q.x == p.x) else {
                    continue;
                };
                // Only medians whose 95% confidence intervals do not overlap: a shift the
                // repetitions themselves cannot explain.
                let apart = p.ci_high < q.ci_low || q.ci_high < p.ci_low;
                if !(apart && p.median > 0.0 && q.median > 0.0) {
                    continue;
                }
                let ratio = p.median.max(q.median) / p.median.min(q.median);
                if ratio > limit && worst.is_none_or(|w| ratio > w.0) {
                    worst = Some((ratio, p.x, p.median, q.median, *other_row));
                }
            }
        }
        if let (Some((ratio, x, here, there, other)), Some(n)) = (worst, notes.get_mut(*row)) {
            n.push(format!(
                "block `{}` timed {} at x = {x} here and {} in `{}` ({ratio:.2}x apart): the machine's speed changed between the two measurements of the same block, so this row's error may be the host's rather than the model's",
                mine.name,
                duration(here),
                duration(there),
                ids.get(other).map_or("?", String::as_str),
            ));
        }
    }
    notes
}

/// Append [`block_drift_notes`] to the rows.
fn add_drift_notes(rows: &mut [Row], ids: &[String], blocks: &[(usize, Series)]) {
    let targets: Vec<Option<f64>> = rows.iter().map(|r| r.target).collect();
    for (row, notes) in rows
        .iter_mut()
        .zip(block_drift_notes(ids, &targets, blocks))
    {
        row.notes.extend(notes);
    }
}

/// Judge every row's cores' speed states ([`HostAtRow::states`]) against `fastest`, each
/// core's fastest window over the whole suite (a core slow through the first samples
/// does not read fast then; [`bench::states::CoreStates::shares`] judges every core
/// against the fastest of them), and note them on a row within the cores that misses its
/// target ([`state_note`]).
fn add_state_notes(rows: &mut [Row], fastest: &[f64]) {
    for row in rows.iter_mut() {
        let missed = row.within_cores && row.passed() == Some(false);
        let threads = row.threads;
        let Some(host) = &mut row.host else {
            continue;
        };
        host.fastest = fastest.to_vec();
        let seconds = host.states[0].as_ref().map_or(0.0, |s| s.seconds());
        let note = host
            .state_shares()
            .filter(|_| missed)
            .map(|[before, after]| state_note(threads, &before, &after, fastest, seconds));
        row.notes.extend(note);
    }
}

/// The note on the cores' speed states right `before` and right `after` a row of
/// `threads` threads: each core's share of windows in its fast state (within
/// [`bench::states::FAST`] of the fastest of `fastest`) and, for two threads or more, the
/// share in which every core was fast at once, which is what such a program's fastest
/// repetition needs while its blocks' unit tests need one core fast; each sample ran for
/// `seconds`.
fn state_note(
    threads: usize,
    before: &bench::states::Shares,
    after: &bench::states::Shares,
    fastest: &[f64],
    seconds: f64,
) -> String {
    let join = |v: Vec<String>| v.join(" and ");
    let pcts = |v: &[f64]| join(v.iter().map(|p| format!("{:.0}%", p * 100.0)).collect());
    let times = |v: &[f64]| join(v.iter().map(|&t| duration(t)).collect());
    let sample = format!(
        "`{}` x={} on every core at once for {} s at each end, windows of {} ms; fast: within {:.2}x of the fastest window of any core in this suite, each core's fastest {} a call; medians {} right before, {} right after",
        bench::states::KERNEL,
        bench::states::X,
        seconds,
        bench::states::WINDOW.as_millis(),
        bench::states::FAST,
        times(fastest),
        times(&before.median_ns),
        times(&after.median_ns),
    );
    if threads < 2 {
        return format!(
            "the cores' speed states: each core in its fast state in {} of the windows right before this configuration and {} right after ({sample})",
            pcts(&before.each),
            pcts(&after.each),
        );
    }
    format!(
        "the cores' speed states: every core in its fast state at once in {:.0}% of the windows right before this configuration and {:.0}% right after (each core {} before, {} after; {sample}): under the minimum a block timed on one thread finds its core's fast state, a program of {threads} threads only when every core is fast at once",
        before.every * 100.0,
        after.every * 100.0,
        pcts(&before.each),
        pcts(&after.each),
    )
}

/// A time in ns as the unit that reads best.
fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The misses of `model` at every point of `series` (`NaN` where it cannot be
/// evaluated).
fn fit_misses(model: &Expr, series: &Series, opts: &Options) -> Vec<PointMiss> {
    series
        .points
        .iter()
        .filter_map(|p| {
            let v = perfcompose_core::measure::Summary::of(&p.values)?.get(opts.measure);
            let m = model
                .eval_at(&[(bench::PARAMETER, p.x as f64)])
                .unwrap_or(f64::NAN);
            (v != 0.0).then(|| PointMiss {
                x: p.x,
                value: v,
                ns: (m - v).abs(),
                relative: ((m - v) / v).abs(),
            })
        })
        .collect()
}

/// The block miss that is the largest share of the prediction `modular` at the
/// program's sizes `sizes`.
fn fit_floor(
    blocks: &BTreeMap<String, Vec<PointMiss>>,
    modular: &Expr,
    sizes: &[usize],
) -> Option<FitFloor> {
    let mut worst: Option<FitFloor> = None;
    for (block, misses) in blocks {
        for m in misses {
            let share = if sizes.contains(&(m.x as usize)) {
                modular
                    .eval_at(&[(bench::PARAMETER, m.x as f64)])
                    .ok()
                    .filter(|p| *p > 0.0)
                    .map_or(f64::NAN, |p| m.ns / p)
            } else {
                m.relative
            };
            let better = match &worst {
                None => true,
                Some(w) => share > w.share || (share.is_nan() && !w.share.is_nan()),
            };
            if better {
                worst = Some(FitFloor {
                    block: block.clone(),
                    x: m.x,
                    relative: m.relative,
                    share,
                });
            }
        }
    }
    worst
}

/// `--measure auto` validates under the mean when each core was in its fast state in
/// less than this share of the windows, over the ends of the designs within the cores
/// ([`AutoMeasure::choose`]): the minimum estimates a time in the fast state only where a
/// point's repetitions reach one, which on a host whose cores are mostly slow is up to
/// where its seconds fall. Runs BE and BG (the cores fast together in none of the
/// windows, each in a few) scored 24 of 31 and 7 of 14 under the mean against 18 and 4
/// under the minimum; runs AX and AZ, at the host's usual speed, 30 and 29 of 31 under
/// the minimum against 21 and 18 under the mean (docs/validation.md, "Which statistic
/// on a two-state host").
pub const AUTO_FAST_SHARE: f64 = 0.5;

/// What `--measure auto` chose for a run ([`Options::auto_measure`]), and from what.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AutoMeasure {
    /// The median over the samples of the cores' speed states (both ends of every
    /// design within the cores) of the mean over cores of each core's share of windows
    /// in its fast state, judged against the fastest window of any core in the whole
    /// run; `None` without any sample (no host check, one core, or a run saved before
    /// the samples existed), which keeps the minimum.
    pub fast_share: Option<f64>,
    /// How many samples [`AutoMeasure::fast_share`] is the median of.
    pub samples: usize,
    /// The statistic chosen: the minimum, or the mean below [`AUTO_FAST_SHARE`].
    #[serde(serialize_with = "measure_name")]
    pub measure: Measure,
}

fn measure_name<S: serde::Serializer>(m: &Measure, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(m.name())
}

impl AutoMeasure {
    /// Choose from each sample's per-core fast shares (a sample without a finite share
    /// does not count).
    pub fn choose<'a>(samples: impl IntoIterator<Item = &'a [f64]>) -> AutoMeasure {
        let per: Vec<f64> = samples
            .into_iter()
            .filter_map(|each| {
                let finite: Vec<f64> = each.iter().copied().filter(|v| v.is_finite()).collect();
                (!finite.is_empty()).then(|| finite.iter().sum::<f64>() / finite.len() as f64)
            })
            .collect();
        let fast_share = (!per.is_empty()).then(|| perfcompose_core::measure::median(&per));
        let measure = match fast_share {
            Some(s) if s < AUTO_FAST_SHARE => Measure::Mean,
            _ => Measure::Minimum,
        };
        AutoMeasure {
            fast_share,
            samples: per.len(),
            measure,
        }
    }

    /// From every row's [`HostAtRow::state_shares`] (judged against the fastest windows
    /// the rows carry): both ends of each.
    pub fn of_rows(rows: &[Row]) -> AutoMeasure {
        let each: Vec<Vec<f64>> = rows
            .iter()
            .filter_map(|r| r.host.as_ref()?.state_shares())
            .flat_map(|[before, after]| [before.each, after.each])
            .collect();
        AutoMeasure::choose(each.iter().map(Vec::as_slice))
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        match self.fast_share {
            None => format!(
                "statistic: the {} (--measure auto without any sample of the cores' speed states to choose from)",
                self.measure
            ),
            Some(share) => format!(
                "statistic: the {}, chosen by --measure auto: each core in its fast state in a median {:.0}% of the windows over {} samples at the ends of the designs within the cores ({} {:.0}%: {})",
                self.measure,
                share * 100.0,
                self.samples,
                if share < AUTO_FAST_SHARE { "under" } else { "at least" },
                AUTO_FAST_SHARE * 100.0,
                if share < AUTO_FAST_SHARE {
                    "the cores mostly slow, where a point's minimum is at the mercy of where its few seconds fall, so every row is validated under the mean of its repetitions"
                } else {
                    "the cores mostly fast, so the minimum of the repetitions stands for the undisturbed time"
                },
            ),
        }
    }
}

/// The outcome of a suite.
#[derive(Clone, Debug)]
pub struct Report {
    pub suite: String,
    pub cores: usize,
    pub overhead_calibrated: bool,
    pub protocol: Protocol,
    /// Fitted block models, `kernel` or `kernel@image` (interleaved protocol: fitted to
    /// all the block's measurements of the suite; each row has its own in
    /// [`Row::components`]).
    pub components: BTreeMap<String, Expr>,
    pub rows: Vec<Row>,
    /// All measurements taken (blocks first), for saving.
    pub series: Vec<Series>,
    /// 1-minute load average of the machine before and after the run (Linux), to judge
    /// how much other work disturbed the measurements.
    pub load: Option<(f64, f64)>,
    /// The host check before and after the suite ([`Options::host_check`]): `None` where
    /// it did not run (no design of two threads within the cores, fewer than two cores,
    /// `--from`).
    pub host_check: Option<[bench::neighbour::NeighbourCheck; 2]>,
    /// The statistic the rows are fitted and compared on ([`Options::measure`], or what
    /// `--measure auto` chose).
    pub measure: Measure,
    /// Under `--measure auto`: what it chose and why.
    pub auto_measure: Option<AutoMeasure>,
}

/// The 1-minute load average (Linux `/proc/loadavg`).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The stable `--json` schema.
#[derive(Serialize)]
pub struct JsonReport {
    pub cores: u32,
    pub rows: Vec<JsonRow>,
    /// Added field: the statistic of the repetitions the rows are fitted and compared on
    /// ([`Report::measure`]).
    pub measure: &'static str,
    /// Added field: what `--measure auto` chose and from what ([`Report::auto_measure`]),
    /// present under it only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_measure: Option<AutoMeasure>,
}

#[derive(Serialize)]
pub struct JsonRow {
    pub configuration: String,
    pub threads: u32,
    pub within_cores: bool,
    pub modular: String,
    pub monolithic: String,
    pub coefficient_error: f64,
    pub time_error: f64,
    /// Added field: [`Row::repeat_error`], present under the sandwich and rounds
    /// protocols only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_error: Option<f64>,
    /// Added field: [`Row::host`], present on rows the host check ran around.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_check: Option<JsonHost>,
}

/// The host check around a row: the largest slowdown a busy neighbour caused right
/// before and right after its measurement, and the seconds waited for a quiet host.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct JsonHost {
    pub before: f64,
    pub after: f64,
    pub waited_s: f64,
    /// [`HostAtRow::speed_change`].
    pub speed_change: f64,
    /// [`HostAtRow::slowdown`].
    pub slowdown: f64,
    /// [`HostAtRow::state_shares`], absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_states: Option<JsonCoreStates>,
}

/// The cores' speed states around a row ([`HostAtRow::state_shares`]).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct JsonCoreStates {
    /// Each core's fastest window in the suite, ns per call of [`bench::states::KERNEL`]
    /// at [`bench::states::X`].
    pub fastest_ns: Vec<f64>,
    pub before: bench::states::Shares,
    pub after: bench::states::Shares,
}

impl HostAtRow {
    pub fn to_json(&self) -> JsonHost {
        JsonHost {
            before: self.before.worst(),
            after: self.after.worst(),
            waited_s: self.waited.as_ref().map_or(0.0, |(d, _)| d.as_secs_f64()),
            speed_change: self.speed_change(),
            slowdown: self.slowdown(),
            core_states: self.state_shares().map(|[before, after]| JsonCoreStates {
                fastest_ns: self.fastest.clone(),
                before,
                after,
            }),
        }
    }
}

impl Report {
    pub fn to_json(&self) -> JsonReport {
        JsonReport {
            cores: self.cores as u32,
            rows: self
                .rows
                .iter()
                .map(|r| JsonRow {
                    configuration: r.configuration.clone(),
                    threads: r.threads as u32,
                    within_cores: r.within_cores,
                    modular: r.modular.to_string(),
                    monolithic: r.monolithic.to_string(),
                    coefficient_error: r.coefficient_error,
                    time_error: r.time_error,
                    repeat_error: r.repeat_error,
                    host_check: r.host.as_ref().map(HostAtRow::to_json),
                })
                .collect(),
            measure: self.measure.name(),
            auto_measure: self.auto_measure.clone(),
        }
    }
}

/// Steps of a suite, for a progress bar: one per measured point.
pub fn steps(suite: &Suite, registry: &Registry, opts: &Options) -> Result<usize, Error> {
    let programs = suite.cases.iter().map(|c| c.sizes.len()).sum::<usize>();
    if opts.protocol.per_configuration() {
        return Ok(programs);
    }
    let mut n = 0;
    for (_, k, _, _) in needed_kernels(suite, registry, opts.load_cores())? {
        n += kernel_sizes(suite, registry, &k)?.len();
    }
    Ok(n + programs)
}

fn kernel_sizes(suite: &Suite, registry: &Registry, kernel: &str) -> Result<Vec<usize>, Error> {
    Ok(match suite.kernel_sizes.get(kernel) {
        Some(s) => s.clone(),
        None => registry.get(kernel)?.default_sizes(false),
    })
}

/// Component key: a map kernel's model depends on the image size, so it is measured
/// (and named) per image: `map@small`.
fn component_key(kernel: &str, image: ImageSize, registry: &Registry) -> Result<String, Error> {
    Ok(match registry.get(kernel)?.op() {
        crate::kernel::Op::Map { .. } => format!("{kernel}@{}", image.name()),
        _ => kernel.to_string(),
    })
}

/// The plan with every kernel renamed after where its input is when the kernel starts
/// (`NAME_warm`, `NAME_remote`, or unchanged for cold), following the element through the
/// design: the first kernel to touch a stream element finds it in memory (cold); a kernel
/// after another one on the same thread (the blocks of a `seq`) finds what that one wrote
/// in its own cache (warm); a kernel on another thread than the last one that wrote the
/// element (the next stage of a `pipe`, or a `tpool` after a stage) has to fetch it from
/// that core's cache (remote). A kernel that does not write ([`Kernel::writes`], `nop`)
/// leaves the element where it was. Seed 000 §4 times its blocks as the program invokes
/// them; this is where the invocations differ.
///
/// A kernel that the workers of a task pool run side by side gets `_parN` as well
/// (`inc_par2`, `inc_warm_par2`): N = the workers, capped at `cores`, and it is timed
/// while N − 1 other threads run it ([`bench::Conditions`]). A stage of a pipeline whose
/// stages are single blocks (nested pipes count as the stages they flatten to), outside
/// any task pool and on more than one core, gets `_stageI_of_A_then_B…`
/// (`inc_remote_stage2_of_qsort_then_inc`): it is timed while the other stages run next to
/// it on the same stream ([`bench::Stage`]). A pipeline with a pattern as a stage keeps
/// its blocks' names. A block of the `seq` of single blocks that a task pool's workers run
/// side by side on stream elements (nested seqs count as the blocks they flatten to) gets
/// `_seqI_of_A_then_B…` as well (`inc_warm_par2_seq2_of_inc_then_inc`): it is timed on one
/// thread of N that all run the whole `seq` ([`bench::Replica`]). (The blocks of a MapReduce keep their names; [`block_of`] says how
/// they are measured.)
///
/// [`Kernel::writes`]: crate::kernel::Kernel::writes
pub fn input_plan(plan: &Plan, registry: &Registry, cores: usize) -> Plan {
    struct Walk<'a> {
        threads: usize,
        cores: usize,
        registry: &'a Registry,
    }
    fn par_suffix(par: usize) -> String {
        if par >= 2 {
            format!("_par{par}")
        } else {
            String::new()
        }
    }
    /// `thread`: the thread running `p`; `writer`: the thread that last wrote the element
    /// (`None`: nobody since the stream made it); `par`: workers running `p` side by side.
    /// Returns the renamed plan and the last writer of its output.
    fn go(
        p: &Plan,
        thread: usize,
        writer: Option<usize>,
        par: usize,
        w: &mut Walk<'_>,
    ) -> (Plan, Option<usize>) {
        fn fresh(threads: &mut usize) -> usize {
            *threads += 1;
            *threads
        }
        match p {
            Plan::Kernel(k) => {
                let state = match writer {
                    None => bench::InputState::Cold,
                    Some(t) if t == thread => bench::InputState::Warm,
                    Some(_) => bench::InputState::Remote,
                };
                let writes = w.registry.get(k).map_or(true, |k| k.writes());
                (
                    Plan::Kernel(format!("{k}{}{}", state.suffix(), par_suffix(par))),
                    if writes { Some(thread) } else { writer },
                )
            }
            // The parts of a seq run on this thread, each stage of a pipe on its own.
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                let pipe = matches!(p, Plan::Pipe(_));
                let mut last = writer;
                let mut out = Vec::with_capacity(parts.len());
                for q in parts {
                    let on = if pipe { fresh(&mut w.threads) } else { thread };
                    let (q, after) = go(q, on, last, par, w);
                    out.push(q);
                    last = after;
                }
                (
                    if pipe {
                        Plan::Pipe(out)
                    } else {
                        Plan::Seq(out)
                    },
                    last,
                )
            }
            Plan::TPool(n, inner) => {
                let worker = fresh(&mut w.threads);
                let par = (par * n).clamp(1, w.cores.max(1));
                let (q, after) = go(inner, worker, writer, par, w);
                (Plan::TPool(*n, Box::new(q)), after)
            }
            // Patterns measured as a whole (MapReduce: see `block_of`) write their output.
            other => (other.clone(), Some(fresh(&mut w.threads))),
        }
    }
    let mut w = Walk {
        threads: 0,
        cores,
        registry,
    };
    let placed = go(plan, 0, None, 1, &mut w).0;
    if cores >= 2 {
        replicated(&staged(&placed, registry), registry)
    } else {
        placed
    }
}

/// A `seq` (`pipe` false) or a `pipe` (`pipe` true) of single blocks, nested ones of the same
/// kind flattened: collect its kernels into `out`; false if a part is anything else.
fn flat_blocks<'p>(p: &'p Plan, pipe: bool, out: &mut Vec<&'p str>) -> bool {
    match p {
        Plan::Seq(ps) if !pipe => ps.iter().all(|q| flat_blocks(q, pipe, out)),
        Plan::Pipe(ps) if pipe => ps.iter().all(|q| flat_blocks(q, pipe, out)),
        Plan::Kernel(k) => {
            out.push(k);
            true
        }
        _ => false,
    }
}

/// [`flat_blocks`]'s `p` with each kernel renamed after its position among them:
/// `mark(conditions, position)` adds the group to its conditions.
fn rename_blocks(p: &Plan, next: &mut usize, mark: &dyn Fn(&mut bench::Conditions, usize)) -> Plan {
    match p {
        Plan::Seq(ps) => Plan::Seq(ps.iter().map(|q| rename_blocks(q, next, mark)).collect()),
        Plan::Pipe(ps) => Plan::Pipe(ps.iter().map(|q| rename_blocks(q, next, mark)).collect()),
        Plan::Kernel(k) => {
            let (base, mut how) = bench::Conditions::parse(k);
            mark(&mut how, *next);
            *next += 1;
            Plan::Kernel(format!("{base}{}", how.suffix()))
        }
        other => other.clone(),
    }
}

/// Whether `name` is a sequential block of `registry`.
fn is_block(registry: &Registry, name: &str) -> bool {
    registry
        .get(name)
        .is_ok_and(|k| matches!(k.op(), crate::kernel::Op::Block { .. }))
}

/// `plan` with the blocks of every task pool whose workers run a `seq` of single blocks
/// on stream elements renamed after their place in that `seq` (see [`input_plan`]).
fn replicated(plan: &Plan, registry: &Registry) -> Plan {
    match plan {
        Plan::TPool(n, inner) => {
            let mut names = Vec::new();
            let whole = matches!(**inner, Plan::Seq(_)) && flat_blocks(inner, false, &mut names);
            let parsed: Vec<(&str, bench::Conditions)> =
                names.iter().map(|k| bench::Conditions::parse(k)).collect();
            let replica = whole
                && parsed.len() >= 2
                && parsed[0].1.input == bench::InputState::Cold
                && parsed
                    .iter()
                    .all(|(base, how)| how.siblings > 0 && is_block(registry, base));
            if replica {
                let kernels: Vec<String> = parsed.iter().map(|(b, _)| b.to_string()).collect();
                let mark = |how: &mut bench::Conditions, index: usize| {
                    how.replica = Some(bench::Replica {
                        index,
                        kernels: kernels.clone(),
                    });
                };
                Plan::TPool(*n, Box::new(rename_blocks(inner, &mut 0, &mark)))
            } else {
                Plan::TPool(*n, Box::new(replicated(inner, registry)))
            }
        }
        Plan::Seq(ps) => Plan::Seq(ps.iter().map(|q| replicated(q, registry)).collect()),
        Plan::Pipe(ps) => Plan::Pipe(ps.iter().map(|q| replicated(q, registry)).collect()),
        other => other.clone(),
    }
}

/// `plan` with the blocks of every pipeline of single blocks (outside task pools) renamed
/// after their stage (see [`input_plan`]).
fn staged(plan: &Plan, registry: &Registry) -> Plan {
    match plan {
        Plan::Pipe(_) => {
            let mut names = Vec::new();
            if !flat_blocks(plan, true, &mut names) || names.len() < 2 {
                return plan.clone();
            }
            let kernels: Vec<String> = names
                .iter()
                .map(|k| bench::Conditions::parse(k).0.to_string())
                .collect();
            let blocks = kernels.iter().all(|b| is_block(registry, b));
            let mark = |how: &mut bench::Conditions, index: usize| {
                how.stage = Some(bench::Stage {
                    index,
                    kernels: kernels.clone(),
                });
            };
            if blocks {
                rename_blocks(plan, &mut 0, &mark)
            } else {
                plan.clone()
            }
        }
        Plan::Seq(parts) => Plan::Seq(parts.iter().map(|q| staged(q, registry)).collect()),
        _ => plan.clone(),
    }
}

/// The block measurement behind a component of an input plan: `(component key, kernel,
/// input state)` (`inc_warm`, `inc_remote`, `map@small`). The reduction of a MapReduce
/// keeps its name in the plan (the term is composed as written) but is measured warm: it
/// runs on what the same thread just gathered (the values of one key, per key) or
/// produced (its running collection and the map output it adds, pairwise). Measured
/// cold, the per-key reduction of 4 values read 61 ns per key, most of it the miss on
/// its input; the whole shuffle and reduction of a job took 19 ns per key (paper run H).
/// Both blocks of a MapReduce on n threads are measured with min(n, cores) − 1 siblings
/// (`map@small_par2`, `reduce_per_key_warm_par2`): the job's threads run them side by side.
fn block_of(
    name: &str,
    plan: &Plan,
    image: ImageSize,
    registry: &Registry,
    cores: usize,
) -> Result<(String, String, bench::Conditions), Error> {
    let (base, mut how) = bench::Conditions::parse(name);
    if reduces_of_mapreduce(plan).contains(&name) {
        how.input = bench::InputState::Warm;
    }
    if let Some(threads) = mapreduce_threads(plan, name) {
        how.siblings = threads.clamp(1, cores.max(1)) - 1;
    }
    let key = component_key(base, image, registry)?;
    Ok((format!("{key}{}", how.suffix()), base.to_string(), how))
}

/// The threads of the MapReduce node whose map or reduction is `kernel`, if any.
fn mapreduce_threads(plan: &Plan, kernel: &str) -> Option<usize> {
    match plan {
        Plan::MapReduce {
            map,
            reduce,
            threads,
            ..
        } => (map == kernel || reduce == kernel).then_some(*threads),
        Plan::Seq(parts) | Plan::Pipe(parts) => {
            parts.iter().find_map(|p| mapreduce_threads(p, kernel))
        }
        Plan::TPool(_, inner) => mapreduce_threads(inner, kernel),
        Plan::Kernel(_) | Plan::Unsupported { .. } => None,
    }
}

/// The reduction kernels of the MapReduce nodes of a plan.
fn reduces_of_mapreduce(plan: &Plan) -> Vec<&str> {
    match plan {
        Plan::MapReduce { reduce, .. } => vec![reduce.as_str()],
        Plan::Seq(parts) | Plan::Pipe(parts) => {
            parts.iter().flat_map(reduces_of_mapreduce).collect()
        }
        Plan::TPool(_, inner) => reduces_of_mapreduce(inner),
        Plan::Kernel(_) | Plan::Unsupported { .. } => Vec::new(),
    }
}

/// Every block measurement a suite needs, once each: `(component key, kernel, image,
/// conditions)`.
type Needed = (String, String, ImageSize, bench::Conditions);

fn needed_kernels(suite: &Suite, registry: &Registry, cores: usize) -> Result<Vec<Needed>, Error> {
    let mut seen = BTreeMap::new();
    for c in &suite.cases {
        let (_, plan) = parse_plan("<term>", &c.term).map_err(|d| Error::Run(d.render()))?;
        for n in case_needs(c, &plan, registry, cores)? {
            seen.entry(n.0.clone()).or_insert(n);
        }
    }
    Ok(seen.into_values().collect())
}

/// The block measurements one configuration needs, once each.
fn case_needs(
    c: &Case,
    plan: &Plan,
    registry: &Registry,
    cores: usize,
) -> Result<Vec<Needed>, Error> {
    let mut seen = BTreeMap::new();
    let as_composed = input_plan(plan, registry, cores);
    for k in as_composed.kernels() {
        let (key, base, state) = block_of(&k, &as_composed, c.image, registry, cores)?;
        seen.entry(key.clone())
            .or_insert((key, base, c.image, state));
    }
    Ok(seen.into_values().collect())
}

/// Suffixes of the two halves of a program measured under [`Protocol::Sandwich`]
/// (`ID [before blocks]`, `ID [after blocks]`); the program itself, both pooled, is
/// saved as `ID`.
pub const SANDWICH_HALVES: [&str; 2] = [" [before blocks]", " [after blocks]"];

/// Suffixes of the two halves of a program measured under [`Protocol::Rounds`]: its
/// values from the first half of the rounds and from the second.
pub const ROUNDS_HALVES: [&str; 2] = [" [early rounds]", " [late rounds]"];

/// What [`measure_interleaved`] measured for one configuration.
struct Measured {
    /// Block series, named by component key.
    blocks: Vec<Series>,
    /// The program (both halves pooled under the sandwich protocol).
    program: Series,
    /// Under the sandwich protocol, the program before and after its blocks, named
    /// with [`SANDWICH_HALVES`].
    halves: Option<[Series; 2]>,
    /// A note per program point measured a second time (see [`Options::revisit`]).
    revisits: Vec<String>,
}

/// Measure one configuration under [`Protocol::Interleaved`]: per program size, the
/// configuration's blocks, then the program ([`Protocol::Sandwich`]: the program, the
/// blocks, the program again; [`Protocol::Rounds`]: all of them in shuffled rounds,
/// [`bench::sample_rounds`]). A block measured over the same sizes as the program is
/// timed at the same size; one measured over other sizes (the map of a MapReduce, over
/// images) has its points spread over the program's sizes.
fn measure_interleaved(
    c: &Case,
    plan: &Plan,
    needs: &[Needed],
    suite: &Suite,
    registry: &Registry,
    opts: &Options,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Measured, Error> {
    let built = plan.build(registry, opts.config.clone())?;
    let inputs = Inputs::with_image(c.image);
    let mut kernels = Vec::with_capacity(needs.len());
    let mut sizes = Vec::with_capacity(needs.len());
    for (_, kernel, _, _) in needs {
        kernels.push(registry.get(kernel)?);
        sizes.push(kernel_sizes(suite, registry, kernel)?);
    }
    let name = case_id(c, plan);
    let sandwich = opts.protocol == Protocol::Sandwich;
    let halved = opts.protocol.halves();
    // The unit test of block point `(k, j)`, its inputs within `limit` bytes.
    let block_sampler = |(k, j): (usize, usize), limit: u128| {
        bench::KernelSampler::for_block(
            registry,
            &needs[k].1,
            sizes[k][j],
            &inputs,
            &suite.sampling,
            limit,
            bench::Conditions {
                first_core: opts.pin_lone_tests,
                ..needs[k].3.clone()
            },
        )
    };
    // One visit of program point `i`: its blocks and the program, as the protocol says.
    let visit = |i: usize, x: usize| -> Result<Visit, Error> {
        let slots = slots_at(i, &c.sizes, &sizes);
        if opts.protocol == Protocol::Rounds {
            // All the samplers hold their inputs at once: they share the memory limit.
            let share = opts.memory_limit / (1 + slots.len()) as u128;
            let mut program = bench::ProgramSampler::new(&built, registry, x, &inputs, share)?;
            let mut blocks = slots
                .iter()
                .map(|&slot| block_sampler(slot, share))
                .collect::<Result<Vec<_>, _>>()?;
            let mut items: Vec<&mut dyn bench::Repeated> = vec![&mut program];
            items.extend(blocks.iter_mut().map(|b| b as &mut dyn bench::Repeated));
            let mut got = bench::sample_rounds(&suite.sampling, &mut items, x as u64)?;
            drop(items);
            let blocks = slots
                .iter()
                .copied()
                .zip(got.drain(1..).map(|r| r.stats))
                .collect();
            let program = got.pop().expect("the program was sampled");
            let [a, b] = program.halves();
            return Ok(Visit {
                halves: Some([
                    bench::PointStats::of(x as u64, a),
                    bench::PointStats::of(x as u64, b),
                ]),
                program: program.stats,
                blocks,
            });
        }
        let sample_program = || -> Result<bench::PointStats, Error> {
            let mut program =
                bench::ProgramSampler::new(&built, registry, x, &inputs, opts.memory_limit)?;
            bench::sample_point(&suite.sampling, &mut program)
        };
        let before = if sandwich {
            Some(sample_program()?)
        } else {
            None
        };
        // The blocks first, each to the end of its repetitions, then the program: each
        // measurement starts with the machine in the state its own warm-up leaves (one
        // repetition right after another measurement's stream of fresh inputs runs up to
        // 15% slower), and the program follows its blocks by seconds.
        let mut blocks = Vec::with_capacity(slots.len());
        for &(k, j) in &slots {
            let mut b = block_sampler((k, j), opts.memory_limit)?;
            blocks.push(((k, j), bench::sample_point(&suite.sampling, &mut b)?));
        }
        let after = sample_program()?;
        Ok(match before {
            Some(before) => {
                let mut values = before.values.clone();
                values.extend_from_slice(&after.values);
                let mut both = bench::PointStats::of(before.x, values);
                both.batch = before.batch;
                both.converged = before.converged && after.converged;
                Visit {
                    program: both,
                    halves: Some([before, after]),
                    blocks,
                }
            }
            None => Visit {
                program: after,
                halves: None,
                blocks,
            },
        })
    };
    let mut visits = Vec::with_capacity(c.sizes.len());
    for (i, &x) in c.sizes.iter().enumerate() {
        progress(Progress {
            label: &name,
            x: x as u64,
            done: i,
            total: c.sizes.len(),
        });
        visits.push(visit(i, x)?);
    }
    let mut revisits = Vec::new();
    if opts.revisit {
        let target = row_target(plan) * suite.revisit_share;
        let stat = |p: &bench::PointStats| point_stat(p, opts.measure);
        // The program's sweep: a point measured again is a whole visit (its blocks too).
        let xs: Vec<f64> = c.sizes.iter().map(|&x| x as f64).collect();
        let mut ys: Vec<f64> = visits.iter().map(|v| stat(&v.program)).collect();
        // Every later visit, in the order measured (a point may have two: `MAX_VISITS`).
        let mut later: Vec<Visit> = Vec::new();
        let again = format!("{name} (measured again)");
        let keep = Keep::for_measure(opts.measure);
        let done = revisit_sweep(&xs, &mut ys, &[], target, keep, |i| {
            let x = c.sizes[i];
            progress(Progress {
                label: &again,
                x: x as u64,
                done: 0,
                total: c.sizes.len(),
            });
            let second = visit(i, x)?;
            let y = stat(&second.program);
            later.push(second);
            Ok::<f64, Error>(y)
        })?;
        for (r, second) in done.into_iter().zip(later) {
            revisits.push(format!(
                "measured x={} again, blocks and program: {}",
                c.sizes[r.index],
                r.describe("the program", " per element")
            ));
            if r.kept_second {
                visits[r.index] = second;
            }
        }
        // Then each block's own sweep, over the visits kept: a block point every
        // repetition of which a burst slowed is measured again, with its program and the
        // other blocks at that size by default ([`BlockRevisit`]; the program's points
        // do not show it: run V, `docs/validation.md`) — if it can move the
        // prediction by the target: weighed by its share of the blocks measured at its
        // size (`nop` next to `qsort` cannot). Blocks swept over other sizes than the
        // program (a MapReduce's) have no such share and weigh 1.
        let same_sizes = sizes.iter().all(|s| s[..] == c.sizes[..]);
        for (k, (key, ..)) in needs.iter().enumerate() {
            // Block `k`'s points in size order: (point, visit, position in the visit).
            let mut at: Vec<(usize, usize, usize)> = Vec::new();
            for (i, v) in visits.iter().enumerate() {
                for (pos, &((b, j), _)) in v.blocks.iter().enumerate() {
                    if b == k {
                        at.push((j, i, pos));
                    }
                }
            }
            at.sort_unstable();
            let xs: Vec<f64> = at.iter().map(|&(j, ..)| sizes[k][j] as f64).collect();
            let mut ys: Vec<f64> = at
                .iter()
                .map(|&(_, i, pos)| stat(&visits[i].blocks[pos].1))
                .collect();
            let weights: Vec<f64> = at
                .iter()
                .map(|&(_, i, pos)| {
                    let total: f64 = visits[i].blocks.iter().map(|(_, p)| stat(p)).sum();
                    let share = stat(&visits[i].blocks[pos].1) / total;
                    if same_sizes && share.is_finite() {
                        share
                    } else {
                        1.0
                    }
                })
                .collect();
            let whole = opts.block_revisit == BlockRevisit::Visit;
            // Every later measurement, in the order measured: a whole visit, or the block
            // alone.
            let mut later: Vec<Result<Visit, bench::PointStats>> = Vec::new();
            let label = format!("{name} (block {key} measured again)");
            let done = revisit_sweep(&xs, &mut ys, &weights, target, keep, |m| {
                let (j, i, pos) = at[m];
                progress(Progress {
                    label: &label,
                    x: sizes[k][j] as u64,
                    done: 0,
                    total: at.len(),
                });
                if whole {
                    let second = visit(i, c.sizes[i])?;
                    let y = stat(&second.blocks[pos].1);
                    later.push(Ok(second));
                    return Ok::<f64, Error>(y);
                }
                let mut b = block_sampler((k, j), opts.memory_limit)?;
                let second = bench::sample_point(&suite.sampling, &mut b)?;
                let y = stat(&second);
                later.push(Err(second));
                Ok::<f64, Error>(y)
            })?;
            for (r, second) in done.into_iter().zip(later) {
                let (j, i, pos) = at[r.index];
                let mut note = format!(
                    "measured block `{key}` at x={} again{}: {}",
                    sizes[k][j],
                    if whole { " with its program" } else { "" },
                    r.describe("it", "")
                );
                match second {
                    Ok(second) => {
                        let program =
                            merge_visit(&mut visits[i], second, r.visit, r.kept_second, keep, stat);
                        note += &format!("; {program}");
                    }
                    Err(alone) if r.kept_second => visits[i].blocks[pos].1 = alone,
                    Err(_) => {}
                }
                revisits.push(note);
            }
        }
    }
    let mut program_points = Vec::with_capacity(visits.len());
    let mut halves: [Vec<bench::PointStats>; 2] = [Vec::new(), Vec::new()];
    let mut block_points: Vec<Vec<Option<bench::PointStats>>> =
        sizes.iter().map(|s| vec![None; s.len()]).collect();
    for v in visits {
        program_points.push(v.program);
        if let Some([a, b]) = v.halves {
            halves[0].push(a);
            halves[1].push(b);
        }
        for ((k, j), p) in v.blocks {
            block_points[k][j] = Some(p);
        }
    }
    let blocks = needs
        .iter()
        .zip(block_points)
        .map(|((key, ..), points)| {
            Series::kernel(key.clone(), points.into_iter().flatten().collect())
        })
        .collect();
    let halves = halved.map(|suffix| {
        let [a, b] = halves;
        [
            Series::program(format!("{name}{}", suffix[0]), a),
            Series::program(format!("{name}{}", suffix[1]), b),
        ]
    });
    let program = Series::program(name, program_points);
    Ok(Measured {
        blocks,
        program,
        halves,
        revisits,
    })
}

/// The target of a configuration's row: [`TARGET_MAPREDUCE`] for a MapReduce,
/// [`TARGET_PATTERNS`] otherwise.
fn row_target(plan: &Plan) -> f64 {
    if matches!(plan, Plan::MapReduce { .. }) {
        TARGET_MAPREDUCE
    } else {
        TARGET_PATTERNS
    }
}

/// One visit of a program point: the program and the block points measured with it.
struct Visit {
    program: bench::PointStats,
    /// The program's two halves (sandwich and rounds protocols).
    halves: Option<[bench::PointStats; 2]>,
    /// `(block, point)` and its measurement.
    blocks: Vec<((usize, usize), bench::PointStats)>,
}

/// Fold `second`, a whole visit measured again for one of its blocks
/// ([`BlockRevisit::Visit`]; the point's `nth` visit), into `first`: under
/// [`Keep::Faster`] every measurement (the program with its halves, each block) keeps its
/// faster visit by `stat`; under
/// [`Keep::Closer`] the second visit replaces the first as a whole when the revisit kept
/// its block (`kept_second`), so a program stays with the blocks measured with it.
/// Returns what became of the program, for the row's note.
fn merge_visit(
    first: &mut Visit,
    second: Visit,
    nth: usize,
    kept_second: bool,
    keep: Keep,
    stat: impl Fn(&bench::PointStats) -> f64,
) -> String {
    let (a, b) = (stat(&first.program), stat(&second.program));
    let program_second = match keep {
        Keep::Faster => b < a,
        Keep::Closer => kept_second,
    };
    let note = format!(
        "the program took {} per element, then {} ({:+.0}%); kept the {} visit",
        duration(a),
        duration(b),
        100.0 * (b / a - 1.0),
        kept_visit(program_second, nth)
    );
    match keep {
        Keep::Closer => {
            if kept_second {
                *first = second;
            }
        }
        Keep::Faster => {
            if program_second {
                first.program = second.program;
                first.halves = second.halves;
            }
            for (kept, (slot, again)) in first.blocks.iter_mut().zip(second.blocks) {
                debug_assert_eq!(kept.0, slot, "a visit measures its blocks in one order");
                if stat(&again) < stat(&kept.1) {
                    kept.1 = again;
                }
            }
        }
    }
    note
}

/// How many times, in all, [`revisit_sweep`] may measure one point: its first visit, a
/// second when it stands out from its neighbours, and a third when it still does.
pub const MAX_VISITS: usize = 3;

/// How many points of a sweep of `n` may be measured a second time and found as they
/// were: a quarter, at least two (a suite's time grows by at most about a quarter).
/// A revisit that finds the first visit off by more than the target does not count
/// against it ([`revisit_sweep`]), up to [`max_all_revisits`] in all.
fn max_revisits(n: usize) -> usize {
    if n < 3 {
        0
    } else {
        (n / 4).max(2)
    }
}

/// How many points of a sweep of `n` may be measured a second time in all, those whose
/// second visit moved them included: half.
fn max_all_revisits(n: usize) -> usize {
    if n < 3 {
        0
    } else {
        max_revisits(n).max(n / 2)
    }
}

/// Which of a point's two visits a revisit keeps ([`revisit_sweep`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The visit closer to what the neighbouring sizes say: under the median (or the
    /// mean) a disturbed visit may be off either way.
    Closer,
    /// The faster visit: under the minimum the two visits are more repetitions of the
    /// same point, whose statistic is the fastest of them all (other work on the machine
    /// only slows a repetition down). The neighbours' reference decides which point is
    /// measured again, not which visit stays: near the ends of a sweep, or with a
    /// disturbed neighbour, it can itself be off (run X, `tpool(2, seq(inc, inc))` at
    /// x = 4,096: 5.4 µs, then 3.7 µs, against a reference of 4.6 µs; the slow visit
    /// was kept).
    Faster,
}

impl Keep {
    /// The rule that matches the statistic the points are reduced with.
    pub fn for_measure(measure: Measure) -> Keep {
        if measure == Measure::Minimum {
            Keep::Faster
        } else {
            Keep::Closer
        }
    }
}

/// One point of a sweep measured a second time ([`revisit_sweep`]).
#[derive(Clone, Debug, PartialEq)]
struct Revisit {
    index: usize,
    /// Which visit of the point this was: 2 or 3 ([`MAX_VISITS`]).
    visit: usize,
    /// The value kept before it.
    first: f64,
    second: f64,
    /// What the neighbouring sizes say ([`neighbour_reference`]).
    reference: f64,
    kept_second: bool,
    keep: Keep,
}

impl Revisit {
    /// "`who` took A`unit`, P% off the R its neighbouring sizes say, and B (Q%) the second
    /// time; kept the first|second visit[, the faster]"; for a third visit "`who` still
    /// took A`unit` (the visit kept of the first two), …, and B (Q%) the third time; kept
    /// the earlier|third visit[, the faster]".
    fn describe(&self, who: &str, unit: &str) -> String {
        let off = |y: f64| 100.0 * (y / self.reference - 1.0);
        let third = self.visit >= 3;
        format!(
            "{who} {}took {}{unit}{}, {:+.0}% off the {} its neighbouring sizes say, and {} ({:+.0}%) the {} time; kept the {} visit",
            if third { "still " } else { "" },
            duration(self.first),
            if third { " (the visit kept of the first two)" } else { "" },
            off(self.first),
            duration(self.reference),
            duration(self.second),
            off(self.second),
            if third { "third" } else { "second" },
            kept_visit(self.kept_second, self.visit),
        ) + if self.keep == Keep::Faster {
            ", the faster"
        } else {
            ""
        }
    }
}

/// Which visit of a point a revisit kept, in words: "first" or "second" after the second
/// visit (`nth` 2), "earlier" or "third" after the third.
fn kept_visit(kept_later: bool, nth: usize) -> &'static str {
    match (kept_later, nth >= 3) {
        (true, true) => "third",
        (true, false) => "second",
        (false, true) => "earlier",
        (false, false) => "first",
    }
}

/// Measure the disturbed points of a sweep again: the point furthest from what its
/// neighbouring sizes say ([`disturbed_point`]), if beyond `target`, is measured a second
/// time by `again(i)` (which keeps that measurement and returns its statistic); the value
/// `keep` chooses ([`Keep`]) is kept in `ys`; then the next point, each once. Then, while
/// the budget lasts, a point still beyond `target` after its second visit is measured a
/// third time ([`MAX_VISITS`]), after every other point's second visit, so that some time
/// passes between the visits (run BL, `seq(inc, inc)` at x = 16,384: the program 48% and
/// 65% over its neighbours in two visits while its blocks read their usual speed, and
/// within 2% of them in a run of the same rows right after).
/// A revisit that keeps a second visit more than `target` from the first found a
/// disturbance, and the points next to it are now judged against a corrected
/// neighbour: it is free; the others count, at most [`max_revisits`], and all of them
/// at most [`max_all_revisits`]. (Run AU, `pipe(qsort, nop)`: x = 4,096 and 8,192
/// slow in the first visits made x = 2,048, 14% slow itself, look in line; both were
/// measured again and moved, and the budget of three was spent before x = 2,048 stood
/// out.) With `weights` (one per point; empty: all 1) a point's offset is weighed by
/// how much of the prediction at its size it can move (a block's share of its blocks
/// there). The caller swaps in the measurements whose `kept_second` is set.
fn revisit_sweep<E>(
    xs: &[f64],
    ys: &mut [f64],
    weights: &[f64],
    target: f64,
    keep: Keep,
    mut again: impl FnMut(usize) -> Result<f64, E>,
) -> Result<Vec<Revisit>, E> {
    // How many times each point has been measured again.
    let mut again_times = vec![0usize; ys.len()];
    let mut out = Vec::new();
    let mut counted = 0;
    for pass in 0..MAX_VISITS - 1 {
        // A pass offers only the points the passes before it all measured again.
        let mut done: Vec<bool> = again_times.iter().map(|&t| t != pass).collect();
        while counted < max_revisits(ys.len()) && out.len() < max_all_revisits(ys.len()) {
            let Some(i) = weighted_disturbed_point(xs, ys, weights, &done, target) else {
                break;
            };
            done[i] = true;
            again_times[i] += 1;
            let reference = neighbour_reference(xs, ys, i);
            let second = again(i)?;
            let kept_second = match keep {
                Keep::Closer => (second / reference - 1.0).abs() < (ys[i] / reference - 1.0).abs(),
                Keep::Faster => second < ys[i],
            };
            out.push(Revisit {
                index: i,
                visit: pass + 2,
                first: ys[i],
                second,
                reference,
                kept_second,
                keep,
            });
            let moved =
                kept_second && (second / ys[i] - 1.0).abs() * weight_at(weights, i) > target;
            if !moved {
                counted += 1;
            }
            if kept_second {
                ys[i] = second;
            }
        }
    }
    Ok(out)
}

/// What the other points of a measured sweep say the value at `i` should be: a power law
/// (a straight line in log–log, the shape of a time per element over a size sweep)
/// through the (up to) four other points nearest in position, fitted robustly — Siegel's
/// repeated median of their slopes, then the median of their intercepts — so that one
/// disturbed neighbour does not move it. Evaluated at `xs[i]`; `NaN` with fewer
/// than two usable other points.
pub fn neighbour_reference(xs: &[f64], ys: &[f64], i: usize) -> f64 {
    use perfcompose_core::measure::median;
    let n = xs.len().min(ys.len());
    if i >= n || xs[i].is_nan() || xs[i] <= 0.0 {
        return f64::NAN;
    }
    // The five positions around `i` (shifted inwards at the ends of the sweep).
    let lo = i.saturating_sub(2).min(n.saturating_sub(5));
    let near: Vec<(f64, f64)> = (lo..(lo + 5).min(n))
        .filter(|&j| j != i && xs[j] > 0.0 && ys[j] > 0.0 && ys[j].is_finite())
        .map(|j| (xs[j].ln(), ys[j].ln()))
        .collect();
    // Siegel's repeated median: per point the median of its slopes to the others, then
    // the median of those (one disturbed point of four moves neither).
    let slopes = near
        .iter()
        .map(|a| {
            let to_others: Vec<f64> = near
                .iter()
                .filter(|b| b.0 != a.0)
                .map(|b| (b.1 - a.1) / (b.0 - a.0))
                .collect();
            median(&to_others)
        })
        .filter(|s| s.is_finite())
        .collect::<Vec<f64>>();
    let slope = median(&slopes);
    if !slope.is_finite() {
        return f64::NAN;
    }
    let intercepts: Vec<f64> = near.iter().map(|(lx, ly)| ly - slope * lx).collect();
    let intercept = median(&intercepts);
    (intercept + slope * xs[i].ln()).exp()
}

/// The point of a measured sweep most at odds with its neighbours
/// ([`neighbour_reference`]), if it is off by more than `target` and not yet `done`. Only
/// the sweep's own measurements decide (a program's or a block's), never the prediction:
/// a point a burst of other work on the machine inflated (or a quiet moment deflated)
/// stands out from the sizes around it.
pub fn disturbed_point(xs: &[f64], ys: &[f64], done: &[bool], target: f64) -> Option<usize> {
    weighted_disturbed_point(xs, ys, &[], done, target)
}

/// [`disturbed_point`] with each point's offset times its weight (`weights[i]`, 1 where
/// missing) held against `target`: a block point that is a small share of what the
/// design's prediction adds up at its size cannot move the prediction by the target,
/// however far off it is.
pub fn weighted_disturbed_point(
    xs: &[f64],
    ys: &[f64],
    weights: &[f64],
    done: &[bool],
    target: f64,
) -> Option<usize> {
    (0..xs.len().min(ys.len()))
        .filter(|&i| !done.get(i).copied().unwrap_or(false) && ys[i] > 0.0)
        .filter_map(|i| {
            let off = (ys[i] / neighbour_reference(xs, ys, i) - 1.0).abs() * weight_at(weights, i);
            (off > target).then_some((i, off))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Point `i`'s weight in a revisited sweep ([`weighted_disturbed_point`]): 1 where
/// `weights` has none.
fn weight_at(weights: &[f64], i: usize) -> f64 {
    weights.get(i).copied().unwrap_or(1.0)
}

/// The statistic `measure` of a point's repetitions (`NaN` without any).
fn point_stat(p: &bench::PointStats, measure: Measure) -> f64 {
    perfcompose_core::measure::Summary::of(&p.values).map_or(f64::NAN, |s| s.get(measure))
}

/// How well a program reproduces: the largest relative difference, over the sizes both
/// measured, between two measurements of it (`|a − b| / ((a + b) / 2)` of the statistic
/// `measure`). A prediction that equals one of them is off by about this much against
/// the other, so a time error below it cannot be told from the machine's own variation.
/// `None` without a common size.
pub fn repeat_error(a: &Series, b: &Series, measure: Measure) -> Option<f64> {
    let stat = |p: &bench::PointStats| point_stat(p, measure);
    a.points
        .iter()
        .filter_map(|p| {
            let q = b.points.iter().find(|q| q.x == p.x)?;
            let (u, v) = (stat(p), stat(q));
            Some((u - v).abs() / ((u + v) / 2.0))
        })
        .reduce(|m, e| if e > m || e.is_nan() { e } else { m })
}

/// The block points measured with the `i`-th program point: `(block, point)` pairs. A
/// block swept over the program's sizes is measured at the same size; the points of one
/// swept over other sizes are spread round-robin over the program's points, so every
/// block point is measured once, next to some program point.
fn slots_at(i: usize, program: &[usize], blocks: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let p = program.len().max(1);
    blocks
        .iter()
        .enumerate()
        .flat_map(|(k, s)| {
            let js: Vec<usize> = if s == program {
                vec![i]
            } else {
                (0..s.len()).filter(|j| j % p == i).collect()
            };
            js.into_iter().map(move |j| (k, j))
        })
        .collect()
}

/// One series per component key with every repetition of all its series, point by point
/// (the suite-wide block model of the interleaved protocol).
fn pooled(series: &[Series]) -> Vec<Series> {
    let mut by_key: BTreeMap<&str, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for s in series {
        let points = by_key.entry(&s.name).or_default();
        for p in &s.points {
            points.entry(p.x).or_default().extend_from_slice(&p.values);
        }
    }
    by_key
        .into_iter()
        .map(|(name, points)| {
            Series::kernel(
                name,
                points
                    .into_iter()
                    .map(|(x, values)| bench::PointStats::of(x, values))
                    .collect(),
            )
        })
        .collect()
}

/// Where the measurements of `kernel` over `xs` may step ([`FitOptions::breaks`]): the
/// sizes at which its input fills each of `caches` (bytes), from
/// [`Kernel::input_bytes`] interpolated linearly between the sizes of the sweep around it
/// (extrapolated from the nearest two at its ends). The modeler expects the step between
/// half such a size and the size itself: a cache holds more than the block's data (the
/// stack, the queues, the other stage's data), and its last ways fill unevenly.
pub fn cache_breaks(kernel: &dyn Kernel, xs: &[u64], inputs: &Inputs, caches: &[u64]) -> Vec<f64> {
    let mut xs: Vec<u64> = xs.to_vec();
    xs.sort_unstable();
    xs.dedup();
    if xs.len() < 2 {
        return Vec::new();
    }
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .map(|&x| (x as f64, kernel.input_bytes(x as usize, inputs) as f64))
        .collect();
    let mut out = Vec::new();
    for &c in caches {
        let c = c as f64;
        let i = pts
            .windows(2)
            .position(|w| w[0].1 <= c && c < w[1].1)
            .unwrap_or(if c < pts[0].1 { 0 } else { pts.len() - 2 });
        let ((x0, b0), (x1, b1)) = (pts[i], pts[i + 1]);
        if b1 <= b0 {
            continue;
        }
        let x = x0 + (c - b0) * (x1 - x0) / (b1 - b0);
        if x.is_finite() && x > 0.0 {
            out.push(x);
        }
    }
    out
}

/// [`cache_breaks`] of the block `key` measured as `series`: its base kernel's input.
fn block_breaks(
    registry: &Registry,
    kernel: &str,
    image: ImageSize,
    series: &Series,
    opts: &Options,
) -> Vec<f64> {
    let Ok(k) = registry.get(kernel) else {
        return Vec::new();
    };
    let xs: Vec<u64> = series.points.iter().map(|p| p.x).collect();
    cache_breaks(k.as_ref(), &xs, &Inputs::with_image(image), &opts.caches)
}

/// [`cache_breaks`] of a whole program: its stream elements are its first block's
/// inputs (none for a MapReduce, whose size is a key count).
fn program_breaks(
    plan: &Plan,
    registry: &Registry,
    image: ImageSize,
    series: &Series,
    opts: &Options,
) -> Vec<f64> {
    if matches!(plan, Plan::MapReduce { .. }) {
        return Vec::new();
    }
    match plan.kernels().first() {
        Some(first) => block_breaks(registry, first, image, series, opts),
        None => Vec::new(),
    }
}

fn fit_series(series: &Series, opts: &Options, breaks: &[f64]) -> Result<Expr, Error> {
    let m = modeler(&opts.modeler)
        .ok_or_else(|| Error::Run(format!("unknown modeler `{}`", opts.modeler)))?;
    let points: Vec<Point> = series
        .points
        .iter()
        .map(|p| Point::new(vec![p.x as f64], p.values.clone()))
        .collect();
    let fit = m
        .fit(
            &[bench::PARAMETER.to_string()],
            &points,
            &FitOptions {
                measure: opts.measure,
                allow_negative: false,
                breaks: breaks.to_vec(),
            },
        )
        .map_err(|e| Error::Run(format!("cannot fit `{}`: {e}", series.name)))?;
    Ok(fit.model)
}

/// The modeler `validate` fits blocks and programs with when none is named: `segmented`,
/// which is the default modeler (`perfcompose`) unless a block's measurements step up
/// near a size where its input fills a cache of the machine ([`Options::caches`]) and no
/// single model follows them. Over the judged rows of the saved paper runs J to AG it
/// kept more rows within target than the default modeler alone (docs/validation.md,
/// "The segmented modeler as `validate`'s default").
pub const VALIDATE_MODELER: &str = "segmented";

/// Run a suite: measure and fit the blocks, then validate each configuration.
pub fn run_suite(
    suite: &Suite,
    registry: &Registry,
    opts: &Options,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Report, Error> {
    run_suite_with(suite, registry, opts, progress, &mut |_, _| {})
}

/// [`run_suite`], calling `on_row(row, measured)` as soon as each configuration is done,
/// so that a long suite stopped part way keeps what it measured: `measured` is every
/// measurement taken so far, named as [`Report::series`] names them (blocks as
/// `ID->KEY`, or `KEY` under the separate protocol, of kind `kernel`; programs as `ID`,
/// their halves as `ID [...]`), which is what [`reanalyze`] reads back.
pub fn run_suite_with(
    suite: &Suite,
    registry: &Registry,
    opts: &Options,
    progress: &mut dyn FnMut(Progress<'_>),
    on_row: &mut dyn FnMut(&Row, &[Series]),
) -> Result<Report, Error> {
    let load_before = load_average();
    // Check every configuration before measuring anything: a typo should fail in
    // milliseconds, not after the block measurements.
    let mut parsed = Vec::new();
    for c in &suite.cases {
        let (term, plan) = parse_plan("<term>", &c.term).map_err(|d| Error::Run(d.render()))?;
        plan.build(registry, opts.config.clone())?;
        parsed.push((term, plan));
    }
    // The host check around each configuration within the cores (its speed alone for one
    // thread; next to busy neighbours too for two or more); the last check taken, while
    // nothing has run since; every check so far (the host's usual speed).
    let gated = |plan: &Plan| opts.host_check && plan.threads() <= opts.cores;
    let check = |plan: &Plan| {
        let rounds = bench::neighbour::VALIDATE_ROUNDS;
        if plan.threads() >= 2 {
            bench::neighbour::check(registry, rounds)
        } else {
            bench::neighbour::check_idle(registry, rounds)
        }
    };
    let mut fresh_check: Option<bench::neighbour::NeighbourCheck> = None;
    let mut speeds: Vec<bench::neighbour::NeighbourCheck> = Vec::new();
    // The same for the cores' speed states: the last sample while nothing has run since,
    // and each core's fastest window so far.
    let mut fresh_states: Option<bench::states::CoreStates> = None;
    let mut fastest: Vec<f64> = Vec::new();
    let sample_states = |fastest: &mut Vec<f64>| -> Result<_, Error> {
        let s = bench::states::validate_sample(registry, suite.state_sample)?;
        if let Some(s) = &s {
            bench::states::keep_fastest(fastest, s);
        }
        Ok(s)
    };
    let mut first_check = None;
    let mut last_check = None;

    let mut series = Vec::new();
    let mut models: BTreeMap<String, Expr> = BTreeMap::new();
    let mut misses: BTreeMap<String, Vec<PointMiss>> = BTreeMap::new();
    // Every block's cache breaks, by component key (for the pooled models).
    let mut key_breaks: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    if opts.protocol == Protocol::Separate {
        for (key, kernel, image, state) in needed_kernels(suite, registry, opts.load_cores())? {
            let mut s = bench::bench_block(
                registry,
                &kernel,
                &kernel_sizes(suite, registry, &kernel)?,
                &Inputs::with_image(image),
                &suite.sampling,
                opts.memory_limit,
                bench::Conditions {
                    first_core: opts.pin_lone_tests,
                    ..state
                },
                progress,
            )?;
            s.name = key.clone();
            let breaks = block_breaks(registry, &kernel, image, &s, opts);
            let model = fit_series(&s, opts, &breaks)?;
            key_breaks.insert(key.clone(), breaks);
            misses.insert(key.clone(), fit_misses(&model, &s, opts));
            models.insert(key, model);
            series.push(s);
        }
    }
    // Interleaved: every configuration's own block measurements, named by component key.
    let mut block_series: Vec<(String, Series)> = Vec::new();
    // The same, by row index, and every row's configuration id (for `block_drift_notes`).
    let mut drift: Vec<(usize, Series)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    // Every measurement so far, under its saved name (for `on_row`).
    let mut measured_so_far: Vec<Series> = series.clone();

    let mut rows = Vec::new();
    // Every row's revisit notes (for a re-analysis under `--measure auto`).
    let mut revisits: Vec<Vec<String>> = Vec::new();
    for (c, (original, plan)) in suite.cases.iter().zip(&parsed) {
        let host_before = if gated(plan) {
            // A check without neighbours serves a design of one thread only.
            let fresh = fresh_check
                .take()
                .filter(|c| c.has_neighbours() || plan.threads() < 2);
            let gate = wait_for_quiet(
                fresh,
                || check(plan),
                bench::neighbour::typical(&speeds).as_ref(),
                opts.quiet_wait,
                QUIET_RECHECK,
                std::thread::sleep,
            )?;
            let mut gate = gate;
            if let Some(g) = &mut gate {
                if g.before.has_neighbours() {
                    first_check = first_check.or_else(|| Some(g.before.clone()));
                }
                speeds.extend(g.waited.iter().map(|(_, c)| c.clone()));
                speeds.push(g.before.clone());
                // Sampled last, right before the measurement (the last design's
                // after-sample when nothing has run or waited since).
                g.states[0] = match fresh_states.take().filter(|_| g.waited.is_none()) {
                    Some(s) => Some(s),
                    None => sample_states(&mut fastest)?,
                };
            }
            gate
        } else {
            None
        };
        fresh_check = None;
        fresh_states = None;
        let blocks_before = block_series.len();
        let mut halves = None;
        let mut revisit_notes = Vec::new();
        // The term composed: kernels renamed after their input state (see `input_plan`).
        let as_composed = input_plan(plan, registry, opts.load_cores());
        let renamed;
        let term = if as_composed == *plan {
            original
        } else {
            renamed = parse_plan("<term>", &as_composed.to_string())
                .map_err(|d| Error::Run(d.render()))?
                .0;
            &renamed
        };
        let mut block_phases = Phases::new();
        let (block_models, measured) = match opts.protocol {
            Protocol::Separate => {
                block_phases = phases_of(&series);
                let mut m = BTreeMap::new();
                for (key, ..) in case_needs(c, plan, registry, opts.load_cores())? {
                    let model = models
                        .get(&key)
                        .cloned()
                        .ok_or_else(|| Error::Run(format!("no measurement of block `{key}`")))?;
                    m.insert(key, model);
                }
                let mut measured = bench::bench_plan(
                    plan,
                    registry,
                    opts.config.clone(),
                    &c.sizes,
                    &Inputs::with_image(c.image),
                    &suite.sampling,
                    opts.memory_limit,
                    progress,
                )?;
                measured.name = case_id(c, plan);
                (m, measured)
            }
            Protocol::Interleaved | Protocol::Sandwich | Protocol::Rounds => {
                let needs = case_needs(c, plan, registry, opts.load_cores())?;
                let got = measure_interleaved(c, plan, &needs, suite, registry, opts, progress)?;
                revisit_notes = got.revisits;
                let mut m = BTreeMap::new();
                for (b, (_, kernel, image, _)) in got.blocks.into_iter().zip(&needs) {
                    let breaks = block_breaks(registry, kernel, *image, &b, opts);
                    let model = fit_series(&b, opts, &breaks)?;
                    key_breaks.insert(b.name.clone(), breaks);
                    misses.insert(b.name.clone(), fit_misses(&model, &b, opts));
                    m.insert(b.name.clone(), model);
                    drift.push((rows.len(), b.clone()));
                    block_phases.extend(phases_of(std::slice::from_ref(&b)));
                    block_series.push((case_id(c, plan), b));
                }
                halves = got.halves;
                (m, got.program)
            }
        };
        let repeat = halves
            .as_ref()
            .and_then(|[a, b]| repeat_error(a, b, opts.measure));
        let mut row = analyze_case(
            c,
            plan,
            term,
            &as_composed,
            block_models,
            &misses,
            &block_phases,
            &measured,
            repeat,
            registry,
            opts,
        )?;
        row.notes.extend(revisit_notes.iter().cloned());
        revisits.push(revisit_notes);
        if let Some(gate) = host_before {
            if let Some(after) = check(plan)? {
                let states_after = sample_states(&mut fastest)?;
                fresh_states.clone_from(&states_after);
                row.host = Some(HostAtRow {
                    after: after.clone(),
                    states: [gate.states[0].clone(), states_after],
                    fastest: fastest.clone(),
                    ..gate
                });
                note_host(&mut row, opts.protocol);
                speeds.push(after.clone());
                if after.has_neighbours() {
                    last_check = Some(after.clone());
                }
                fresh_check = Some(after);
            }
        }
        measured_so_far.extend(block_series[blocks_before..].iter().map(saved_block));
        measured_so_far.push(measured.clone());
        measured_so_far.extend(halves.iter().flatten().cloned());
        on_row(&row, &measured_so_far);
        series.push(measured);
        series.extend(halves.into_iter().flatten());
        ids.push(case_id(c, plan));
        rows.push(row);
    }
    // Every row's states judged against the whole suite's fastest windows.
    for host in rows.iter_mut().filter_map(|r| r.host.as_mut()) {
        host.fastest.clone_from(&fastest);
    }
    let auto = opts.auto_measure.then(|| AutoMeasure::of_rows(&rows));
    let mut measure = opts.measure;
    let mut chosen_models = None;
    match auto.as_ref().filter(|a| a.measure != opts.measure) {
        Some(a) => {
            let (again, components) = under_measure(
                suite,
                &measured_so_far,
                registry,
                opts,
                a.measure,
                &rows,
                &revisits,
            )?;
            rows = again;
            chosen_models = Some(components);
            measure = a.measure;
        }
        None => add_drift_notes(&mut rows, &ids, &drift),
    }
    add_state_notes(&mut rows, &fastest);
    if opts.protocol.per_configuration() {
        // The pooled models under `opts.measure`, unless `--measure auto` fitted them
        // under another statistic already.
        if chosen_models.is_none() {
            let all: Vec<Series> = block_series.iter().map(|(_, s)| s.clone()).collect();
            for s in pooled(&all) {
                let breaks = key_breaks.get(&s.name).cloned().unwrap_or_default();
                models.insert(s.name.clone(), fit_series(&s, opts, &breaks)?);
            }
        }
        // Saved per configuration, callpath `configuration->block`.
        let programs = std::mem::take(&mut series);
        series = block_series.iter().map(saved_block).collect();
        series.extend(programs);
    }
    let load = load_before.zip(load_average());
    let host_check = first_check.zip(last_check).map(|(a, b)| [a, b]);
    Ok(Report {
        suite: suite.name.clone(),
        cores: opts.cores,
        overhead_calibrated: opts.overhead.is_some(),
        protocol: opts.protocol,
        components: chosen_models.unwrap_or(models),
        rows,
        series,
        load,
        host_check,
        measure,
        auto_measure: auto,
    })
}

/// The rows of a finished live suite validated again from its own measurements
/// (`measured`, named as [`reanalyze`] reads them) under `measure` instead of
/// `opts.measure` (what `--measure auto` chose, [`AutoMeasure`]), with what only the live
/// run knows carried over from `live` (each row's host check, and its notes of
/// `revisits`), and the block models over the whole suite under `measure`. The points a
/// revisit measured twice keep the visit chosen under `opts.measure` while the suite ran.
fn under_measure(
    suite: &Suite,
    measured: &[Series],
    registry: &Registry,
    opts: &Options,
    measure: Measure,
    live: &[Row],
    revisits: &[Vec<String>],
) -> Result<(Vec<Row>, BTreeMap<String, Expr>), Error> {
    let as_chosen = Options {
        measure,
        ..opts.clone()
    };
    let again = reanalyze(suite, measured, registry, &as_chosen)?;
    if again.report.rows.len() != live.len() {
        return Err(Error::Run(format!(
            "--measure auto: the suite's measurements give {} rows under the {measure}, the run had {}",
            again.report.rows.len(),
            live.len()
        )));
    }
    let mut rows = again.report.rows;
    for ((row, old), notes) in rows.iter_mut().zip(live).zip(revisits) {
        row.host.clone_from(&old.host);
        row.notes.extend(notes.iter().cloned());
        note_host(row, opts.protocol);
    }
    Ok((rows, again.report.components))
}

/// How often [`wait_for_quiet`] checks the host again while it waits.
pub const QUIET_RECHECK: std::time::Duration = std::time::Duration::from_secs(15);

/// The host check before a configuration ([`Options::quiet_wait`]): `fresh` (a check
/// taken right before, with nothing run since) or a new `check`; while it reads a busy
/// neighbour over [`bench::neighbour::NEIGHBOUR_TOLERANCE`], or the check's works alone
/// more than [`bench::neighbour::SPEED_TOLERANCE`] slower than in `usual` (each work's
/// median idle time over the suite's checks so far), and less than `limit` has passed,
/// `sleep` for `every` and check again. The last check, as a [`HostAtRow`] whose
/// `after` is that check too until the configuration has run; `None` where the machine
/// cannot run the check.
pub fn wait_for_quiet(
    fresh: Option<bench::neighbour::NeighbourCheck>,
    mut check: impl FnMut() -> Result<Option<bench::neighbour::NeighbourCheck>, Error>,
    usual: Option<&bench::neighbour::NeighbourCheck>,
    limit: std::time::Duration,
    every: std::time::Duration,
    mut sleep: impl FnMut(std::time::Duration),
) -> Result<Option<HostAtRow>, Error> {
    let Some(first) = (match fresh {
        Some(c) => Some(c),
        None => check()?,
    }) else {
        return Ok(None);
    };
    let unsettled = |c: &bench::neighbour::NeighbourCheck| {
        c.disturbing() || usual.is_some_and(|u| c.slowdown(u) > bench::neighbour::SPEED_TOLERANCE)
    };
    let mut last = first.clone();
    let mut waited = std::time::Duration::ZERO;
    while unsettled(&last) && waited < limit {
        let pause = every.min(limit - waited);
        sleep(pause);
        waited += pause;
        match check()? {
            Some(c) => last = c,
            None => break,
        }
    }
    Ok(Some(HostAtRow {
        before: last.clone(),
        after: last,
        waited: (waited > std::time::Duration::ZERO).then_some((waited, first)),
        usual: usual.cloned(),
        states: [None, None],
        fastest: Vec::new(),
    }))
}

/// The notes of a row on the host check around it ([`Row::host`]): how long the suite
/// waited for the host before measuring, if it did; and on a row within the cores that
/// misses its target, whether the host's speed (the check's works alone) moved by more
/// than [`bench::neighbour::SPEED_TOLERANCE`] from right before its measurement to right
/// after it (its blocks and its program then met hosts of different speeds, as far as
/// `protocol` lets them, [`Protocol::speed_change_meant`]: run BA read `inc` 22–42% apart
/// a minute apart), and for two
/// threads or more, whether a busy core slowed a block on the other by more than
/// [`bench::neighbour::NEIGHBOUR_TOLERANCE`] at either end (such a design's threads run
/// next to each other by construction, and how much that costs moved with the minute:
/// its unit tests met it only while they ran) or the check read quiet at both ends
/// (then the miss is not a neighbour that was there at the ends).
fn note_host(row: &mut Row, protocol: Protocol) {
    let Some(host) = &row.host else {
        return;
    };
    let tolerance = bench::neighbour::NEIGHBOUR_TOLERANCE;
    let speed = bench::neighbour::SPEED_TOLERANCE;
    if let Some((waited, first)) = &host.waited {
        let slower = |c: &bench::neighbour::NeighbourCheck| {
            host.usual.as_ref().map_or(1.0, |u| c.slowdown(u))
        };
        row.notes.push(if host.before.has_neighbours() {
            format!(
                "waited {:.0} s for the host before measuring: a busy core slowed a block on the other by {:.2}x and the check's blocks alone took {:.2}x their usual time in this suite at first, {:.2}x and {:.2}x when the measurement began (tolerances {tolerance:.2}x and {speed:.2}x)",
                waited.as_secs_f64(),
                first.worst(),
                slower(first),
                host.before.worst(),
                host.slowdown(),
            )
        } else {
            format!(
                "waited {:.0} s for the host before measuring: the check's blocks alone took {:.2}x their usual time in this suite at first, {:.2}x when the measurement began (tolerance {speed:.2}x)",
                waited.as_secs_f64(),
                slower(first),
                host.slowdown(),
            )
        });
    }
    if !row.within_cores || row.passed() != Some(false) {
        return;
    }
    let change = host.speed_change();
    row.notes.push(if host.speed_moved() {
        format!(
            "the host's speed moved across this configuration: the check's blocks alone took {change:.2}x as long right after it as right before (over {speed:.2}x either way): {}",
            protocol.speed_change_meant()
        )
    } else {
        format!(
            "the host's speed held across this configuration ({change:.2}x from right before to right after it, tolerance {speed:.2}x)"
        )
    });
    if row.threads < 2 || !host.before.has_neighbours() {
        return;
    }
    let (before, after) = (host.before.worst(), host.after.worst());
    row.notes.push(if host.disturbing() {
        format!(
            "in the host check a busy core slowed a block on the other by up to {before:.2}x right before this configuration and {after:.2}x right after it (over {tolerance:.2}x, the time of a design of {} threads depends on the minute it runs: its unit tests met such a neighbour only while they ran)",
            row.threads
        )
    } else {
        format!(
            "the host check read quiet right before this configuration ({before:.2}x) and right after it ({after:.2}x, tolerance {tolerance:.2}x): the miss is not a busy neighbour present at either end"
        )
    });
}

/// A block measured for one configuration, under its saved name: callpath
/// `configuration->block`.
fn saved_block((configuration, s): &(String, Series)) -> Series {
    Series {
        name: format!("{configuration}->{}", s.name),
        ..s.clone()
    }
}

/// What [`reanalyze`] found in the saved measurements.
#[derive(Debug)]
pub struct Reanalysis {
    pub report: Report,
    /// Configurations of the suite with no saved program measurement (their ids).
    pub missing: Vec<String>,
}

/// Validate a suite again from saved measurements (`validate --save DIR` writes them:
/// the program of configuration `ID` as callpath `ID`, its blocks as `ID->KEY` — or
/// `KEY` under the separate protocol —, see [`case_id`]) without running anything: the blocks and programs are fitted with
/// `opts.modeler`, composed and compared as in [`run_suite`]. This compares modelers or
/// overhead calibrations on identical data, side by side. Configurations whose program
/// is not in `saved` are skipped and listed; a configuration whose program is there but
/// a block is not is an error.
pub fn reanalyze(
    suite: &Suite,
    saved: &[Series],
    registry: &Registry,
    opts: &Options,
) -> Result<Reanalysis, Error> {
    let by_name: BTreeMap<&str, &Series> = saved.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut rows = Vec::new();
    let mut used = Vec::new();
    let mut missing = Vec::new();
    let mut blocks_used: Vec<Series> = Vec::new();
    let mut drift: Vec<(usize, Series)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut key_breaks: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for c in &suite.cases {
        let (original, plan) = parse_plan("<term>", &c.term).map_err(|d| Error::Run(d.render()))?;
        let id = case_id(c, &plan);
        let Some(measured) = by_name.get(id.as_str()) else {
            missing.push(id);
            continue;
        };
        let as_composed = input_plan(&plan, registry, opts.load_cores());
        let term = if as_composed == plan {
            original
        } else {
            parse_plan("<term>", &as_composed.to_string())
                .map_err(|d| Error::Run(d.render()))?
                .0
        };
        let mut block_models = BTreeMap::new();
        let mut misses = BTreeMap::new();
        let mut block_phases = Phases::new();
        let mut alone = Vec::new();
        let mut beside_itself = Vec::new();
        for (key, kernel, image, _) in case_needs(c, &plan, registry, opts.load_cores())? {
            let name = format!("{id}->{key}");
            // The interleaved protocol saves `ID->KEY`, the separate one `KEY`.
            // Measurements saved before the blocks of a pool's seq were timed in that seq
            // (`_seqI_of_…`) have the block timed next to siblings running it alone, and
            // those saved before blocks were timed loaded (`_parN`) the block timed
            // alone: use them, and say so.
            let (unreplicated, unloaded) = (unreplicated_key(&key), unloaded_key(&key));
            let saved_as = |k: &str| {
                by_name
                    .get(format!("{id}->{k}").as_str())
                    .or_else(|| by_name.get(k))
            };
            let block = by_name
                .get(name.as_str())
                .or_else(|| by_name.get(key.as_str()))
                .or_else(|| {
                    let b = saved_as(unreplicated.as_deref()?)?;
                    beside_itself.push(key.clone());
                    Some(b)
                })
                .or_else(|| {
                    let b = saved_as(unloaded.as_deref()?)?;
                    alone.push(key.clone());
                    Some(b)
                })
                .ok_or_else(|| {
                    Error::Run(format!(
                        "the saved measurements have configuration `{id}` but not its block `{key}` (callpath `{name}`)"
                    ))
                })?;
            let mut b = (*block).clone();
            b.name = key.clone();
            let breaks = block_breaks(registry, &kernel, image, &b, opts);
            let model = fit_series(&b, opts, &breaks)?;
            key_breaks.insert(key.clone(), breaks);
            misses.insert(key.clone(), fit_misses(&model, &b, opts));
            block_models.insert(key, model);
            block_phases.extend(phases_of(std::slice::from_ref(&b)));
            drift.push((rows.len(), b));
            blocks_used.push(Series {
                kind: "kernel",
                ..(*block).clone()
            });
        }
        // Saved by the sandwich protocol (the program before and after its blocks) or the
        // rounds protocol (its first and second half of the rounds).
        let mut as_run = opts.clone();
        let mut halves = [None, None];
        for protocol in [Protocol::Sandwich, Protocol::Rounds] {
            let suffix = protocol.halves().expect("both measure the program twice");
            let found = suffix.map(|h| by_name.get(format!("{id}{h}").as_str()).copied());
            if found.iter().all(Option::is_some) {
                halves = found;
                as_run.protocol = protocol;
            }
        }
        let repeat = match halves {
            [Some(a), Some(b)] => repeat_error(a, b, opts.measure),
            _ => None,
        };
        let mut row = analyze_case(
            c,
            &plan,
            &term,
            &as_composed,
            block_models,
            &misses,
            &block_phases,
            measured,
            repeat,
            registry,
            &as_run,
        )?;
        if !alone.is_empty() {
            row.notes.push(format!(
                "re-analysed from measurements without loaded blocks: {} composed from the block timed alone",
                alone.join(", ")
            ));
        }
        if !beside_itself.is_empty() {
            row.notes.push(format!(
                "re-analysed from measurements without blocks timed in the pool's seq: {} composed from the block timed next to siblings running it alone",
                beside_itself.join(", ")
            ));
        }
        ids.push(id);
        rows.push(row);
        used.push((*measured).clone());
        used.extend(halves.into_iter().flatten().cloned());
    }
    add_drift_notes(&mut rows, &ids, &drift);
    if rows.is_empty() {
        return Err(Error::Run(format!(
            "the saved measurements have none of the {} configurations of suite `{}`",
            suite.cases.len(),
            suite.name
        )));
    }
    let mut models = BTreeMap::new();
    let keyed: Vec<Series> = blocks_used
        .iter()
        .map(|s| {
            let mut s = s.clone();
            if let Some((_, key)) = s.name.split_once("->") {
                s.name = key.to_string();
            }
            s
        })
        .collect();
    for s in pooled(&keyed) {
        let breaks = key_breaks.get(&s.name).cloned().unwrap_or_default();
        models.insert(s.name.clone(), fit_series(&s, opts, &breaks)?);
    }
    blocks_used.extend(used);
    Ok(Reanalysis {
        report: Report {
            suite: suite.name.clone(),
            cores: opts.cores,
            overhead_calibrated: opts.overhead.is_some(),
            protocol: opts.protocol,
            components: models,
            rows,
            series: blocks_used,
            load: None,
            host_check: None,
            measure: opts.measure,
            auto_measure: None,
        },
        missing,
    })
}

/// `KEY` without its `_parN` suffix (a block timed while `N - 1` siblings ran it) or its
/// `_stageI_of_…` suffix (a block timed as a pipeline stage), if it has one:
/// `qsort_warm_par2` → `qsort_warm`, `inc_remote_stage2_of_qsort_then_inc` → `inc_remote`.
fn unloaded_key(key: &str) -> Option<String> {
    let (base, c) = bench::Conditions::parse(key);
    (c.siblings > 0 || c.stage.is_some() || c.replica.is_some())
        .then(|| format!("{base}{}", c.alone().suffix()))
}

/// `KEY` without its `_seqI_of_…` suffix (a block of a pool's `seq` timed in that seq),
/// if it has one: the block timed next to siblings running it alone
/// (`inc_warm_par2_seq2_of_inc_then_inc` → `inc_warm_par2`).
fn unreplicated_key(key: &str) -> Option<String> {
    let (base, mut c) = bench::Conditions::parse(key);
    c.replica.take()?;
    Some(format!("{base}{}", c.suffix()))
}

/// Saved measurements as series: callpaths with `->` are blocks, the others programs
/// ([`reanalyze`] tells a separate protocol's blocks, saved as `KEY`, by their use).
/// The files do not record whether a point reached its confidence target; every point
/// counts as converged.
pub fn series_from_experiment(exp: &perfcompose_core::measure::Experiment) -> Vec<Series> {
    exp.series
        .iter()
        .map(|(key, points)| {
            let stats = points
                .iter()
                .map(|p| {
                    let x = p.coordinate.first().copied().unwrap_or(0.0);
                    let mut s = bench::PointStats::of(x.round().max(0.0) as u64, p.values.clone());
                    s.converged = true;
                    s
                })
                .collect();
            if key.callpath.contains("->") {
                Series::kernel(key.callpath.clone(), stats)
            } else {
                Series::program(key.callpath.clone(), stats)
            }
        })
        .collect()
}

/// The phases of the blocks' unit tests ([`bench::PointStats::phases`]) and their
/// stages' mean calls per repetition ([`bench::PointStats::stages`]) by component key, for
/// every size where some were recorded.
pub type Phases = BTreeMap<String, PhasesOf>;

/// One block's phases per size ([`Phases`]).
pub type PhasesOf = Vec<PhasesAt>;

/// What a stage's unit test recorded at one size besides its times; also the entries of
/// a saved run's `phases.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhasesAt {
    pub x: u64,
    /// [`bench::PointStats::phases`] (may be empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<f64>,
    /// [`bench::PointStats::stages`] (may be empty; runs saved before 2026-11-28 have
    /// none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Vec<f64>>,
}

/// The phases recorded in `series` (block series named by component key).
pub fn phases_of(series: &[Series]) -> Phases {
    series
        .iter()
        .filter_map(|s| {
            let points: PhasesOf = s
                .points
                .iter()
                .filter(|p| !p.phases.is_empty() || !p.stages.is_empty())
                .map(|p| PhasesAt {
                    x: p.x,
                    phases: p.phases.clone(),
                    stages: p.stages.clone(),
                })
                .collect();
            (!points.is_empty()).then(|| (s.name.clone(), points))
        })
        .collect()
}

/// `overhead` with `phases` added (an overhead of nothing else when there is none).
fn with_phases(overhead: Option<Overhead>, phases: Vec<PhaseLoss>) -> Option<Overhead> {
    if phases.is_empty() {
        return overhead;
    }
    let mut o = overhead.unwrap_or_else(|| Overhead::constant(0.0, "none"));
    o.phases = phases;
    Some(o)
}

/// What each pipeline of single blocks of `as_composed` loses to its stages' phases
/// ([`PhaseLoss`], with [`Options::phases`]): per size all its stages' unit tests
/// recorded phases at, the hinges of [`bench::tandem::phase_hinges`]; each hinge's
/// weight a constant per size, stepping at the geometric middles between the sizes.
/// Pipelines with a stage that is a pattern, or without a stage's unit test, have none.
fn phase_losses(
    as_composed: &Plan,
    c: &Case,
    phases: &Phases,
    registry: &Registry,
    opts: &Options,
) -> Result<Vec<PhaseLoss>, Error> {
    if !opts.phases || phases.is_empty() {
        return Ok(Vec::new());
    }
    // The stages' phases of each pipeline of single blocks (component keys looked up
    // first: `each_pipeline` takes no fallible closure).
    let mut pipelines: Vec<(String, usize, Vec<PhasesOf>)> = Vec::new();
    let mut keys: Vec<(String, usize, Vec<String>)> = Vec::new();
    crate::overhead::each_pipeline(as_composed, opts.cores, &mut |pipe, index, _, stages| {
        let names: Option<Vec<String>> = stages
            .iter()
            .map(|s| match s {
                Plan::Kernel(k) => Some(k.clone()),
                _ => None,
            })
            .collect();
        if let Some(names) = names.filter(|n| n.len() >= 2) {
            keys.push((pipe.to_string(), index, names));
        }
    });
    for (what, index, names) in keys {
        let mut stages = Vec::with_capacity(names.len());
        for k in &names {
            let (key, ..) = block_of(k, as_composed, c.image, registry, opts.load_cores())?;
            match phases.get(&key) {
                Some(p) => stages.push(p.clone()),
                None => break,
            }
        }
        if stages.len() == names.len() {
            pipelines.push((what, index, stages));
        }
    }
    let mut out = Vec::new();
    for (what, pipeline, stages) in pipelines {
        // Per size: the hinges where every stage has phases.
        let mut sizes: Vec<u64> = stages.iter().flatten().map(|p| p.x).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let mut at: Vec<(u64, Vec<(f64, f64)>)> = Vec::new();
        for x in sizes {
            let here: Vec<&PhasesAt> = stages
                .iter()
                .filter_map(|s| s.iter().find(|p| p.x == x))
                .collect();
            let all: Vec<&[f64]> = here
                .iter()
                .map(|p| &p.phases[..])
                .filter(|p| !p.is_empty())
                .collect();
            let hinges = bench::tandem::phase_hinges(&all);
            if all.len() == stages.len() && !hinges.is_empty() {
                at.push((x, hinges));
            }
        }
        let hinges = piecewise_hinges(&at);
        if !hinges.is_empty() {
            out.push(PhaseLoss {
                what,
                pipeline,
                hinges,
            });
        }
    }
    Ok(out)
}

/// A constant per size of `at` (ascending sizes), stepping at the geometric middles
/// between them; `None` when there are none or every one is 0. Four significant digits:
/// a shorter model to print.
fn piecewise_per_size(at: &[(u64, f64)]) -> Option<Expr> {
    let pieces: Vec<Expr> = at
        .iter()
        .map(|&(_, w)| Expr::constant(format_significant(w, 4).parse().unwrap_or(w)))
        .collect();
    if pieces.iter().all(|p| *p == Expr::constant(0.0)) {
        return None;
    }
    let breaks: Vec<f64> = at
        .windows(2)
        .map(|w| (w[0].0 as f64 * w[1].0 as f64).sqrt())
        .collect();
    Expr::piecewise(Expr::param(bench::PARAMETER), breaks, pieces)
}

/// The hinges of [`phase_losses`] from the hinges at each size of `at` (ascending, the
/// same ratios at every size): each ratio's weight [`piecewise_per_size`], the ratios
/// whose weight is 0 everywhere left out.
fn piecewise_hinges(at: &[(u64, Vec<(f64, f64)>)]) -> Vec<(f64, Expr)> {
    let Some((_, first)) = at.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .filter_map(|(i, &(ratio, _))| {
            let weights: Vec<(u64, f64)> = at.iter().map(|(x, h)| (*x, h[i].1)).collect();
            piecewise_per_size(&weights).map(|w| (ratio, w))
        })
        .collect()
}

/// Composition with thread counts capped at the cores.
fn compose_options(opts: &Options) -> ComposeOptions {
    ComposeOptions {
        cores: Some(opts.cores as u64),
    }
}

/// `term` composed from `comps`, thread counts capped at the cores.
fn compose_capped(
    term: &Term,
    comps: &Components,
    opts: &Options,
) -> Result<perfcompose_core::compose::Composition, Error> {
    compose(term, comps, compose_options(opts)).map_err(|d| Error::Run(d.render()))
}

/// The largest relative error, over the program's sizes, of the prediction composed
/// from the blocks' measured statistics at each size (each block a constant: its value
/// there), overhead included. `None` for a MapReduce (its blocks run at other sizes than
/// the job's: the map on one image, the reduction on `d(x)` values) and when some block
/// was not measured at every program size.
#[allow(clippy::too_many_arguments)]
fn compose_measured_blocks(
    term: &Term,
    as_composed: &Plan,
    overhead: Option<&Overhead>,
    c: &Case,
    block_misses: &BTreeMap<String, Vec<PointMiss>>,
    measured: &Series,
    registry: &Registry,
    opts: &Options,
) -> Result<Option<f64>, Error> {
    if !reduces_of_mapreduce(as_composed).is_empty() {
        return Ok(None);
    }
    let mut worst: f64 = 0.0;
    for p in &measured.points {
        let Some(program) =
            perfcompose_core::measure::Summary::of(&p.values).map(|s| s.get(opts.measure))
        else {
            continue;
        };
        let mut comps = Components::default();
        for k in as_composed.kernels() {
            let (key, ..) = block_of(&k, as_composed, c.image, registry, opts.load_cores())?;
            let Some(v) = block_misses
                .get(&key)
                .and_then(|ms| ms.iter().find(|m| m.x == p.x))
                .map(|m| m.value)
            else {
                return Ok(None);
            };
            comps = comps.with(Component {
                name: k.clone(),
                model: Expr::constant(v),
                description: None,
                source: ComponentSource::Model {
                    text: v.to_string(),
                    at: format!("`{key}` measured at x = {}", p.x),
                },
            });
        }
        let composed = compose_capped(term, &comps, opts)?;
        let model = match overhead {
            Some(o) => o.apply_composed(&composed, term, &comps, compose_options(opts)),
            None => composed.model,
        };
        let Ok(predicted) = model.eval_at(&[(bench::PARAMETER, p.x as f64)]) else {
            return Ok(None);
        };
        worst = worst.max((predicted - program).abs() / program);
    }
    Ok(Some(worst))
}

/// Compose a configuration's prediction from its fitted block models and compare it
/// with the whole program's measurements (`term` is the configuration as composed, its
/// kernels renamed after their input state; see [`input_plan`]).
#[allow(clippy::too_many_arguments)]
fn analyze_case(
    c: &Case,
    plan: &Plan,
    term: &Term,
    as_composed: &Plan,
    block_models: BTreeMap<String, Expr>,
    block_misses: &BTreeMap<String, Vec<PointMiss>>,
    block_phases: &Phases,
    measured: &Series,
    repeat_error: Option<f64>,
    registry: &Registry,
    opts: &Options,
) -> Result<Row, Error> {
    let mut comps = Components::default();
    for k in as_composed.kernels() {
        let (key, ..) = block_of(&k, as_composed, c.image, registry, opts.load_cores())?;
        let model = block_models
            .get(&key)
            .cloned()
            .ok_or_else(|| Error::Run(format!("no model of block `{key}`")))?;
        comps = comps.with(Component {
            name: k.clone(),
            model: model.clone(),
            description: None,
            source: ComponentSource::Model {
                text: model.to_string(),
                at: format!("fitted to `{key}` measured on this machine"),
            },
        });
    }
    let composed = compose_capped(term, &comps, opts)?;
    let overhead = with_phases(
        opts.overhead
            .as_ref()
            .map(|o| o.for_statistic(opts.measure).overhead(plan, "calibration")),
        phase_losses(as_composed, c, block_phases, registry, opts)?,
    );
    let overhead_ns = overhead.as_ref().map_or(0.0, |o| o.ns_per_element);
    let modular = match &overhead {
        Some(o) => o.apply_composed(&composed, term, &comps, compose_options(opts)),
        None => composed.model.clone(),
    };
    let from_blocks = compose_measured_blocks(
        term,
        as_composed,
        overhead.as_ref(),
        c,
        block_misses,
        measured,
        registry,
        opts,
    )?;
    let mut notes: Vec<String> = composed.notes.iter().map(|n| n.text.clone()).collect();
    if *as_composed != *plan {
        notes.push(format!(
            "composed as `{as_composed}`: a `_warm` block was timed with its input in its core's \
             cache (as it runs after another block on the same thread), a `_remote` one \
             with its input just written by another thread (as it runs after another \
             stage), a `_parN` one while N - 1 other threads ran it too (as the workers \
             of a task pool or a MapReduce do), a `_stageI_of_A_then_B…` one as the I-th \
             stage of a pipeline of those blocks, the others running next to it, a \
             `_seqI_of_A_then_B…` one as the I-th block of a pool's seq of those blocks, \
             every thread running the whole seq"
        ));
    }
    for r in reduces_of_mapreduce(plan) {
        let (key, ..) = block_of(r, plan, c.image, registry, opts.load_cores())?;
        let per_key = registry
            .get(r)
            .is_ok_and(|k| matches!(k.op(), crate::kernel::Op::ReducePerKey(_)));
        notes.push(format!(
            "the reduction `{r}` was timed warm (`{key}`): {}{}",
            if per_key {
                "gathering each key's values from x map outputs into one reused vector and \
                 reducing them, key after key, as a job's thread does (runs saved before \
                 run AI, 2026-11-26, timed one call per key on a vector of its own)"
            } else {
                "in a job it runs on what its thread just produced"
            },
            if key.contains("_par") {
                "; `_parN`: with N - 1 other threads running it, as the job's threads do"
            } else {
                ""
            }
        ));
    }

    let monolithic = fit_series(
        measured,
        opts,
        &program_breaks(plan, registry, c.image, measured, opts),
    )?;
    let eval = |e: &Expr, x: f64| e.eval_at(&[("x", x)]).unwrap_or(f64::NAN);
    let points: Vec<Compared> = measured
        .points
        .iter()
        .map(|p| Compared {
            x: p.x,
            measured: perfcompose_core::measure::Summary::of(&p.values)
                .map_or(f64::NAN, |s| s.get(opts.measure)),
            cv: p.cv,
            predicted: eval(&modular, p.x as f64),
        })
        .collect();
    let time_error = points
        .iter()
        .map(|p| (p.predicted - p.measured).abs() / p.measured)
        .fold(0.0, f64::max);
    let x_max = c.sizes.iter().copied().max().unwrap_or(1) as f64;
    let x_min = c.sizes.iter().copied().min().unwrap_or(1) as f64;
    let coefficient_error = coefficient_error(&modular, &monolithic, x_min, x_max);
    let threads = plan.threads();
    let within_cores = threads <= opts.cores;
    let target = within_cores.then(|| row_target(plan));
    if !within_cores {
        notes.push(format!(
            "runs {threads} threads on {} cores: measured as written, predicted with thread counts capped at the cores",
            opts.cores
        ));
    }
    let floor = fit_floor(
        &block_models
            .keys()
            .filter_map(|k| block_misses.get(k).map(|m| (k.clone(), m.clone())))
            .collect(),
        &modular,
        &c.sizes,
    );
    let mut row = Row {
        group: c.group.clone(),
        configuration: c.term.clone(),
        threads,
        within_cores,
        modular,
        monolithic,
        coefficient_error,
        time_error,
        overhead_ns,
        target,
        notes,
        points,
        fit_floor: floor,
        error_from_measured_blocks: from_blocks,
        components: block_models,
        repeat_error,
        host: None,
    };
    if row.passed() == Some(false) || coefficient_error.is_nan() {
        let reasons = miss_reasons(&row, measured, opts);
        row.notes.extend(reasons);
    }
    Ok(row)
}

/// Relative error of the modular model's leading coefficient against the whole
/// program's, as the growth of the two models over the measured sizes:
/// `|ΔM_mod − ΔM_mono| / |ΔM_mono|` with `ΔM = M(x_max) − M(x_min)`.
///
/// For two models of the seed's form `a + c·m(x)` with the same `m` this is exactly the
/// relative error of the coefficients `c` (seed 000's Table 2 metric; constants drop out).
/// Fitted models are often not of that form: a modeler that may use two terms splits the
/// growth of a cache-sensitive block between, say, `9.4·x` and `2.2·x·log2(x)` in one fit
/// and puts it all in `2.75·x·log2(x)` in another fit of the same data, or picks
/// `x^(5/4)` where the other picked `x·log2(x)` (on 8–13 noisy points they fit alike).
/// Comparing the coefficients of one term then measures how the fits split the growth,
/// not the prediction (a design predicted within 7.5% at every measured size showed a
/// 43% "coefficient error" that way). The growth over the measured range is what every
/// such split agrees on, and it is what the leading coefficient stands for. `NaN` when
/// the whole program's model does not grow.
pub fn coefficient_error(modular: &Expr, monolithic: &Expr, x_min: f64, x_max: f64) -> f64 {
    let at = |e: &Expr, x: f64| e.eval_at(&[("x", x)]).unwrap_or(f64::NAN);
    let grows = |e: &Expr| at(e, x_max) - at(e, x_min);
    let (gm, gw) = (grows(modular), grows(monolithic));
    if !(gm.is_finite() && gw.is_finite()) || gw == 0.0 || x_max <= x_min {
        return f64::NAN;
    }
    (gm - gw).abs() / gw.abs()
}

/// Why a row missed its target, as far as the measurements tell.
fn miss_reasons(row: &Row, measured: &Series, opts: &Options) -> Vec<String> {
    let mut r = Vec::new();
    if row.coefficient_error.is_nan() {
        r.push("the leading coefficients cannot be compared (the models do not grow over the measured sizes)".into());
    }
    let worst_cv = measured.points.iter().map(|p| p.cv).fold(0.0, f64::max);
    if worst_cv > NOISY_CV {
        r.push(format!(
            "noisy measurements: CV up to {:.0}% (other work on the machine, or a design whose speed varies from run to run)",
            100.0 * worst_cv
        ));
    }
    if measured.points.iter().any(|p| !p.converged) {
        r.push("some points did not reach the confidence target".into());
    }
    if let (Some(a), Some(b)) = (row.modular.leading(), row.monolithic.leading()) {
        let same = a.terms().map(|(_, m)| m.clone()).collect::<Vec<_>>()
            == b.terms().map(|(_, m)| m.clone()).collect::<Vec<_>>();
        if !same {
            r.push(format!(
                "the fitted whole-program model has another leading term ({}) than the composed one ({})",
                Expr::poly(b).rounded(4),
                Expr::poly(a).rounded(4)
            ));
        }
    }
    if let Some(e) = row.error_from_measured_blocks {
        r.push(format!(
            "composed from the blocks' measurements ({}) instead of their models, the prediction is {:.1}% off at worst",
            opts.measure,
            100.0 * e
        ));
    }
    if let Some(e) = row.repeat_error {
        let beyond = row.target.is_some_and(|t| e > t);
        r.push(format!(
            "the program measured {} differs by up to {:.1}%{}",
            if opts.protocol == Protocol::Rounds {
                "in the first and in the second half of the rounds"
            } else {
                "right before and right after its blocks"
            },
            100.0 * e,
            if beyond {
                ": more than the target, so this machine does not reproduce the program closely enough to check the prediction to the target"
            } else {
                ""
            }
        ));
    }
    if let Some(f) = &row.fit_floor {
        if f.share > FIT_FLOOR_NOTE {
            r.push(format!(
                "the fit of block `{}` misses its own measurement at x={} by {:.1}% ({:.1}% of the prediction there)",
                f.block,
                f.x,
                100.0 * f.relative,
                100.0 * f.share
            ));
        }
    }
    // Worst point tells whether the miss is at small x (overhead) or large x (contention).
    if let Some(worst) = row.points.iter().max_by(|p, q| {
        let e = |c: &Compared| (c.predicted - c.measured).abs() / c.measured;
        e(p).total_cmp(&e(q))
    }) {
        let under = worst.predicted < worst.measured;
        r.push(format!(
            "largest time error at x={} (prediction {} than measured{})",
            worst.x,
            if under { "lower" } else { "higher" },
            if under && opts.overhead.is_none() && worst.x == row.points[0].x {
                "; pattern overhead is not calibrated: `perfcompose calibrate overhead`"
            } else {
                ""
            }
        ));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_breaks_are_where_a_blocks_input_fills_each_cache() {
        let reg = Registry::builtin();
        let grid: Vec<u64> = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 98304, 131072]
            .into_iter()
            .collect();
        // `inc`'s input is 4 bytes per element: 48 KiB at 12,288, inside the sweep;
        // 4 MiB at 1,048,576, beyond it (extrapolated from the last two sizes).
        let inc = reg.get("inc").unwrap();
        let b = cache_breaks(
            inc.as_ref(),
            &grid,
            &Inputs::default(),
            &[48 << 10, 4 << 20],
        );
        assert_eq!(b.len(), 2);
        assert!((b[0] - 12_288.0).abs() < 1e-6, "{b:?}");
        assert!((b[1] - 1_048_576.0).abs() < 1e-3, "{b:?}");
        // One size or none: nothing to say. Sizes in any order, repeated: the same.
        assert!(cache_breaks(inc.as_ref(), &[4096], &Inputs::default(), &[48 << 10]).is_empty());
        let shuffled = [8192, 1024, 8192, 131072, 2048];
        let again = cache_breaks(inc.as_ref(), &shuffled, &Inputs::default(), &[48 << 10]);
        assert!((again[0] - 12_288.0).abs() < 1e-6, "{again:?}");
        // A whole program of `inc` blocks streams `inc` inputs; a MapReduce's size is a
        // key count, so it has none.
        let opts = Options {
            caches: vec![48 << 10],
            ..Options::default()
        };
        let program = Series::program(
            "seq(inc, nop)",
            grid.iter()
                .map(|&x| bench::PointStats::of(x, vec![x as f64]))
                .collect(),
        );
        let (_, plan) = parse_plan("<term>", "seq(inc, nop)").unwrap();
        let b = program_breaks(&plan, &reg, ImageSize::default(), &program, &opts);
        assert!((b[0] - 12_288.0).abs() < 1e-6, "{b:?}");
        let (_, mr) = parse_plan(
            "<term>",
            "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)",
        )
        .unwrap();
        assert!(program_breaks(&mr, &reg, ImageSize::default(), &program, &opts).is_empty());
    }

    #[test]
    fn a_block_timed_apart_in_two_rows_is_flagged_in_both() {
        let series = |name: &str, medians: &[(u64, f64)]| {
            Series::kernel(
                name,
                medians
                    .iter()
                    .map(|&(x, m)| bench::PointStats::of(x, vec![m; 3]))
                    .collect(),
            )
        };
        let ids: Vec<String> = ["pairwise", "per_key", "other"].map(String::from).to_vec();
        let blocks = vec![
            (0, series("map@large_par2", &[(1, 6.0e6), (2, 12.0e6)])),
            (0, series("reduce_pairwise_warm_par2", &[(1, 500.0)])),
            (1, series("map@large_par2", &[(1, 10.7e6), (2, 12.5e6)])),
            (1, series("reduce_per_key_warm_par2", &[(1, 900.0)])),
            // Same key, within the target: nothing to say.
            (2, series("reduce_pairwise_warm_par2", &[(1, 540.0)])),
        ];
        let notes = block_drift_notes(&ids, &[Some(0.15), Some(0.15), Some(0.10)], &blocks);
        assert_eq!(notes[0].len(), 1, "{:?}", notes[0]);
        assert!(notes[0][0].contains("`map@large_par2` timed 6.00 ms at x = 1 here and 10.70 ms in `per_key` (1.78x apart)"), "{}", notes[0][0]);
        assert_eq!(notes[1].len(), 1);
        assert!(
            notes[1][0].contains("10.70 ms at x = 1 here and 6.00 ms in `pairwise`"),
            "{}",
            notes[1][0]
        );
        // 540 against 500 ns is 8% apart: within row 2's 10% and row 0's 15%.
        assert!(notes[2].is_empty(), "{:?}", notes[2]);
        // Far apart in the medians but not beyond the repetitions' spread: not flagged.
        let spread = |m: f64| {
            Series::kernel(
                "k",
                vec![bench::PointStats::of(
                    1,
                    vec![m * 0.5, m * 0.8, m, m * 1.2, m * 2.0, m, m * 0.7, m * 1.5],
                )],
            )
        };
        let notes = block_drift_notes(
            &ids[..2],
            &[None, None],
            &[(0, spread(100.0)), (1, spread(130.0))],
        );
        assert!(notes.iter().all(Vec::is_empty), "{notes:?}");
        // A row without a target is held to 10%; sizes that only one row has are skipped.
        let blocks = vec![
            (0, series("k", &[(1, 100.0), (4, 100.0)])),
            (1, series("k", &[(1, 112.0), (8, 500.0)])),
        ];
        let notes = block_drift_notes(&ids[..2], &[None, None], &blocks);
        assert!(notes[0][0].contains("1.12x apart"), "{}", notes[0][0]);
        assert!(notes[1][0].contains("112 ns at x = 1"), "{}", notes[1][0]);
    }
    use perfcompose_core::model::parse_model;

    /// Exact arithmetic on a few terms.
    const TOL: f64 = 1e-9;

    #[test]
    fn mapreduce_blocks_are_measured_around_the_sizes_they_are_evaluated_at() {
        // mapreduce = x·map(1)/n + k(x)·reduce(d(x))/n: map at 1 image; per key the
        // reduction at d = x (the job's images), pairwise at d = 768 keys.
        for suite in [quick_suite(), paper_suite()] {
            let within = |kernel: &str, d: usize| {
                let s = &suite.kernel_sizes[kernel];
                s.first().is_some_and(|&lo| lo <= d) && s.last().is_some_and(|&hi| d <= hi)
            };
            for c in suite
                .cases
                .iter()
                .filter(|c| c.term.starts_with("mapreduce"))
            {
                assert!(within("map", 1), "{}", suite.name);
                if c.term.contains("reduce_per_key") {
                    for &x in &c.sizes {
                        assert!(within("reduce_per_key", x), "{} at {x}", c.term);
                    }
                } else {
                    assert!(within("reduce_pairwise", 768), "{}", c.term);
                }
            }
        }
    }

    #[test]
    fn every_block_point_is_measured_once_next_to_a_program_point() {
        let program = vec![4, 8, 16, 32, 64];
        let same = program.clone();
        let more = vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        let fewer = vec![256, 512];
        let blocks = vec![same, more.clone(), fewer.clone()];
        let mut seen: Vec<Vec<usize>> = vec![vec![0; 5], vec![0; more.len()], vec![0; 2]];
        for i in 0..program.len() {
            let slots = slots_at(i, &program, &blocks);
            // A block over the program's sizes: at the same size.
            assert!(slots.contains(&(0, i)), "{slots:?}");
            for (k, j) in slots {
                seen[k][j] += 1;
            }
        }
        assert!(seen.iter().flatten().all(|&n| n == 1), "{seen:?}");
    }

    #[test]
    fn pooled_block_series_merge_the_repetitions_of_each_point() {
        let series = |name: &str, points: &[(u64, &[f64])]| {
            Series::kernel(
                name,
                points
                    .iter()
                    .map(|(x, v)| bench::PointStats::of(*x, v.to_vec()))
                    .collect(),
            )
        };
        let all = pooled(&[
            series("inc", &[(8, &[1.0, 2.0]), (16, &[3.0])]),
            series("qsort", &[(8, &[5.0])]),
            series("inc", &[(8, &[4.0])]),
        ]);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].name, "inc");
        assert_eq!(all[0].points[0].values, vec![1.0, 2.0, 4.0]);
        assert_eq!(all[0].points[0].median, 2.0);
        assert_eq!(all[0].points[1].values, vec![3.0]);
        assert_eq!(all[1].points[0].values, vec![5.0]);
    }

    #[test]
    fn protocols_parse() {
        assert_eq!("interleaved".parse(), Ok(Protocol::Interleaved));
        assert_eq!("separate".parse(), Ok(Protocol::Separate));
        assert_eq!("sandwich".parse(), Ok(Protocol::Sandwich));
        assert_eq!("rounds".parse(), Ok(Protocol::Rounds));
        assert!(Protocol::Rounds.per_configuration());
        assert_eq!(Protocol::Rounds.halves(), Some(ROUNDS_HALVES));
        assert_eq!(Protocol::Interleaved.halves(), None);
        assert!(Protocol::Sandwich.per_configuration() && !Protocol::Separate.per_configuration());
        assert!("both".parse::<Protocol>().is_err());
        assert_eq!(Protocol::default(), Protocol::Interleaved);
    }

    #[test]
    fn coefficient_error_is_the_coefficient_error_for_models_of_the_seeds_form() {
        let m = |s: &str| parse_model(s).unwrap();
        // Same monomial: the coefficients' relative error; constants drop out.
        let e = coefficient_error(
            &m("5000 + 1100 * x * log2(x)"),
            &m("1000 * x * log2(x)"),
            1024.0,
            1e5,
        );
        assert!((e - 0.1).abs() < TOL, "{e}");
        // A maximum: its larger branch over the range.
        let e = coefficient_error(
            &m("300 + max(2 * x, 100 + 0.5 * x)"),
            &m("2.2 * x"),
            1e3,
            1e4,
        );
        assert!((e - 0.2 / 2.2).abs() < TOL, "{e}");
    }

    #[test]
    fn coefficient_error_does_not_depend_on_how_a_fit_splits_the_growth() {
        let m = |s: &str| parse_model(s).unwrap();
        // The same growth from 1,024 to 262,144, in one term or in two.
        let (lo, hi) = (1024.0_f64, 262144.0_f64);
        let g = |x: f64| 2.75 * x * x.log2();
        let split = |x: f64| 9.44 * x + 2.0 * x * x.log2();
        // Scale the split model so that both grow alike over the range.
        let k = (g(hi) - g(lo)) / (split(hi) - split(lo));
        let modular = m(&format!(
            "-3000 + {} * x + {} * x * log2(x)",
            9.44 * k,
            2.0 * k
        ));
        let e = coefficient_error(&modular, &m("4500 + 2.75 * x * log2(x)"), lo, hi);
        assert!(e < 1e-9, "{e}");
        // Another monomial fitted to the same growth: no error either.
        let c = (g(hi) - g(lo)) / (hi.powf(1.25) - lo.powf(1.25));
        let e = coefficient_error(
            &m("4500 + 2.75 * x * log2(x)"),
            &m(&format!("10 + {c} * x^(5/4)")),
            lo,
            hi,
        );
        assert!(e < 1e-9, "{e}");
        // A model that does not grow cannot be compared.
        assert!(coefficient_error(&m("x"), &m("5"), lo, hi).is_nan());
        assert!(coefficient_error(&m("x"), &m("2 * x"), hi, hi).is_nan());
    }

    #[test]
    fn input_states_follow_the_element_through_the_design() {
        let plan = |t: &str| parse_plan("<t>", t).unwrap().1;
        let reg = Registry::builtin();
        let states = |t: &str| input_plan(&plan(t), &reg, 2).to_string();
        // In a seq, a kernel runs on what the one before it wrote on the same thread.
        assert_eq!(states("seq(inc, inc)"), "seq(inc, inc_warm)");
        assert_eq!(
            states("seq(seq(qsort, inc), nop)"),
            "seq(seq(qsort, inc_warm), nop_warm)"
        );
        assert_eq!(
            states("seq(qsort, seq(inc, nop))"),
            "seq(qsort, seq(inc_warm, nop_warm))"
        );
        // `nop` does not write: what follows it finds the element where it was.
        assert_eq!(states("seq(nop, inc)"), "seq(nop, inc)");
        assert_eq!(states("seq(inc, nop, inc)"), "seq(inc, nop_warm, inc_warm)");
        // A stage after a writing stage fetches its input from the other core (on one
        // core, where stages are not timed next to each other).
        let one_core = |t: &str| input_plan(&plan(t), &reg, 1).to_string();
        assert_eq!(one_core("pipe(qsort, inc)"), "pipe(qsort, inc_remote)");
        assert_eq!(one_core("pipe(nop, inc)"), "pipe(nop, inc)");
        assert_eq!(
            one_core("pipe(inc, pipe(nop, qsort))"),
            "pipe(inc, pipe(nop_remote, qsort_remote))"
        );
        // On more cores, the stages of a pipeline of single blocks are timed as stages,
        // nested pipes flattened, wherever the pipeline sits outside a task pool.
        assert_eq!(
            states("pipe(qsort, inc)"),
            "pipe(qsort_stage1_of_qsort_then_inc, inc_remote_stage2_of_qsort_then_inc)"
        );
        assert_eq!(
            states("pipe(inc, pipe(nop, qsort))"),
            "pipe(inc_stage1_of_inc_then_nop_then_qsort, \
             pipe(nop_remote_stage2_of_inc_then_nop_then_qsort, \
             qsort_remote_stage3_of_inc_then_nop_then_qsort))"
        );
        assert_eq!(
            states("seq(pipe(nop, inc), qsort)"),
            "seq(pipe(nop_stage1_of_nop_then_inc, inc_stage2_of_nop_then_inc), qsort_remote)"
        );
        // Not inside a task pool (its workers run the whole pipeline), nor in a pipeline
        // with a pattern as a stage.
        assert_eq!(
            states("tpool(2, pipe(qsort, inc))"),
            "tpool(2, pipe(qsort_par2, inc_remote_par2))"
        );
        assert_eq!(
            states("pipe(tpool(1, qsort), tpool(1, inc))"),
            "pipe(tpool(1, qsort), tpool(1, inc_remote))"
        );
        // Task pool workers take stream elements: cold, and run side by side (as many as
        // there are cores); the blocks of a pool's seq are timed in that seq, next to
        // siblings running all of it.
        assert_eq!(
            states("tpool(2, seq(inc, qsort))"),
            "tpool(2, seq(inc_par2_seq1_of_inc_then_qsort, qsort_warm_par2_seq2_of_inc_then_qsort))"
        );
        assert_eq!(
            states("tpool(2, seq(seq(nop, inc), inc))"),
            "tpool(2, seq(seq(nop_par2_seq1_of_nop_then_inc_then_inc, \
             inc_par2_seq2_of_nop_then_inc_then_inc), \
             inc_warm_par2_seq3_of_nop_then_inc_then_inc))"
        );
        // Not a seq with a pattern in it.
        assert_eq!(
            states("tpool(2, seq(inc, pipe(inc, nop)))"),
            "tpool(2, seq(inc_par2, pipe(inc_remote_par2, nop_remote_par2)))"
        );
        assert_eq!(states("tpool(8, qsort)"), "tpool(8, qsort_par2)");
        assert_eq!(states("tpool(1, qsort)"), "tpool(1, qsort)");
        assert_eq!(
            input_plan(&plan("tpool(2, seq(inc, qsort))"), &reg, 1).to_string(),
            "tpool(2, seq(inc, qsort_warm))"
        );
        assert_eq!(
            states("tpool(1, seq(inc, qsort))"),
            "tpool(1, seq(inc, qsort_warm))"
        );
        assert_eq!(
            input_plan(&plan("tpool(2, tpool(2, inc))"), &reg, 8).to_string(),
            "tpool(2, tpool(2, inc_par4))"
        );
        // A pool that takes handed-over elements: its seq's first block does not start on
        // a stream element, and its blocks keep the names of blocks timed side by side.
        assert_eq!(
            states("pipe(seq(qsort, inc), tpool(2, seq(nop, inc)))"),
            "pipe(seq(qsort, inc_warm), tpool(2, seq(nop_remote_par2, inc_remote_par2)))"
        );
        assert_eq!(
            states("seq(qsort, tpool(2, seq(inc, nop)))"),
            "seq(qsort, tpool(2, seq(inc_remote_par2, nop_warm_par2)))"
        );
        // The reduction of a MapReduce is measured warm, and both blocks side by side
        // on the job's threads (capped at the cores).
        let small = ImageSize::Small;
        let how = |input, siblings| bench::Conditions {
            input,
            siblings,
            ..Default::default()
        };
        for (threads, cores, suffix, siblings) in [
            (2, 2, "_par2", 1),
            (4, 2, "_par2", 1),
            (1, 2, "", 0),
            (2, 1, "", 0),
        ] {
            let mr = plan(&format!(
                "mapreduce(map, reduce_per_key, nodes=1, threads={threads}, keys=768, per_key=x)"
            ));
            let composed = input_plan(&mr, &reg, cores);
            assert_eq!(composed, mr, "a MapReduce is composed as written");
            let blocks: Vec<_> = composed
                .kernels()
                .iter()
                .map(|k| block_of(k, &composed, small, &reg, cores).unwrap())
                .collect();
            assert_eq!(
                blocks,
                vec![
                    (
                        format!("map@small{suffix}"),
                        "map".to_string(),
                        how(bench::InputState::Cold, siblings)
                    ),
                    (
                        format!("reduce_per_key_warm{suffix}"),
                        "reduce_per_key".to_string(),
                        how(bench::InputState::Warm, siblings)
                    ),
                ],
                "threads={threads} cores={cores}"
            );
        }
        // Kernel names of an input plan back to registry names and conditions.
        let parse = bench::Conditions::parse;
        assert_eq!(parse("inc_warm"), ("inc", how(bench::InputState::Warm, 0)));
        assert_eq!(
            parse("inc_remote"),
            ("inc", how(bench::InputState::Remote, 0))
        );
        assert_eq!(parse("inc"), ("inc", how(bench::InputState::Cold, 0)));
        assert_eq!(parse("inc_par2"), ("inc", how(bench::InputState::Cold, 1)));
        assert_eq!(
            parse("qsort_warm_par12"),
            ("qsort", how(bench::InputState::Warm, 11))
        );
        for (name, c) in [
            ("inc", how(bench::InputState::Remote, 3)),
            ("map", how(bench::InputState::Warm, 1)),
        ] {
            assert_eq!(parse(&format!("{name}{}", c.suffix())), (name, c));
        }
        // Not the form `suffix` writes: left as it is.
        for odd in ["my_par", "my_par1", "my_par02", "my_parx"] {
            assert_eq!(parse(odd), (odd, how(bench::InputState::Cold, 0)));
        }
    }

    /// A saved series with three repetitions at and above `f(x)` (minimum and median
    /// exactly `f(x)`).
    fn saved(name: &str, xs: &[u64], f: impl Fn(f64) -> f64) -> Series {
        let points = xs
            .iter()
            .map(|&x| {
                let v = f(x as f64);
                bench::PointStats::of(x, vec![v, 1.02 * v, v])
            })
            .collect();
        if name.contains("->") {
            Series::kernel(name, points)
        } else {
            Series::program(name, points)
        }
    }

    #[test]
    fn a_suite_can_be_cut_down_to_some_of_its_configurations() {
        let paper = paper_suite();
        let some = select(
            paper.clone(),
            &["pipe(inc,inc)".into(), "tpool(2, seq(inc, nop))".into()],
        )
        .unwrap();
        let terms: Vec<&str> = some.cases.iter().map(|c| c.term.as_str()).collect();
        assert_eq!(terms, vec!["pipe(inc, inc)", "tpool(2, seq(inc, nop))"]);
        assert_eq!(some.sampling, paper.sampling);
        // A MapReduce keeps its three images.
        let mr = "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)";
        assert_eq!(select(paper.clone(), &[mr.into()]).unwrap().cases.len(), 3);
        // Unknown or malformed terms are errors.
        let err = select(paper.clone(), &["pipe(inc, qsort, nop)".into()]).unwrap_err();
        assert!(err.to_string().contains("has no configuration"), "{err}");
        assert!(err.to_string().contains("seq(qsort, nop)"), "{err}");
        assert_eq!(err.to_string().matches(mr).count(), 1, "{err}");
        assert!(select(paper, &["pipe(inc,".into()]).is_err());
    }

    #[test]
    fn repeat_error_is_the_largest_relative_gap_between_two_measurements() {
        let xs = [1024, 2048, 4096];
        let a = saved("p [before blocks]", &xs, |x| x);
        // 10% above at 2048 (relative to the pair's mean: 0.1 / 1.05), equal elsewhere;
        // a size measured once only does not count.
        let b = saved("p [after blocks]", &[1024, 2048, 4096, 8192], |x| {
            if x == 2048.0 {
                1.1 * x
            } else if x == 8192.0 {
                3.0 * x
            } else {
                x
            }
        });
        let e = repeat_error(&a, &b, Measure::Median).unwrap();
        assert!((e - 0.1 / 1.05).abs() < TOL, "{e}");
        assert_eq!(
            repeat_error(&a, &b, Measure::Median),
            repeat_error(&b, &a, Measure::Median)
        );
        let none = saved("q", &[64], |x| x);
        assert_eq!(repeat_error(&a, &none, Measure::Median), None);
    }

    #[test]
    fn the_sandwich_protocol_is_validated_again_with_its_halves() {
        let reg = Registry::builtin();
        let opts = reanalysis_options();
        let xs = [1024, 2048, 4096, 8192, 16384, 32768];
        let sizes: Vec<usize> = xs.iter().map(|&x| x as usize).collect();
        let suite = term_suite("seq(inc, nop)", sizes, ImageSize::Small, Sampling::quick());
        let program = saved("seq(inc, nop)", &xs, |x| 3.0 + 0.6 * x);
        let inc = saved("seq(inc, nop)->inc", &xs, |x| 0.6 * x);
        let nop = saved("seq(inc, nop)->nop_warm", &xs, |_| 3.0);
        // The program 20% slower after its blocks than before them at one size.
        let before = saved("seq(inc, nop) [before blocks]", &xs, |x| 3.0 + 0.6 * x);
        let after = saved("seq(inc, nop) [after blocks]", &xs, |x| {
            (3.0 + 0.6 * x) * if x == 4096.0 { 1.2 } else { 1.0 }
        });
        let all = [program, inc, nop, before, after];
        let again = reanalyze(&suite, &all, &reg, &opts).unwrap();
        let row = &again.report.rows[0];
        let e = row.repeat_error.unwrap();
        assert!((e - 0.2 / 1.1).abs() < TOL, "{e}");
        // The halves are kept with the measurements used (a second `--save` keeps them).
        assert_eq!(again.report.series.len(), 5);
        // Without them: no repeat error, as under the other protocols.
        let again = reanalyze(&suite, &all[..3], &reg, &opts).unwrap();
        assert_eq!(again.report.rows[0].repeat_error, None);
    }

    #[test]
    fn the_rounds_protocol_is_validated_again_with_its_halves_and_says_so() {
        let reg = Registry::builtin();
        let opts = reanalysis_options();
        let xs = [1024, 2048, 4096, 8192, 16384, 32768];
        let sizes: Vec<usize> = xs.iter().map(|&x| x as usize).collect();
        let suite = term_suite("seq(inc, nop)", sizes, ImageSize::Small, Sampling::quick());
        // The blocks predict 3 + 0.6·x; the program is 30% slower at one size, in its
        // late rounds 60% slower there (early: as predicted).
        let slow = |x: f64| if x == 4096.0 { 1.3 } else { 1.0 };
        let program = saved("seq(inc, nop)", &xs, |x| (3.0 + 0.6 * x) * slow(x));
        let inc = saved("seq(inc, nop)->inc", &xs, |x| 0.6 * x);
        let nop = saved("seq(inc, nop)->nop_warm", &xs, |_| 3.0);
        let early = saved("seq(inc, nop) [early rounds]", &xs, |x| 3.0 + 0.6 * x);
        let late = saved("seq(inc, nop) [late rounds]", &xs, |x| {
            (3.0 + 0.6 * x) * if x == 4096.0 { 1.6 } else { 1.0 }
        });
        let all = [program, inc, nop, early, late];
        let again = reanalyze(&suite, &all, &reg, &opts).unwrap();
        let row = &again.report.rows[0];
        let e = row.repeat_error.unwrap();
        assert!((e - 0.6 / 1.3).abs() < TOL, "{e}");
        assert_eq!(again.report.series.len(), 5);
        let notes = row.notes.join("; ");
        assert!(row.passed() == Some(false), "{row:?}");
        assert!(
            notes.contains(
                "in the first and in the second half of the rounds differs by up to 46.2%"
            ),
            "{notes}"
        );
    }

    #[test]
    fn unloaded_options_time_every_block_alone() {
        let reg = Registry::builtin();
        let mut suite = term_suite(
            "pipe(qsort, inc)",
            vec![1024],
            Default::default(),
            bench::Sampling::quick(),
        );
        suite.cases.push(Case {
            term: "tpool(2, inc)".into(),
            ..suite.cases[0].clone()
        });
        let keys = |loaded: bool| -> Vec<String> {
            let opts = Options {
                cores: 2,
                loaded,
                ..Options::default()
            };
            needed_kernels(&suite, &reg, opts.load_cores())
                .unwrap()
                .into_iter()
                .map(|n| n.0)
                .collect()
        };
        assert_eq!(
            keys(true),
            [
                "inc_par2",
                "inc_remote_stage2_of_qsort_then_inc",
                "qsort_stage1_of_qsort_then_inc"
            ]
        );
        assert_eq!(keys(false), ["inc", "inc_remote", "qsort"]);
    }

    fn neighbour_check(alu: f64, mem: f64) -> bench::neighbour::NeighbourCheck {
        bench::neighbour::NeighbourCheck {
            rounds: 3,
            works: vec![bench::neighbour::Neighbour {
                work: "`inc`".into(),
                idle_ms: 1.0,
                alu,
                mem,
            }],
        }
    }

    /// A check of the host's speed alone: `inc` alone took `idle_ms`.
    fn speed_check(idle_ms: f64) -> bench::neighbour::NeighbourCheck {
        let mut c = neighbour_check(f64::NAN, f64::NAN);
        c.works[0].idle_ms = idle_ms;
        c
    }

    /// A row of `threads` threads whose time error is `time_error`, judged when
    /// `within_cores`, without a host check.
    fn host_row(threads: usize, time_error: f64, within_cores: bool) -> Row {
        Row {
            group: String::new(),
            configuration: format!("{threads} threads, {time_error}"),
            threads,
            within_cores,
            modular: Expr::constant(1.0),
            monolithic: Expr::constant(1.0),
            coefficient_error: 0.0,
            time_error,
            overhead_ns: 0.0,
            target: within_cores.then_some(TARGET_PATTERNS),
            notes: Vec::new(),
            points: Vec::new(),
            components: BTreeMap::new(),
            fit_floor: None,
            error_from_measured_blocks: None,
            repeat_error: None,
            host: None,
        }
    }

    #[test]
    fn the_cores_speed_states_are_judged_over_the_whole_suite_and_noted_on_missed_rows() {
        let states = |cores: Vec<Vec<f64>>| bench::states::CoreStates {
            window_ms: 100.0,
            cores,
        };
        let with_states = |threads, time_error, before, after| {
            let mut r = host_row(threads, time_error, true);
            r.host = Some(HostAtRow {
                before: speed_check(1.0),
                after: speed_check(1.0),
                waited: None,
                usual: None,
                states: [Some(states(before)), Some(states(after))],
                fastest: Vec::new(),
            });
            r
        };
        // The first row's samples: both cores slow throughout (6.5 µs); judged against
        // them alone they would read fast.
        let slow = vec![vec![6500.0, 6600.0], vec![6400.0, 6700.0]];
        let mut rows = vec![
            with_states(2, 0.18, slow.clone(), slow.clone()),
            // Core 0 fast in both windows, core 1 in the second only.
            with_states(
                2,
                0.05,
                slow.clone(),
                vec![vec![3500.0, 3600.0], vec![6400.0, 3400.0]],
            ),
            with_states(
                1,
                0.18,
                slow.clone(),
                vec![vec![3500.0, 3600.0], vec![6400.0, 3400.0]],
            ),
        ];
        let mut fastest = Vec::new();
        for r in &rows {
            for s in r.host.as_ref().unwrap().states.iter().flatten() {
                bench::states::keep_fastest(&mut fastest, s);
            }
        }
        assert_eq!(fastest, [3500.0, 3400.0]);
        add_state_notes(&mut rows, &fastest);
        // Judged against the suite's fastest, the first row's cores were never fast.
        let [before, after] = rows[0].host.as_ref().unwrap().state_shares().unwrap();
        assert_eq!((before.every, after.every), (0.0, 0.0));
        assert_eq!(rows[0].notes.len(), 1);
        let n = &rows[0].notes[0];
        assert!(
            n.starts_with("the cores' speed states: every core in its fast state at once in 0% of the windows right before this configuration and 0% right after (each core 0% and 0% before, 0% and 0% after;"),
            "{n}"
        );
        assert!(
            n.contains("3.5 µs and 3.4 µs a call; medians 6.6 µs and 6.7 µs right before"),
            "{n}"
        );
        // The sample's own length (two windows of 100 ms), whatever the suite's setting.
        assert!(
            n.contains("on every core at once for 0.2 s at each end"),
            "{n}"
        );
        assert!(
            n.ends_with("a program of 2 threads only when every core is fast at once"),
            "{n}"
        );
        // A row within target has no note, but its shares are there for --json.
        assert!(rows[1].notes.is_empty());
        let json = rows[1]
            .host
            .as_ref()
            .unwrap()
            .to_json()
            .core_states
            .unwrap();
        assert_eq!(json.fastest_ns, [3500.0, 3400.0]);
        assert_eq!(json.after.each, [1.0, 0.5]);
        assert_eq!(json.after.every, 0.5);
        // A missed row of one thread: each core's share, not every core's at once.
        assert!(
            rows[2].notes[0].starts_with("the cores' speed states: each core in its fast state in 0% and 0% of the windows right before this configuration and 100% and 50% right after"),
            "{}",
            rows[2].notes[0]
        );
        // Without both samples: no shares, no note.
        let mut r = with_states(2, 0.18, slow.clone(), slow);
        r.host.as_mut().unwrap().states[1] = None;
        let mut rows = vec![r];
        add_state_notes(&mut rows, &fastest);
        assert!(rows[0].notes.is_empty());
        assert!(rows[0]
            .host
            .as_ref()
            .unwrap()
            .to_json()
            .core_states
            .is_none());
    }

    #[test]
    fn the_host_check_around_a_row_is_noted_on_the_missed_rows() {
        let check = neighbour_check;
        let row = host_row;
        let notes = |mut r: Row, before, after| {
            r.host = Some(HostAtRow {
                before,
                after,
                waited: None,
                usual: None,
                states: [None, None],
                fastest: Vec::new(),
            });
            note_host(&mut r, Protocol::Interleaved);
            r.notes
        };
        // Within target, or more threads than cores (reported only): nothing to say,
        // whatever the check read.
        for r in [row(2, 0.05, true), row(1, 0.05, true), row(4, 0.30, false)] {
            assert!(notes(r, check(1.43, 1.61), speed_check(2.0)).is_empty());
        }
        // A missed row of one thread: whether the host's speed moved across it, ...
        let n = notes(row(1, 0.18, true), speed_check(1.0), speed_check(1.25));
        assert_eq!(n.len(), 1);
        assert!(
            n[0].starts_with("the host's speed moved across this configuration")
                && n[0].contains("took 1.25x as long right after it"),
            "{}",
            n[0]
        );
        assert!(n[0].ends_with("may have met different speeds"), "{}", n[0]);
        let n = notes(row(1, 0.18, true), speed_check(1.0), speed_check(0.8));
        assert!(n[0].contains("took 0.80x as long"), "{}", n[0]);
        // Under rounds the blocks and the program met the same spells.
        let mut r = row(1, 0.18, true);
        r.host = Some(HostAtRow {
            before: speed_check(1.0),
            after: speed_check(1.25),
            waited: None,
            usual: None,
            states: [None, None],
            fastest: Vec::new(),
        });
        note_host(&mut r, Protocol::Rounds);
        assert!(r.notes[0].ends_with("took turns in the same rounds, so only a change within a round reaches one and not the other"), "{}", r.notes[0]);
        // ... or held.
        let n = notes(row(1, 0.18, true), speed_check(1.0), speed_check(1.05));
        assert_eq!(n.len(), 1);
        assert!(n[0].starts_with("the host's speed held across this configuration (1.05x"));
        // A missed row of two threads: the speed, and a neighbour at one end ...
        let n = notes(row(2, 0.18, true), check(1.02, 1.05), check(1.43, 1.61));
        assert_eq!(n.len(), 2);
        assert!(n[0].starts_with("the host's speed held"), "{}", n[0]);
        assert!(
            n[1].contains("up to 1.05x right before this configuration and 1.61x right after"),
            "{}",
            n[1]
        );
        // ... or quiet at both: the note says the neighbour is not the reason.
        let n = notes(row(2, 0.18, true), check(1.02, 1.05), check(1.0, 1.08));
        assert_eq!(n.len(), 2);
        assert!(n[1].contains("read quiet right before"), "{}", n[1]);
        // No check around the row: no note.
        let mut r = row(2, 0.18, true);
        note_host(&mut r, Protocol::Interleaved);
        assert!(r.notes.is_empty());
        // A wait is noted on any row, passed or not, against the usual speed before.
        let mut r = row(2, 0.05, true);
        let mut first = check(1.3, 1.5);
        first.works[0].idle_ms = 1.4;
        r.host = Some(HostAtRow {
            before: check(1.0, 1.04),
            after: check(1.0, 1.02),
            waited: Some((std::time::Duration::from_secs(45), first)),
            usual: Some(speed_check(0.8)),
            states: [None, None],
            fastest: Vec::new(),
        });
        note_host(&mut r, Protocol::Interleaved);
        assert_eq!(r.notes.len(), 1);
        assert!(
            r.notes[0].starts_with("waited 45 s for the host")
                && r.notes[0].contains("by 1.50x and the check's blocks alone took 1.75x")
                && r.notes[0].contains("at first, 1.04x and 1.25x when"),
            "{}",
            r.notes[0]
        );
        assert_eq!(
            r.host.as_ref().map(HostAtRow::to_json),
            Some(JsonHost {
                before: 1.04,
                after: 1.02,
                waited_s: 45.0,
                speed_change: 1.0,
                slowdown: 1.25,
                core_states: None,
            })
        );
        let mut r = row(1, 0.05, true);
        r.host = Some(HostAtRow {
            before: speed_check(1.05),
            after: speed_check(1.05),
            waited: Some((std::time::Duration::from_secs(15), speed_check(1.5))),
            usual: Some(speed_check(1.0)),
            states: [None, None],
            fastest: Vec::new(),
        });
        note_host(&mut r, Protocol::Interleaved);
        assert_eq!(
            r.notes,
            ["waited 15 s for the host before measuring: the check's blocks alone took 1.50x their usual time in this suite at first, 1.05x when the measurement began (tolerance 1.10x)"]
        );
    }

    #[test]
    fn the_suite_waits_for_a_quiet_host_only_as_long_as_it_may() {
        use std::time::Duration;
        // The checks the host would read, in turn; the clock is the sleeps asked for.
        let run = |readings: &[(f64, f64)], fresh: Option<(f64, f64)>, limit_s: u64| {
            let mut left = readings.iter();
            let mut checks = 0;
            let mut slept = Duration::ZERO;
            let got = wait_for_quiet(
                fresh.map(|(a, m)| neighbour_check(a, m)),
                || {
                    checks += 1;
                    Ok(left.next().map(|&(a, m)| neighbour_check(a, m)))
                },
                None,
                Duration::from_secs(limit_s),
                Duration::from_secs(15),
                |d| slept += d,
            )
            .unwrap();
            (got, checks, slept.as_secs())
        };
        // Quiet at once: one check, no wait, before and after the same reading.
        let (got, checks, slept) = run(&[(1.0, 1.05)], None, 60);
        let got = got.unwrap();
        assert_eq!((checks, slept), (1, 0));
        assert_eq!(got.waited, None);
        assert_eq!(got.before, got.after);
        // A fresh check from the row before serves: no new one.
        let (got, checks, _) = run(&[], Some((1.0, 1.02)), 60);
        assert_eq!((got.unwrap().before.worst(), checks), (1.02, 0));
        // Busy, busy, quiet: two pauses of 15 s, the quiet reading kept.
        let (got, checks, slept) = run(&[(1.4, 1.6), (1.3, 1.2), (1.0, 1.06)], None, 60);
        let got = got.unwrap();
        assert_eq!((checks, slept), (3, 30));
        assert_eq!(got.before.worst(), 1.06);
        let (waited, first) = got.waited.unwrap();
        assert_eq!((waited.as_secs(), first.worst()), (30, 1.6));
        // Busy throughout: it stops at the limit (the last pause cut to fit) and measures.
        let busy = [(1.4, 1.6); 10];
        let (got, checks, slept) = run(&busy, None, 40);
        assert_eq!((checks, slept), (4, 40));
        assert!(got.unwrap().before.disturbing());
        // No wait allowed (the default): one check, however busy.
        let (got, checks, slept) = run(&busy, None, 0);
        assert_eq!((checks, slept, got.unwrap().waited), (1, 0, None));
        // A machine that cannot run the check: nothing.
        let (got, checks, _) = run(&[], None, 60);
        assert_eq!((got, checks), (None, 1));
    }

    #[test]
    fn the_suite_waits_for_the_hosts_speed_to_come_back_to_its_usual() {
        use std::time::Duration;
        let usual = speed_check(1.0);
        let run = |readings: &[f64], limit_s: u64| {
            let mut left = readings.iter();
            let mut slept = Duration::ZERO;
            let got = wait_for_quiet(
                None,
                || Ok(left.next().map(|&ms| speed_check(ms))),
                Some(&usual),
                Duration::from_secs(limit_s),
                Duration::from_secs(15),
                |d| slept += d,
            )
            .unwrap()
            .unwrap();
            (got, slept.as_secs())
        };
        // Within 1.10x of the usual speed: at once.
        let (got, slept) = run(&[1.08], 60);
        assert_eq!((slept, got.waited.is_none()), (0, true));
        assert_eq!(got.usual.as_ref().map(|u| u.works[0].idle_ms), Some(1.0));
        assert!((got.slowdown() - 1.08).abs() < 1e-12);
        // Half speed, then back: one pause.
        let (got, slept) = run(&[2.0, 1.02], 60);
        assert_eq!(slept, 15);
        assert_eq!(
            got.waited.as_ref().map(|(_, c)| c.works[0].idle_ms),
            Some(2.0)
        );
        assert!((got.slowdown() - 1.02).abs() < 1e-12);
        // Half speed throughout: up to the limit, then measured anyway.
        let (got, slept) = run(&[2.0; 8], 40);
        assert_eq!(slept, 40);
        assert_eq!(got.slowdown(), 2.0);
    }

    fn reanalysis_options() -> Options {
        Options {
            cores: 2,
            overhead: None,
            ..Options::default()
        }
    }

    #[test]
    fn the_paper_suite_measures_again_a_burst_below_the_target_the_quick_suite_does_not() {
        // Run W's `tpool(2, qsort)`: two neighbouring sizes +6–7% off the others — 1.12
        // and 1.09 of a prediction the rest of the sweep sits 3% below.
        let xs = grid();
        let clean = |x: f64| 1.5 * x * x.log2();
        let mut ys: Vec<f64> = xs.iter().map(|&x| clean(x)).collect();
        ys[6] *= 1.07;
        ys[7] *= 1.06;
        let asked = |share: f64| {
            let mut asked = Vec::new();
            revisit_sweep(
                &xs,
                &mut ys.clone(),
                &[],
                TARGET_PATTERNS * share,
                Keep::Closer,
                |i| {
                    asked.push(i);
                    Ok::<f64, ()>(clean(xs[i]))
                },
            )
            .unwrap();
            asked.sort_unstable();
            asked
        };
        assert_eq!(paper_suite().revisit_share, REVISIT_SHARE);
        // The quick suite's speed-state samples are shorter, for its two minutes.
        assert_eq!(paper_suite().state_sample, bench::states::VALIDATE_LENGTH);
        assert!(quick_suite().state_sample < bench::states::VALIDATE_LENGTH);
        assert_eq!(asked(paper_suite().revisit_share), vec![6, 7]);
        assert_eq!(asked(quick_suite().revisit_share), Vec::<usize>::new());
        let term = term_suite(
            "inc",
            vec![1024, 2048],
            ImageSize::Small,
            paper_suite().sampling,
        );
        assert_eq!(term.revisit_share, REVISIT_SHARE);
    }

    #[test]
    fn under_the_minimum_a_revisit_keeps_the_faster_visit() {
        // Run X's `tpool(2, seq(inc, inc))`, ns per element as first measured: its
        // neighbours put x = 4,096 (third point) at 4.6 µs, +16% below its first visit;
        // the second visit took 3.7 µs (-21%). The closer visit is the slow one; under
        // the minimum the faster is kept.
        let xs = grid();
        let first = [
            1093.0, 2512.0, 5395.0, 9666.0, 16777.0, 28959.0, 54114.0, 78625.0, 99237.0, 124744.0,
            154405.0, 175066.0, 201069.0,
        ];
        let kept = |keep: Keep| {
            let mut ys = first.to_vec();
            let done = revisit_sweep(&xs, &mut ys, &[], 0.05, keep, |i| {
                Ok::<f64, ()>(if i == 2 { 3700.0 } else { first[i] })
            })
            .unwrap();
            let r = done
                .into_iter()
                .find(|r| r.index == 2)
                .expect("x = 4,096 again");
            (ys[2], r)
        };
        let (closer, r) = kept(Keep::Closer);
        assert!((r.reference / 4600.0 - 1.0).abs() < 0.02, "{r:?}");
        assert_eq!(closer, 5395.0, "{r:?}");
        assert!(r.describe("it", "").ends_with("kept the first visit"));
        let (faster, r) = kept(Keep::Faster);
        assert_eq!(faster, 3700.0, "{r:?}");
        assert!(r
            .describe("it", "")
            .ends_with("kept the second visit, the faster"));
        assert_eq!(Keep::for_measure(Measure::Minimum), Keep::Faster);
        assert_eq!(Keep::for_measure(Measure::Median), Keep::Closer);
    }

    #[test]
    fn a_point_off_in_both_its_visits_is_measured_a_third_time_after_the_others() {
        // Run BL's `seq(inc, inc)`, ns per element: x = 16,384 took 36.6 µs in its first
        // visit and 40.7 µs in its second, +48% and +65% off its neighbours, while its
        // blocks read their usual speed; a run of the same rows right after read it in
        // line (24.7 µs). x = 1,024 was +9% off and stayed.
        let xs = grid();
        let first = [
            1543.0, 3033.0, 6213.0, 13074.0, 36581.0, 48961.0, 97925.0, 147264.0, 197219.0,
            245951.0, 293678.0, 346816.0, 389782.0,
        ];
        let target = TARGET_PATTERNS * REVISIT_SHARE;
        let run = |third: f64| {
            let mut ys = first.to_vec();
            let mut asked = Vec::new();
            let done = revisit_sweep(&xs, &mut ys, &[], target, Keep::Faster, |i| {
                asked.push(i);
                let nth = asked.iter().filter(|&&j| j == i).count();
                Ok::<f64, ()>(match (i, nth) {
                    (4, 1) => 40700.0,
                    (4, _) => third,
                    _ => 1.1 * first[i],
                })
            })
            .unwrap();
            (ys, asked, done)
        };
        let (ys, asked, done) = run(24700.0);
        // x = 16,384 first; then x = 1,024; then x = 16,384 again, the others' second
        // visits in between.
        assert_eq!(asked, vec![4, 0, 4], "{done:?}");
        assert_eq!(done.iter().map(|r| r.visit).collect::<Vec<_>>(), [2, 2, 3]);
        assert_eq!(ys[4], 24700.0);
        assert_eq!(ys[0], first[0]);
        let note = done[2].describe("the program", " per element");
        assert!(
            note.starts_with(
                "the program still took 36.6 µs per element (the visit kept of the first two), +"
            ),
            "{note}"
        );
        assert!(
            note.ends_with("the third time; kept the third visit, the faster"),
            "{note}"
        );
        assert!(done[0]
            .describe("it", "")
            .ends_with("the second time; kept the first visit, the faster"));
        // A third visit slower still: the earlier one stays.
        let (ys, _, done) = run(50000.0);
        assert_eq!(ys[4], first[4]);
        assert!(done[2]
            .describe("it", "")
            .ends_with("kept the earlier visit, the faster"));
        // No point is measured a fourth time, and a point whose second visit puts it in
        // line is not measured a third.
        let mut ys = first.to_vec();
        let mut asked = Vec::new();
        revisit_sweep(&xs, &mut ys, &[], target, Keep::Faster, |i| {
            asked.push(i);
            Ok::<f64, ()>(if i == 4 { 24700.0 } else { 1.1 * first[i] })
        })
        .unwrap();
        assert_eq!(asked.iter().filter(|&&i| i == 4).count(), 1, "{asked:?}");
        let mut asked = Vec::new();
        revisit_sweep(&xs, &mut first.to_vec(), &[], target, Keep::Faster, |i| {
            asked.push(i);
            Ok::<f64, ()>(1.5 * first[i])
        })
        .unwrap();
        assert!(asked
            .iter()
            .all(|&i| asked.iter().filter(|&&j| j == i).count() < MAX_VISITS));
        assert!(asked.len() <= max_all_revisits(xs.len()));
    }

    #[test]
    fn a_sweep_measures_its_disturbed_points_again_and_keeps_the_closer_visit() {
        // A power law with x = 8192 inflated by 60% and x = 262144 deflated by 30%.
        let xs: Vec<f64> = (10..=22).map(|e| 2f64.powi(e)).collect();
        let clean = |x: f64| 0.8 * x;
        let mut ys: Vec<f64> = xs.iter().map(|&x| clean(x)).collect();
        ys[3] *= 1.6;
        ys[12] *= 0.7;
        let before = ys.clone();
        let mut asked = Vec::new();
        let done = revisit_sweep(&xs, &mut ys, &[], 0.10, Keep::Closer, |i| {
            asked.push(i);
            // The first point comes back clean; the second is worse the second time.
            Ok::<f64, ()>(if i == 3 {
                clean(xs[3])
            } else {
                0.6 * clean(xs[i])
            })
        })
        .unwrap();
        // x = 262,144, worse the second time, still off: a third time, after the others.
        assert_eq!(asked, vec![3, 12, 12]);
        assert_eq!(done.len(), 3);
        assert!(
            done[0].kept_second && !done[1].kept_second && !done[2].kept_second,
            "{done:?}"
        );
        assert_eq!(ys[3], clean(xs[3]));
        assert_eq!(ys[12], before[12]);
        assert!((done[0].reference / clean(xs[3]) - 1.0).abs() < 1e-9);
        let note = done[0].describe("it", "");
        assert!(
            note.starts_with("it took 10.5 µs, +60% off the 6.6 µs"),
            "{note}"
        );
        assert!(
            note.ends_with("the second time; kept the second visit"),
            "{note}"
        );
        // A clean sweep asks for nothing; a failed measurement is the caller's error.
        let mut clean_ys: Vec<f64> = xs.iter().map(|&x| clean(x)).collect();
        let none = revisit_sweep(
            &xs,
            &mut clean_ys,
            &[],
            0.10,
            Keep::Closer,
            |_| -> Result<f64, ()> { panic!("nothing to measure again") },
        );
        assert_eq!(none, Ok(Vec::new()));
        assert_eq!(
            revisit_sweep(&xs, &mut before.clone(), &[], 0.10, Keep::Closer, |_| Err(
                "lost"
            )),
            Err("lost")
        );
        // Weighed by its share of the prediction: the +60% point at a share of 10% moves
        // it by 6% and stays; the -30% one at a share of 50% (15%) is measured again.
        let mut weights = vec![1.0; xs.len()];
        weights[3] = 0.1;
        weights[12] = 0.5;
        let mut asked = Vec::new();
        let mut ys = before.clone();
        revisit_sweep(&xs, &mut ys, &weights, 0.10, Keep::Closer, |i| {
            asked.push(i);
            Ok::<f64, ()>(clean(xs[i]))
        })
        .unwrap();
        assert_eq!(asked, vec![12]);
        assert_eq!((ys[3], ys[12]), (before[3], clean(xs[12])));
        assert_eq!(
            weighted_disturbed_point(&xs, &before, &weights, &[], 0.2),
            None
        );
    }

    #[test]
    fn a_block_point_measured_again_with_its_program_keeps_the_pair_together() {
        let point = |v: &[f64]| bench::PointStats::of(4096, v.to_vec());
        // Run BC's `pipe(inc, inc)` at x = 65,536 in kind: the first visit slow for the
        // stage and the program alike, the second fast for the stage.
        let visit = |program: &[f64], b0: &[f64], b1: &[f64]| Visit {
            program: point(program),
            halves: Some([point(&program[..1]), point(&program[1..])]),
            blocks: vec![((0, 3), point(b0)), ((1, 3), point(b1))],
        };
        let min = |p: &bench::PointStats| point_stat(p, Measure::Minimum);
        let second = visit(&[96.0, 99.0], &[93.0, 95.0], &[62.0, 66.0]);
        // Under the minimum each measurement keeps its faster visit: the program follows
        // its block down, the other block keeps its faster first visit.
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        let note = merge_visit(&mut kept, second, 2, true, Keep::Faster, min);
        assert_eq!(min(&kept.program), 96.0);
        assert_eq!(kept.halves.as_ref().map(|[a, _]| min(a)), Some(96.0));
        assert_eq!(min(&kept.blocks[0].1), 93.0);
        assert_eq!(min(&kept.blocks[1].1), 60.0);
        assert!(
            note.contains(
                "the program took 124 ns per element, then 96 ns (-23%); kept the second visit"
            ),
            "{note}"
        );
        // A program slower the second time keeps its first visit, whatever its block did.
        let slower = visit(&[140.0, 150.0], &[93.0, 95.0], &[62.0, 66.0]);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        let note = merge_visit(&mut kept, slower, 2, true, Keep::Faster, min);
        assert_eq!(min(&kept.program), 124.0);
        assert_eq!(min(&kept.blocks[0].1), 93.0);
        assert!(note.ends_with("kept the first visit"), "{note}");
        // Under the median the visit whose block was kept stays whole, or not at all.
        let med = |p: &bench::PointStats| point_stat(p, Measure::Median);
        let again = || visit(&[140.0, 150.0], &[93.0, 95.0], &[62.0, 66.0]);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        merge_visit(&mut kept, again(), 2, true, Keep::Closer, med);
        assert_eq!(med(&kept.program), 145.0);
        assert_eq!(med(&kept.blocks[1].1), 64.0);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        merge_visit(&mut kept, again(), 2, false, Keep::Closer, med);
        assert_eq!(med(&kept.program), 127.0);
        assert_eq!(med(&kept.blocks[0].1), 126.0);
        assert_eq!("visit".parse(), Ok(BlockRevisit::Visit));
        assert_eq!("alone".parse(), Ok(BlockRevisit::Alone));
        // The whole visit is the default since the live A/B of 2026-11-28.
        assert_eq!(Options::default().block_revisit, BlockRevisit::Visit);
        assert!("both"
            .parse::<BlockRevisit>()
            .unwrap_err()
            .contains("unknown block revisit"));
    }

    #[test]
    fn a_revisit_that_moves_its_point_does_not_spend_the_budget_of_the_sweep() {
        // Run AU, `pipe(qsort, nop)`: x = 4,096 and 8,192 slow in their first visits
        // hid x = 2,048, slow too. Here x = 2,048 is 14% slow, the two after it 25%, and
        // from x = 262,144 on the curve steps up by 40% for real (a cache): measured
        // again, those points stay.
        let xs: Vec<f64> = (10..=22).map(|e| 2f64.powi(e)).collect();
        let clean: Vec<f64> = xs.iter().map(|&x| 0.8 * x).collect();
        let mut first = clean.clone();
        first[1] *= 1.14;
        first[2] *= 1.25;
        first[3] *= 1.25;
        for y in &mut first[8..] {
            *y *= 1.4;
        }
        let again = |i: usize| {
            if (1..=3).contains(&i) {
                clean[i]
            } else {
                first[i]
            }
        };
        let mut ys = first.clone();
        let mut asked = Vec::new();
        let done = revisit_sweep(&xs, &mut ys, &[], 0.10, Keep::Faster, |i| {
            asked.push(i);
            Ok::<f64, ()>(again(i))
        })
        .unwrap();
        // The step's first point, then the two slow ones (moved: free), the step's
        // last point before it, and then x = 2,048, which the budget of three alone
        // would not have reached; then the step's first point a third time (it still
        // stands out), which spends the budget.
        assert_eq!(asked, vec![8, 3, 2, 7, 1, 8]);
        assert!(asked.len() > max_revisits(xs.len()));
        assert_eq!(ys[1..=3], clean[1..=3]);
        assert_eq!(ys[7..], first[7..]);
        let kept: Vec<bool> = done.iter().map(|r| r.kept_second).collect();
        assert_eq!(kept, vec![false, true, true, false, true, false]);
        // Every second visit as the first: the budget of a quarter of the sweep.
        let mut asked = 0;
        revisit_sweep(&xs, &mut first.clone(), &[], 0.10, Keep::Faster, |i| {
            asked += 1;
            Ok::<f64, ()>(first[i])
        })
        .unwrap();
        assert_eq!(asked, max_revisits(xs.len()));
        // Every second visit far off the first: at most half of the sweep in all.
        let mut asked = 0;
        revisit_sweep(&xs, &mut first.clone(), &[], 0.10, Keep::Faster, |i| {
            asked += 1;
            Ok::<f64, ()>(0.5 * first[i])
        })
        .unwrap();
        assert_eq!(asked, max_all_revisits(xs.len()));
        assert_eq!(max_all_revisits(13), 6);
        assert_eq!(max_all_revisits(4), 2);
        assert_eq!(max_all_revisits(2), 0);
    }

    /// `seq(inc, nop)` over x = 1,024 … 32,768, exactly the sum of its blocks, but at
    /// x = 2,048 and 8,192 other work slowed three of the program's five repetitions by
    /// 30-60%: the suite, and the program and its blocks as saved.
    fn slowed_seq_inc_nop() -> (Suite, Vec<Series>) {
        let xs = [1024, 2048, 4096, 8192, 16384, 32768];
        let sizes: Vec<usize> = xs.iter().map(|&x| x as usize).collect();
        let suite = term_suite("seq(inc, nop)", sizes, ImageSize::Small, Sampling::quick());
        let f = |x: f64| 3.0 + 0.6 * x;
        let mut program = saved("seq(inc, nop)", &xs, f);
        for p in program
            .points
            .iter_mut()
            .filter(|p| [2048, 8192].contains(&p.x))
        {
            let v = f(p.x as f64);
            *p = bench::PointStats::of(p.x, vec![1.3 * v, v, 1.5 * v, 1.01 * v, 1.6 * v]);
        }
        let all = vec![
            program,
            saved("seq(inc, nop)->inc", &xs, |x| 0.6 * x),
            saved("seq(inc, nop)->nop_warm", &xs, |_| 3.0),
        ];
        (suite, all)
    }

    #[test]
    fn by_default_repetitions_slowed_by_other_work_do_not_move_the_measured_time() {
        // `seq(inc, nop)` is exactly the sum of its blocks, but at two sizes other work
        // slowed three of the program's five repetitions by 30-60% (it only ever adds
        // time). The default statistic, the minimum, still sees the undisturbed program;
        // the median sees the disturbance and misses by it.
        let reg = Registry::builtin();
        let (suite, all) = slowed_seq_inc_nop();
        let by_default = reanalyze(&suite, &all, &reg, &reanalysis_options()).unwrap();
        let row = &by_default.report.rows[0];
        assert_eq!(Options::default().measure, Measure::Minimum);
        assert!(row.time_error < 1e-9, "{}", row.time_error);
        let median = Options {
            measure: Measure::Median,
            ..reanalysis_options()
        };
        let by_median = reanalyze(&suite, &all, &reg, &median).unwrap();
        let row = &by_median.report.rows[0];
        // The median of {1.3, 1, 1.5, 1.01, 1.6} is 1.3: the prediction is 23% low there.
        assert!(
            (row.time_error - 0.3 / 1.3).abs() < 1e-3,
            "{}",
            row.time_error
        );
        assert!(row.time_error > row.target.unwrap());
    }

    #[test]
    fn measure_auto_takes_the_mean_only_where_the_cores_were_mostly_slow() {
        // Per sample, the mean over cores of each core's fast share; the median of those.
        let slow = AutoMeasure::choose([&[0.1, 0.0][..], &[0.9, 1.0], &[0.0, 0.2]]);
        assert_eq!(slow.samples, 3);
        assert!((slow.fast_share.unwrap() - 0.1).abs() < 1e-12, "{slow:?}");
        assert_eq!(slow.measure, Measure::Mean);
        let fast = AutoMeasure::choose([&[0.9, 0.7][..], &[0.0, 0.1], &[1.0, 1.0]]);
        assert_eq!(fast.measure, Measure::Minimum);
        // At the bound the minimum stays; a sample without a finite share does not count.
        let even = AutoMeasure::choose([&[0.5, f64::NAN][..], &[], &[f64::NAN]]);
        assert_eq!((even.samples, even.fast_share), (1, Some(0.5)));
        assert_eq!(even.measure, Measure::Minimum);
        // Nothing to choose from: the minimum, and the report says so.
        let none = AutoMeasure::choose([]);
        assert_eq!((none.samples, none.fast_share), (0, None));
        assert_eq!(none.measure, Measure::Minimum);
        assert!(
            none.describe().contains("without any sample"),
            "{}",
            none.describe()
        );
        assert!(slow.describe().starts_with("statistic: the mean, chosen by --measure auto: each core in its fast state in a median 10% of the windows over 3 samples"), "{}", slow.describe());
        assert!(
            fast.describe().contains("at least 50%"),
            "{}",
            fast.describe()
        );
        let json = serde_json::to_value(&slow).unwrap();
        assert_eq!(json["measure"], "mean");
        assert_eq!(json["samples"], 3);
    }

    #[test]
    fn measure_auto_validates_a_live_run_again_under_the_mean_keeping_what_only_the_run_knew() {
        // The program's repetitions at two sizes slowed as in the test above: the minimum
        // sees the blocks' sum, the mean misses by the slowed repetitions.
        let reg = Registry::builtin();
        let (suite, all) = slowed_seq_inc_nop();
        let opts = reanalysis_options();
        let mut live = reanalyze(&suite, &all, &reg, &opts).unwrap().report.rows;
        assert!(live[0].time_error < 1e-9, "{}", live[0].time_error);
        // Both cores slow at both ends (6.5 µs a call against a fastest window of 3.4).
        let slow = bench::states::CoreStates {
            window_ms: 100.0,
            cores: vec![vec![6500.0, 6600.0], vec![6400.0, 6700.0]],
        };
        live[0].host = Some(HostAtRow {
            before: speed_check(1.0),
            after: speed_check(1.0),
            waited: None,
            usual: None,
            states: [Some(slow.clone()), Some(slow)],
            fastest: vec![3400.0, 3500.0],
        });
        let auto = AutoMeasure::of_rows(&live);
        assert_eq!((auto.samples, auto.fast_share), (2, Some(0.0)));
        assert_eq!(auto.measure, Measure::Mean);
        let revisits = vec![vec!["measured x = 2048 again".to_string()]];
        let (rows, components) =
            under_measure(&suite, &all, &reg, &opts, Measure::Mean, &live, &revisits).unwrap();
        let mean = Options {
            measure: Measure::Mean,
            ..opts.clone()
        };
        let again = reanalyze(&suite, &all, &reg, &mean).unwrap().report;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].time_error, again.rows[0].time_error);
        assert!(rows[0].time_error > 0.2, "{}", rows[0].time_error);
        assert_eq!(components, again.components);
        // (The check's NaN fields make `==` false on equal checks.)
        assert_eq!(format!("{:?}", rows[0].host), format!("{:?}", live[0].host));
        let notes = rows[0].notes.join("; ");
        assert!(notes.contains("measured x = 2048 again"), "{notes}");
        // The host notes of a row that misses, written again for the row as it now reads.
        assert!(
            notes.contains("the host's speed held across this configuration"),
            "{notes}"
        );
        // A suite whose measurements give another number of rows is an error, not a
        // silent mismatch.
        let two = [live[0].clone(), live[0].clone()];
        let err = under_measure(
            &suite,
            &all,
            &reg,
            &opts,
            Measure::Mean,
            &two,
            &[vec![], vec![]],
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("give 1 rows under the mean, the run had 2"),
            "{err}"
        );
    }

    #[test]
    fn saved_measurements_are_validated_again_without_running_anything() {
        let reg = Registry::builtin();
        let opts = reanalysis_options();
        let xs = [1024, 2048, 4096, 8192, 16384, 32768];
        let sizes: Vec<usize> = xs.iter().map(|&x| x as usize).collect();
        let mut suite = term_suite(
            "seq(inc, nop)",
            sizes.clone(),
            ImageSize::Small,
            Sampling::quick(),
        );
        suite
            .cases
            .push(case("not saved", "seq(qsort, nop)", &sizes));
        let program = saved("seq(inc, nop)", &xs, |x| 3.0 + 0.6 * x);
        let inc = saved("seq(inc, nop)->inc", &xs, |x| 0.6 * x);
        let nop = saved("seq(inc, nop)->nop_warm", &xs, |_| 3.0);
        let again = reanalyze(
            &suite,
            &[program.clone(), inc.clone(), nop.clone()],
            &reg,
            &opts,
        )
        .unwrap();
        // The program is the sum of its blocks: predicted exactly.
        let rows = &again.report.rows;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].configuration, "seq(inc, nop)");
        assert!(rows[0].time_error < 1e-9, "{}", rows[0].time_error);
        assert_eq!(again.missing, vec!["seq(qsort, nop)".to_string()]);
        let floor = rows[0].fit_floor.as_ref().unwrap();
        assert!(floor.share < 1e-9, "{floor:?}");
        // Composed from the measured blocks directly: exact too.
        assert!(rows[0].error_from_measured_blocks.unwrap() < 1e-9);
        assert_eq!(again.report.series.len(), 3);
        assert!(again.report.components.contains_key("nop_warm"));

        // A block with a step its model cannot follow: the prediction from its model
        // misses, the one from its measurements does not.
        let step = |x: f64| if x < 5000.0 { 0.6 * x } else { 0.7 * x };
        let stepped = reanalyze(
            &suite,
            &[
                saved("seq(inc, nop)", &xs, move |x| 3.0 + step(x)),
                saved("seq(inc, nop)->inc", &xs, step),
                nop.clone(),
            ],
            &reg,
            &opts,
        )
        .unwrap();
        let row = &stepped.report.rows[0];
        assert!(row.error_from_measured_blocks.unwrap() < 1e-9);
        assert!(row.time_error > 0.01, "{}", row.time_error);
        assert_eq!(row.fit_floor.as_ref().unwrap().block, "inc");

        // The separate protocol saves blocks under their own names.
        let mut plain = inc.clone();
        plain.name = "inc".into();
        let again = reanalyze(&suite, &[program.clone(), plain, nop.clone()], &reg, &opts);
        assert!(again.is_ok());

        // A block that is not there is an error naming it.
        let err = reanalyze(&suite, &[program.clone(), inc.clone()], &reg, &opts).unwrap_err();
        assert!(err.to_string().contains("nop_warm"), "{err}");
        // Nothing of the suite there: an error, not an empty report.
        let err = reanalyze(&suite, &[inc], &reg, &opts).unwrap_err();
        assert!(err.to_string().contains("none of the 2"), "{err}");

        // A pool's block saved before blocks were timed loaded: the block timed alone,
        // and the row says so.
        let suite = term_suite(
            "tpool(2, inc)",
            sizes.clone(),
            ImageSize::Small,
            Sampling::quick(),
        );
        let again = reanalyze(
            &suite,
            &[
                saved("tpool(2, inc)", &xs, |x| 0.3 * x),
                saved("tpool(2, inc)->inc", &xs, |x| 0.6 * x),
            ],
            &reg,
            &opts,
        )
        .unwrap();
        let notes = again.report.rows[0].notes.join("; ");
        assert!(
            notes.contains("inc_par2 composed from the block timed alone"),
            "{notes}"
        );

        // The blocks of a pool's seq saved before they were timed in that seq: the
        // blocks timed next to siblings running them alone, and the row says so.
        let t = "tpool(2, seq(inc, inc))";
        let suite = term_suite(t, sizes, ImageSize::Small, Sampling::quick());
        let program = saved(t, &xs, |x| 0.5 * x);
        let first = saved(&format!("{t}->inc_par2"), &xs, |x| 0.6 * x);
        let second = saved(&format!("{t}->inc_warm_par2"), &xs, |x| 0.4 * x);
        let again = reanalyze(
            &suite,
            &[program.clone(), first.clone(), second.clone()],
            &reg,
            &opts,
        )
        .unwrap();
        let row = &again.report.rows[0];
        assert!(row.time_error < 1e-9, "{}", row.time_error);
        let notes = row.notes.join("; ");
        assert!(
            notes.contains(
                "inc_par2_seq1_of_inc_then_inc, inc_warm_par2_seq2_of_inc_then_inc composed \
                 from the block timed next to siblings running it alone"
            ),
            "{notes}"
        );
        // Saved as timed in the seq: used as they are, without a note.
        let named = |s: &Series, key: &str| Series {
            name: format!("{t}->{key}"),
            ..s.clone()
        };
        let again = reanalyze(
            &suite,
            &[
                program,
                named(&first, "inc_par2_seq1_of_inc_then_inc"),
                named(&second, "inc_warm_par2_seq2_of_inc_then_inc"),
            ],
            &reg,
            &opts,
        )
        .unwrap();
        let row = &again.report.rows[0];
        assert!(row.time_error < 1e-9, "{}", row.time_error);
        assert!(
            !row.notes.join("; ").contains("re-analysed"),
            "{:?}",
            row.notes
        );
    }

    #[test]
    fn the_fit_floor_is_the_block_miss_that_weighs_most_in_the_prediction() {
        let s = saved("b->inc", &[1024, 2048, 4096], |x| x);
        let opts = reanalysis_options();
        let misses = fit_misses(&parse_model("1.1 * x").unwrap(), &s, &opts);
        assert_eq!(misses.len(), 3);
        assert!(misses.iter().all(|m| (m.relative - 0.1).abs() < 1e-12));
        assert!((misses[2].ns - 409.6).abs() < 1e-9);
        // A model that cannot be evaluated there is as far as it gets.
        let bad = fit_misses(&parse_model("log2(x - 2048)").unwrap(), &s, &opts);
        assert!(bad[0].relative.is_nan());

        // Two blocks of a seq: a 20% miss of a 10 ns block weighs less than a 1% miss
        // of a 1000 ns block in a prediction of about 1010 ns.
        let blocks: BTreeMap<String, Vec<PointMiss>> = [
            (
                "nop".to_string(),
                vec![PointMiss {
                    x: 1024,
                    value: 10.0,
                    ns: 2.0,
                    relative: 0.2,
                }],
            ),
            (
                "inc".to_string(),
                vec![PointMiss {
                    x: 1024,
                    value: 1000.0,
                    ns: 10.0,
                    relative: 0.01,
                }],
            ),
        ]
        .into_iter()
        .collect();
        let f = fit_floor(&blocks, &parse_model("1010").unwrap(), &[1024]).unwrap();
        assert_eq!((f.block.as_str(), f.x), ("inc", 1024));
        assert!((f.share - 10.0 / 1010.0).abs() < 1e-12);
        // Measured at other sizes than the program (`map` over images): its own share.
        let f = fit_floor(&blocks, &parse_model("1010").unwrap(), &[8, 16]).unwrap();
        assert_eq!(f.block, "nop");
        assert_eq!(f.share, 0.2);
    }

    #[test]
    fn a_pipeline_of_single_blocks_loses_what_its_stages_phases_say() {
        let reg = Registry::builtin();
        let opts = Options {
            cores: 2,
            ..Options::default()
        };
        let losses = |term: &str, phases: &dyn Fn(&str) -> PhasesOf, opts: &Options| {
            let c = case("g", term, &[1024, 4096]);
            let plan = parse_plan("<t>", term).unwrap().1;
            let as_composed = input_plan(&plan, &reg, opts.load_cores());
            let mut map = Phases::new();
            for k in as_composed.kernels() {
                let (key, ..) =
                    block_of(&k, &as_composed, c.image, &reg, opts.load_cores()).unwrap();
                map.insert(key.clone(), phases(&key));
            }
            phase_losses(&as_composed, &c, &map, &reg, opts).unwrap()
        };
        // Windows at 0.8 or 1.2 of the mean at x = 1024, steady at 4096.
        let at = |x, phases: Vec<f64>| PhasesAt {
            x,
            phases,
            stages: Vec::new(),
        };
        let swinging = |_: &str| vec![at(1024, vec![0.8, 1.2]), at(4096, vec![1.0, 1.0])];
        let got = losses("pipe(inc, inc)", &swinging, &opts);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].pipeline, 0);
        // Equal stages lose Σ w_i · (1 − r_i) of their time: a tenth at 1024, none at 4096.
        let at_equal = |x: f64| -> f64 {
            got[0]
                .hinges
                .iter()
                .map(|(r, w)| w.eval_at(&[("x", x)]).unwrap() * (1.0 - r))
                .sum()
        };
        assert!(
            (at_equal(1024.0) - 0.1).abs() < 1e-3,
            "{}",
            at_equal(1024.0)
        );
        assert_eq!(at_equal(4096.0), 0.0);
        // Told not to; a stage that is a pattern; a stage without phases: none.
        let off = Options {
            phases: false,
            ..opts.clone()
        };
        assert!(losses("pipe(inc, inc)", &swinging, &off).is_empty());
        assert!(losses("pipe(tpool(2, inc), inc)", &swinging, &opts).is_empty());
        let one_missing = |key: &str| {
            if key.contains("stage2") {
                Vec::new()
            } else {
                swinging(key)
            }
        };
        assert!(losses("pipe(inc, inc)", &one_missing, &opts).is_empty());
        // A pool around the pipeline: the pipeline inside is still the first.
        assert_eq!(
            losses("tpool(2, pipe(inc, inc))", &swinging, &opts).len(),
            1
        );
    }

    #[test]
    fn saved_names_tell_mapreduce_images_apart() {
        let plan = |t: &str| parse_plan("<t>", t).unwrap().1;
        let mr = "mapreduce(map, reduce_pairwise, nodes=1, threads=1, keys=x, per_key=768)";
        let at = |image| Case {
            group: String::new(),
            term: mr.into(),
            sizes: vec![4, 8],
            image,
        };
        assert_eq!(
            case_id(&at(ImageSize::Small), &plan(mr)),
            format!("{mr}@small")
        );
        assert_ne!(
            case_id(&at(ImageSize::Small), &plan(mr)),
            case_id(&at(ImageSize::Large), &plan(mr))
        );
        // Without a MapReduce the image plays no part: the term names the configuration.
        let c = case("g", "pipe(qsort, inc)", &[1024]);
        assert_eq!(case_id(&c, &plan("pipe(qsort, inc)")), "pipe(qsort, inc)");
    }

    #[test]
    fn loaded_block_names_lead_back_to_the_block_timed_alone() {
        assert_eq!(unloaded_key("inc_par2").as_deref(), Some("inc"));
        assert_eq!(
            unloaded_key("qsort_warm_par12").as_deref(),
            Some("qsort_warm")
        );
        assert_eq!(
            unloaded_key("inc_remote_stage2_of_qsort_then_inc").as_deref(),
            Some("inc_remote")
        );
        assert_eq!(
            unloaded_key("inc_warm_par2_seq2_of_inc_then_inc").as_deref(),
            Some("inc_warm")
        );
        assert_eq!(unloaded_key("inc_remote"), None);
        assert_eq!(unloaded_key("my_par1"), None);
        // A block of a pool's seq leads back to the block timed next to itself first.
        assert_eq!(
            unreplicated_key("inc_warm_par2_seq2_of_inc_then_inc").as_deref(),
            Some("inc_warm_par2")
        );
        assert_eq!(unreplicated_key("inc_par2"), None);
    }

    #[test]
    fn saved_files_read_back_as_series() {
        let mut exp = perfcompose_core::measure::Experiment::new(vec!["x".into()]);
        let key = |c: &str| perfcompose_core::measure::SeriesKey::new(c, "time");
        exp.push(key("pipe(qsort, inc)"), vec![1024.0], vec![5.0, 6.0, 7.0]);
        exp.push(key("pipe(qsort, inc)->qsort"), vec![1024.0], vec![4.0]);
        let series = series_from_experiment(&exp);
        assert_eq!(series.len(), 2);
        let program = series
            .iter()
            .find(|s| s.name == "pipe(qsort, inc)")
            .unwrap();
        assert_eq!(program.kind, "program");
        assert_eq!(program.points[0].x, 1024);
        assert_eq!(program.points[0].median, 6.0);
        assert!(program.points[0].converged);
        let block = series.iter().find(|s| s.name.ends_with("->qsort")).unwrap();
        assert_eq!(block.kind, "kernel");
    }

    /// The paper grid and a program's time per element over it.
    fn grid() -> Vec<f64> {
        [
            1024, 2048, 4096, 8192, 16384, 32768, 65536, 98304, 131072, 163840, 196608, 229376,
            262144,
        ]
        .iter()
        .map(|&x| x as f64)
        .collect()
    }

    #[test]
    fn neighbours_predict_a_power_law_exactly() {
        let xs = grid();
        // x^0.1 * 3 per element, and x log x over x (a qsort): both smooth.
        let power: Vec<f64> = xs.iter().map(|x| 3.0 * x.powf(0.1)).collect();
        let qsort: Vec<f64> = xs.iter().map(|x| 0.9 * x.log2()).collect();
        for i in 0..xs.len() {
            let r = neighbour_reference(&xs, &power, i);
            assert!(
                (r / power[i] - 1.0).abs() < 1e-9,
                "{i}: {r} vs {}",
                power[i]
            );
            let r = neighbour_reference(&xs, &qsort, i);
            assert!(
                (r / qsort[i] - 1.0).abs() < 0.02,
                "{i}: {r} vs {}",
                qsort[i]
            );
        }
        let none = vec![false; xs.len()];
        assert_eq!(disturbed_point(&xs, &power, &none, 0.10), None);
        assert_eq!(disturbed_point(&xs, &qsort, &none, 0.10), None);
        // Too few points to say anything.
        assert!(neighbour_reference(&xs[..1], &power[..1], 0).is_nan());
        assert_eq!(disturbed_point(&xs[..2], &power[..2], &none, 0.10), None);
    }

    #[test]
    fn a_disturbed_point_stands_out_from_its_neighbours() {
        let xs = grid();
        // Run S, `seq(inc, inc)`, ns per element over x: x = 196,608 was measured during
        // a burst (2.51 against 1.52-1.55 around it).
        let per_x = [
            1.6065, 1.5438, 1.5667, 1.5710, 1.5564, 1.5145, 1.5482, 1.5433, 1.5170, 1.5304, 2.5114,
            1.5405, 1.5458,
        ];
        let ys: Vec<f64> = xs.iter().zip(per_x).map(|(x, p)| x * p).collect();
        let mut done = vec![false; xs.len()];
        assert_eq!(disturbed_point(&xs, &ys, &done, 0.10), Some(10));
        let reference = neighbour_reference(&xs, &ys, 10) / xs[10];
        assert!((reference / 1.535 - 1.0).abs() < 0.02, "{reference}");
        // Once that point was visited again, nothing else stands out...
        done[10] = true;
        assert_eq!(disturbed_point(&xs, &ys, &done, 0.10), None);
        // ... and with a larger target the burst itself would not have.
        assert_eq!(disturbed_point(&xs, &ys, &[false; 13], 0.70), None);

        // Run S, `seq(inc, nop)`: the first two sizes inflated; the worse one first, and
        // once it reads like its neighbours, the other.
        let mut per_x = [
            1.2357, 1.4623, 0.9043, 0.9184, 0.9013, 0.9244, 0.9262, 0.9084, 0.8180, 0.8427, 0.8346,
            0.8476, 0.8421,
        ];
        let ys = |p: &[f64]| -> Vec<f64> { xs.iter().zip(p).map(|(x, p)| x * p).collect() };
        let mut done = vec![false; xs.len()];
        assert_eq!(disturbed_point(&xs, &ys(&per_x), &done, 0.10), Some(1));
        done[1] = true;
        per_x[1] = 0.91;
        assert_eq!(disturbed_point(&xs, &ys(&per_x), &done, 0.10), Some(0));
        done[0] = true;
        per_x[0] = 0.92;
        assert_eq!(disturbed_point(&xs, &ys(&per_x), &done, 0.10), None);
    }

    #[test]
    fn a_quarter_of_a_sweep_at_most_is_measured_again() {
        assert_eq!(max_revisits(2), 0);
        assert_eq!(max_revisits(4), 2);
        assert_eq!(max_revisits(6), 2);
        assert_eq!(max_revisits(13), 3);
    }
}
