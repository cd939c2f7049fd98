//! From measurements to a row: fit the blocks and the program (segmented where a block's
//! input outgrows a cache), compose the design from the block models plus the calibrated
//! pattern overhead and what a pipeline loses to its stages' phases, compare with the
//! program, and say why a row missed, as far as the measurements tell.

use std::collections::BTreeMap;

use perfcompose_core::components::{Component, ComponentSource, Components};
use perfcompose_core::compose::interval::{self, IntervalOptions};
use perfcompose_core::compose::predict::{Overhead, PhaseLoss};
use perfcompose_core::compose::{compose, ComposeOptions, Composition};
use perfcompose_core::fit::{modeler, FitOptions, Measure};
use perfcompose_core::measure::{Point, Summary};
use perfcompose_core::model::{format_significant, Expr};
use perfcompose_core::term::Term;
use perfcompose_core::uncertainty::Uncertainty;
use serde::{Deserialize, Serialize};

use super::blocks::{reductions, BlockKey, Placement};
use super::notes::Note;
use super::options::{row_target, Options};
use super::report::{Compared, FitFloor, PointMiss, Row};
use super::suite::Case;
use super::verdict::{design_kernels, one_run_interval, Coverage};
use crate::bench::{self, Series};
use crate::data::ImageSize;
use crate::error::Error;
use crate::kernel::{Inputs, Kernel, Op, Registry};
use crate::plan::Plan;

/// Above this coefficient of variation a point counts as noisy in the reasons of a miss.
pub const NOISY_CV: f64 = 0.05;
/// Above this relative miss of a block model at its own points, the reasons of a miss
/// name it (the fit alone costs the prediction that much).
pub const FIT_FLOOR_NOTE: f64 = 0.03;

/// What the unit tests of pipeline stages recorded besides their times, by block key: per
/// size, the quantiles of the stage's window means over its repetition's mean
/// ([`bench::PointStats::phases`]). Saved in a run's `phases.json`.
pub type Phases = BTreeMap<String, Vec<PhasesAt>>;

/// One block's phases at one size ([`Phases`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhasesAt {
    pub x: u64,
    pub phases: Vec<f64>,
}

/// The phases recorded in `series` (block series named by key).
pub fn phases_of(series: &[Series]) -> Phases {
    series
        .iter()
        .filter_map(|s| {
            let points: Vec<PhasesAt> = s
                .points
                .iter()
                .filter(|p| !p.phases.is_empty())
                .map(|p| PhasesAt {
                    x: p.x,
                    phases: p.phases.clone(),
                })
                .collect();
            (!points.is_empty()).then(|| (s.name.clone(), points))
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

/// [`cache_breaks`] of `kernel` measured as `series` on `image`.
pub fn block_breaks(
    registry: &Registry,
    kernel: &str,
    image: ImageSize,
    series: &Series,
    caches: &[u64],
) -> Vec<f64> {
    let Ok(k) = registry.get(kernel) else {
        return Vec::new();
    };
    let xs: Vec<u64> = series.points.iter().map(|p| p.x).collect();
    cache_breaks(k.as_ref(), &xs, &Inputs::with_image(image), caches)
}

/// [`cache_breaks`] of a whole program: its stream elements are its first block's inputs
/// (none for a MapReduce, whose size is a key count).
fn program_breaks(
    plan: &Plan,
    registry: &Registry,
    image: ImageSize,
    series: &Series,
    caches: &[u64],
) -> Vec<f64> {
    if plan.has_mapreduce() {
        return Vec::new();
    }
    match plan.kernels().first() {
        Some(first) => block_breaks(registry, first, image, series, caches),
        None => Vec::new(),
    }
}

/// Fit `series` with the options' modeler and statistic, breaking at `breaks`.
pub fn fit_series(series: &Series, opts: &Options, breaks: &[f64]) -> Result<Expr, Error> {
    Ok(fit_points(series, opts, breaks)?.0.model)
}

/// [`fit_series`], with the fit and the points it was fitted to.
fn fit_points(
    series: &Series,
    opts: &Options,
    breaks: &[f64],
) -> Result<(perfcompose_core::fit::Fit, Vec<Point>, FitOptions), Error> {
    let m = modeler(&opts.modeler).ok_or_else(|| Error::UnknownModeler {
        name: opts.modeler.clone(),
    })?;
    let points: Vec<Point> = series
        .points
        .iter()
        .map(|p| Point::new(vec![p.x as f64], p.values.clone()))
        .collect();
    let options = FitOptions {
        measure: Some(opts.measure),
        allow_negative: false,
        breaks: breaks.to_vec(),
    };
    let fit = m
        .fit(&[bench::PARAMETER.to_string()], &points, &options)
        .map_err(|source| Error::Fit {
            series: series.name.clone(),
            source,
        })?;
    Ok((fit, points, options))
}

/// Fit block `series` as [`fit_series`] does, with the model's uncertainty
/// ([`INTERVAL_REPLICATES`] bootstrap refits) and its run-to-run factors.
pub fn fit_block(series: &Series, opts: &Options, breaks: &[f64]) -> Result<BlockFit, Error> {
    let (fit, points, options) = fit_points(series, opts, breaks)?;
    let uncertainty = modeler(&opts.modeler).and_then(|m| {
        perfcompose_core::uncertainty::fitted(
            &series.name,
            &fit,
            m,
            &points,
            &options,
            INTERVAL_REPLICATES,
            perfcompose_core::uncertainty::DEFAULT_SEED,
        )
    });
    Ok(BlockFit {
        model: fit.model,
        uncertainty,
        run_factors: run_factors(series, opts.measure),
    })
}

/// One series per name with every repetition of all its series, point by point (a
/// block's suite-wide model, for the report).
pub fn pooled(series: &[Series]) -> Vec<Series> {
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

/// The misses of `model` at every point of `series`.
pub fn fit_misses(model: &Expr, series: &Series, opts: &Options) -> Vec<PointMiss> {
    series
        .points
        .iter()
        .filter_map(|p| {
            let v = Summary::of(&p.values)?.get(opts.measure);
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

/// What each pipeline of single blocks of `composed` loses to its stages' phases
/// ([`PhaseLoss`]): per size all its stages' unit tests recorded phases at, the hinges of
/// [`bench::tandem::phase_hinges`]; each hinge's weight a constant per size, stepping at
/// the geometric middles between the sizes. Pipelines with a stage that is a pattern, or
/// without a stage's unit test, have none.
fn phase_losses(placement: &Placement, phases: &Phases, cores: usize) -> Vec<PhaseLoss> {
    if phases.is_empty() {
        return Vec::new();
    }
    let mut pipelines: Vec<(String, usize, Vec<Vec<PhasesAt>>)> = Vec::new();
    crate::overhead::each_pipeline(&placement.composed, cores, &mut |pipe, index, _, stages| {
        let stages: Option<Vec<Vec<PhasesAt>>> = stages
            .iter()
            .map(|s| match s {
                Plan::Kernel(k) => {
                    let key = placement.blocks.get(k)?.to_string();
                    phases.get(&key).cloned()
                }
                _ => None,
            })
            .collect();
        if let Some(stages) = stages.filter(|s| s.len() >= 2) {
            pipelines.push((pipe.to_string(), index, stages));
        }
    });
    let mut out = Vec::new();
    for (what, pipeline, stages) in pipelines {
        let mut sizes: Vec<u64> = stages.iter().flatten().map(|p| p.x).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let mut at: Vec<(u64, Vec<(f64, f64)>)> = Vec::new();
        for x in sizes {
            let all: Vec<&[f64]> = stages
                .iter()
                .filter_map(|s| s.iter().find(|p| p.x == x))
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
    out
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

/// `term` composed from `comps`, thread counts capped at the cores.
fn compose_capped(term: &Term, comps: &Components, cores: usize) -> Result<Composition, Error> {
    Ok(compose(
        term,
        comps,
        ComposeOptions {
            cores: Some(cores as u64),
        },
    )?)
}

/// `comps` with component `name` given `model`, which came from `at`.
fn with_component(comps: Components, name: &str, model: Expr, at: String) -> Components {
    let text = model.to_string();
    comps.with(Component::exact(
        name,
        model,
        ComponentSource::Model { text, at },
    ))
}

/// A block's fitted model, with what the one-run interval needs of it.
#[derive(Clone, Debug)]
pub struct BlockFit {
    pub model: Expr,
    /// The model's uncertainty (bootstrap refits of its fit), when it has one.
    pub uncertainty: Option<Uncertainty>,
    /// Per measured size, each repetition over the statistic the model is fitted to: how
    /// far one run of the block falls from it.
    pub run_factors: BTreeMap<u64, Vec<f64>>,
}

impl BlockFit {
    /// A model alone (no interval to draw).
    pub fn model(model: Expr) -> BlockFit {
        BlockFit {
            model,
            uncertainty: None,
            run_factors: BTreeMap::new(),
        }
    }
}

/// Each repetition of each point of `series` over the point's statistic `measure`.
pub fn run_factors(series: &Series, measure: Measure) -> BTreeMap<u64, Vec<f64>> {
    series
        .points
        .iter()
        .filter_map(|p| {
            let s = Summary::of(&p.values)?.get(measure);
            (s > 0.0).then(|| (p.x, p.values.iter().map(|v| v / s).collect()))
        })
        .collect()
}

/// The measurements of one configuration and what was fitted to its blocks.
pub struct CaseData<'a> {
    pub case: &'a Case,
    /// The design as written.
    pub plan: &'a Plan,
    pub term: &'a Term,
    pub placement: &'a Placement,
    /// The configuration's block fits, by measurement.
    pub blocks: BTreeMap<BlockKey, BlockFit>,
    /// Each block model's misses at its own points, by measurement.
    pub block_misses: &'a BTreeMap<BlockKey, Vec<PointMiss>>,
    pub phases: &'a Phases,
    /// The program, every repetition pooled.
    pub program: &'a Series,
    pub repeat_error: Option<f64>,
}

/// A configuration's prediction: the design composed from its block models, the
/// calibrated overhead and what its pipelines lose to their stages' phases.
pub struct Prediction {
    /// The design as composed, each block named after its measurement.
    pub term: Term,
    pub components: Components,
    pub composition: Composition,
    pub overhead: Option<Overhead>,
    /// The whole prediction, overhead included.
    pub modular: Expr,
}

impl Prediction {
    /// The prediction at size `x` (`NaN` where it does not evaluate).
    pub fn at(&self, x: u64) -> f64 {
        self.modular
            .eval_at(&[(bench::PARAMETER, x as f64)])
            .unwrap_or(f64::NAN)
    }
}

/// Compose design `plan` (parsed as `term`, placed as `placement`) from the block
/// `models`, with the options' overhead and the pipelines' phase losses from `phases`.
pub fn predict(
    plan: &Plan,
    term: &Term,
    placement: &Placement,
    models: &BTreeMap<BlockKey, Expr>,
    phases: &Phases,
    opts: &Options,
) -> Result<Prediction, Error> {
    let term = placement.composed_term(term);
    let mut comps = Components::default();
    for (name, key) in &placement.blocks {
        let model = models.get(key).cloned().ok_or_else(|| Error::NoModel {
            block: key.to_string(),
        })?;
        comps = with_component(
            comps,
            name,
            model,
            format!("fitted to `{key}` measured on this machine"),
        );
    }
    let composition = compose_capped(&term, &comps, opts.cores)?;
    let mut overhead = opts
        .overhead
        .as_ref()
        .map(|o| o.for_statistic(opts.measure).overhead(plan, "calibration"));
    let losses = phase_losses(placement, phases, opts.cores);
    if !losses.is_empty() {
        overhead
            .get_or_insert_with(|| Overhead::constant(0.0, "none"))
            .phases = losses;
    }
    let modular = match &overhead {
        Some(o) => o.apply_composed(
            &composition,
            &term,
            &comps,
            ComposeOptions {
                cores: Some(opts.cores as u64),
            },
        ),
        None => composition.model.clone(),
    };
    Ok(Prediction {
        term,
        components: comps,
        composition,
        overhead,
        modular,
    })
}

/// The program's points, each reduced to the statistic `measure`, against the prediction
/// `modular`, and the row's time error: the largest relative difference among them.
pub fn compare(program: &Series, modular: &Expr, measure: Measure) -> (Vec<Compared>, f64) {
    let points: Vec<Compared> = program
        .points
        .iter()
        .map(|p| Compared {
            x: p.x,
            measured: Summary::of(&p.values).map_or(f64::NAN, |s| s.get(measure)),
            cv: p.cv,
            predicted: modular
                .eval_at(&[(bench::PARAMETER, p.x as f64)])
                .unwrap_or(f64::NAN),
            interval: None,
        })
        .collect();
    let time_error = points
        .iter()
        .map(|p| (p.predicted - p.measured).abs() / p.measured)
        .fold(0.0, f64::max);
    (points, time_error)
}

/// Bootstrap refits per block for the one-run intervals: enough for the 2.5% and 97.5%
/// quantiles of a few blocks' draws, few enough that the suite's analysis stays seconds.
pub const INTERVAL_REPLICATES: usize = 50;

/// Per point of `points`, the interval one run of the program falls in at `opts.level`
/// ([`one_run_interval`]): the prediction drawn under the blocks' fit uncertainty (the
/// composition of `predict`'s intervals), times the blocks' run-to-run factors at that
/// size (every block's at the size where it was measured there, all its factors where
/// it is swept over other sizes).
fn one_run_intervals(
    prediction: &Prediction,
    blocks: &BTreeMap<BlockKey, BlockFit>,
    placement: &Placement,
    points: &mut [Compared],
    opts: &Options,
) {
    let mut templates = prediction.components.clone();
    for (name, key) in &placement.blocks {
        let Some(u) = blocks.get(key).and_then(|b| b.uncertainty.as_ref()) else {
            continue;
        };
        if let Some(c) = templates.get(name) {
            let c = Component {
                uncertainty: Some(u.renamed(name)),
                ..c.clone()
            };
            templates = templates.with(c);
        }
    }
    let options = IntervalOptions {
        level: opts.level,
        ..IntervalOptions::default()
    };
    let draws = interval::composed_template(
        &prediction.term,
        &interval::templated(&templates),
        ComposeOptions {
            cores: Some(opts.cores as u64),
        },
        prediction.overhead.as_ref(),
    )
    .ok()
    .and_then(|t| {
        let sampler = interval::Sampler::new(&[&t], &templates, options)?;
        let batch = sampler.batch(&t);
        Some((sampler, batch))
    });
    for p in points.iter_mut() {
        let predictions = draws
            .as_ref()
            .and_then(|(s, b)| {
                s.values(b, &vec![(bench::PARAMETER.to_string(), p.x as f64)])
                    .ok()
            })
            .unwrap_or_else(|| vec![p.predicted]);
        let factors: Vec<f64> = blocks
            .values()
            .flat_map(|b| match b.run_factors.get(&p.x) {
                Some(f) => f.clone(),
                None => b.run_factors.values().flatten().copied().collect(),
            })
            .collect();
        p.interval = one_run_interval(&predictions, &factors, opts.level);
    }
}

pub fn analyze_case(d: &CaseData<'_>, registry: &Registry, opts: &Options) -> Result<Row, Error> {
    let c = d.case;
    let placement = d.placement;
    let models: BTreeMap<BlockKey, Expr> = d
        .blocks
        .iter()
        .map(|(k, b)| (k.clone(), b.model.clone()))
        .collect();
    let prediction = predict(d.plan, d.term, placement, &models, d.phases, opts)?;
    let used: BTreeMap<BlockKey, Expr> = placement
        .blocks
        .values()
        .filter_map(|k| Some((k.clone(), models.get(k)?.clone())))
        .collect();
    let overhead_ns = prediction
        .overhead
        .as_ref()
        .map_or(0.0, |o| o.ns_per_element);
    let modular = prediction.modular.clone();
    let from_blocks = compose_measured_blocks(d, &prediction, opts)?;
    let mut notes: Vec<Note> = prediction
        .composition
        .notes
        .iter()
        .map(|n| Note::Composition {
            text: n.text.clone(),
        })
        .collect();
    if placement.composed != *d.plan {
        notes.push(Note::ComposedAs {
            term: placement.composed.to_string(),
        });
    }
    for r in reductions(d.plan) {
        let key = &placement.blocks[r];
        notes.push(Note::ReductionWarm {
            reduction: r.to_string(),
            key: key.to_string(),
            per_key: registry
                .get(r)
                .is_ok_and(|k| matches!(k.op(), Op::ReducePerKey(_))),
            loaded: key.conditions.siblings > 0,
        });
    }
    let monolithic = fit_series(
        d.program,
        opts,
        &program_breaks(d.plan, registry, c.image, d.program, &opts.caches),
    )?;
    let (mut points, time_error) = compare(d.program, &modular, opts.measure);
    one_run_intervals(&prediction, &d.blocks, placement, &mut points, opts);
    let x_max = c.sizes.iter().copied().max().unwrap_or(1) as f64;
    let x_min = c.sizes.iter().copied().min().unwrap_or(1) as f64;
    let coefficient_error = coefficient_error(&modular, &monolithic, x_min, x_max);
    let threads = d.plan.threads();
    let within_cores = threads <= opts.cores;
    let target = within_cores.then(|| row_target(d.plan));
    if !within_cores {
        notes.push(Note::Oversubscribed {
            threads,
            cores: opts.cores,
        });
    }
    let misses: BTreeMap<String, Vec<PointMiss>> = used
        .keys()
        .filter_map(|k| d.block_misses.get(k).map(|m| (k.to_string(), m.clone())))
        .collect();
    let mut row = Row {
        group: c.group.clone(),
        configuration: c.term.clone(),
        kernels: design_kernels(d.plan, c.image),
        threads,
        within_cores,
        fit_floor: fit_floor(&misses, &modular, &c.sizes),
        modular,
        monolithic,
        coefficient_error,
        time_error,
        overhead_ns,
        target,
        notes,
        coverage: Coverage::default(),
        points,
        error_from_measured_blocks: from_blocks,
        components: used.into_iter().map(|(k, m)| (k.to_string(), m)).collect(),
        repeat_error: d.repeat_error,
        host: None,
        rounds: None,
    };
    row.coverage = row_coverage(&row.points, d.program);
    Ok(row)
}

/// Add the reasons of a miss to `row` (once its rounds are in): on a judged row not
/// decided within its target, and on a row whose coefficient error is not comparable.
pub fn explain(row: &mut Row, program: &Series, opts: &Options) {
    if row.passed() == Some(false) || row.coefficient_error.is_nan() {
        let reasons = miss_reasons(row, program, opts);
        row.notes.extend(reasons);
    }
}

/// How many of the program's repetitions fall inside their point's one-run interval.
pub fn row_coverage(points: &[Compared], program: &Series) -> Coverage {
    points
        .iter()
        .filter_map(|c| {
            let i = c.interval?;
            let p = program.points.iter().find(|p| p.x == c.x)?;
            Some(Coverage::of(&p.values, i.low, i.high))
        })
        .fold(Coverage::default(), |a, b| a + b)
}

/// The largest relative error, over the program's sizes, of the prediction composed
/// from the blocks' measured statistics at each size (each block a constant: its value
/// there), overhead included. `None` for a MapReduce (its blocks run at other sizes than
/// the job's: the map on one image, the reduction on `d(x)` values) and when some block
/// was not measured at every program size.
fn compose_measured_blocks(
    d: &CaseData<'_>,
    prediction: &Prediction,
    opts: &Options,
) -> Result<Option<f64>, Error> {
    if d.plan.has_mapreduce() {
        return Ok(None);
    }
    let term = &prediction.term;
    let mut worst: f64 = 0.0;
    for p in &d.program.points {
        let Some(program) = Summary::of(&p.values).map(|s| s.get(opts.measure)) else {
            continue;
        };
        let mut comps = Components::default();
        for (name, key) in &d.placement.blocks {
            let Some(v) = d
                .block_misses
                .get(key)
                .and_then(|ms| ms.iter().find(|m| m.x == p.x))
                .map(|m| m.value)
            else {
                return Ok(None);
            };
            comps = with_component(
                comps,
                name,
                Expr::constant(v),
                format!("`{key}` measured at x = {}", p.x),
            );
        }
        let composed = compose_capped(term, &comps, opts.cores)?;
        let model = match &prediction.overhead {
            Some(o) => o.apply_composed(
                &composed,
                term,
                &comps,
                ComposeOptions {
                    cores: Some(opts.cores as u64),
                },
            ),
            None => composed.model,
        };
        let Ok(predicted) = model.eval_at(&[(bench::PARAMETER, p.x as f64)]) else {
            return Ok(None);
        };
        worst = worst.max((predicted - program).abs() / program);
    }
    Ok(Some(worst))
}

/// Relative error of the modular model's leading coefficient against the whole
/// program's, as the growth of the two models over the measured sizes:
/// `|ΔM_mod − ΔM_mono| / |ΔM_mono|` with `ΔM = M(x_max) − M(x_min)`.
///
/// For two models of the paper's form `a + c·m(x)` with the same `m` this is exactly the
/// relative error of the coefficients `c` (the pattern-composition paper's Table 2 metric; constants drop out).
/// Fitted models are often not of that form: a modeler may split the growth of a
/// cache-sensitive block between `x` and `x·log2(x)` in one fit and put it all in one
/// term in another fit of the same data; on 8–13 noisy points they fit alike. Comparing
/// the coefficients of one term then measures how the fits split the growth, not the
/// prediction. The growth over the measured range is what every such split agrees on,
/// and it is what the leading coefficient stands for. `NaN` when the whole program's
/// model does not grow.
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
pub(super) fn miss_reasons(row: &Row, measured: &Series, opts: &Options) -> Vec<Note> {
    let mut r = Vec::new();
    if row.coefficient_error.is_nan() {
        r.push(Note::NotComparable);
    }
    let worst_cv = measured.points.iter().map(|p| p.cv).fold(0.0, f64::max);
    if worst_cv > NOISY_CV {
        r.push(Note::Noisy { cv: worst_cv });
    }
    if measured.points.iter().any(|p| !p.converged) {
        r.push(Note::NotConverged);
    }
    if let (Some(a), Some(b)) = (row.modular.leading(), row.monolithic.leading()) {
        let same = a.terms().map(|(_, m)| m.clone()).collect::<Vec<_>>()
            == b.terms().map(|(_, m)| m.clone()).collect::<Vec<_>>();
        if !same {
            r.push(Note::LeadingTerm {
                monolithic: Expr::poly(b).rounded(4),
                modular: Expr::poly(a).rounded(4),
            });
        }
    }
    if let Some(e) = row.error_from_measured_blocks {
        r.push(Note::FromMeasuredBlocks {
            error: e,
            measure: opts.measure.to_string(),
        });
    }
    if let Some(e) = row.repeat_error {
        r.push(Note::RepeatVariation {
            error: e,
            target: row.target,
        });
    }
    if let Some(f) = &row.fit_floor {
        if f.share > FIT_FLOOR_NOTE {
            r.push(Note::FitFloor {
                block: f.block.clone(),
                x: f.x,
                relative: f.relative,
                share: f.share,
            });
        }
    }
    // The worst point tells whether the miss is at small x (overhead) or large x
    // (contention).
    if let Some(worst) = row.points.iter().max_by(|p, q| {
        let e = |c: &Compared| (c.predicted - c.measured).abs() / c.measured;
        e(p).total_cmp(&e(q))
    }) {
        let under = worst.predicted < worst.measured;
        r.push(Note::WorstPoint {
            x: worst.x,
            under,
            overhead_missing: under && opts.overhead.is_none() && worst.x == row.points[0].x,
        });
    }
    r
}

/// Blocks timed in more than one configuration of a run — the same key, so the same
/// measurement — whose medians at a common size disagree by more than the row's target
/// (10% without one) and whose 95% confidence intervals there do not overlap: the
/// machine's speed changed between the two, and a row composed from such a block can
/// miss (or pass) for the host's sake, not the model's. `blocks` pairs a row index with
/// one of its block series, named by key; `ids[i]` names row `i`. One note per
/// disagreeing key per row, naming the worst size and the other configuration.
pub fn block_drift_notes(
    ids: &[String],
    targets: &[Option<f64>],
    blocks: &[(usize, Series)],
) -> Vec<Vec<Note>> {
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
        if let (Some((_, x, here, there, other)), Some(n)) = (worst, notes.get_mut(*row)) {
            n.push(Note::BlockDrift {
                block: mine.name.clone(),
                x,
                here_ns: here,
                there_ns: there,
                other: ids
                    .get(other)
                    .map_or_else(|| "?".to_string(), String::clone),
            });
        }
    }
    notes
}
