//! `predict`: compose a term, evaluate it on a grid, and explain the result — the
//! dominant term, each pipeline's bottleneck stage and its crossovers, capping notes,
//! and suggestions from the relational theory.
//!
//! [`Prediction`] is also the stable JSON schema of `perfcompose predict --json` (see the
//! README): field names and meanings only ever gain members.

use std::collections::BTreeMap;

use serde::Serialize;

use super::crossover::{self, Crossover};
use super::grid::{format_point, Grid, Point};
use super::interval::{self, Advice, IntervalOptions, Sampler};
pub use super::overhead::{second_of, slack_of, Overhead, PhaseLoss, Saturating};
use super::uses::{self, Extrapolation};
use super::{compose_keeping_stages, compose_node, find_node, threads_of, ComposeOptions, Stage};
use crate::components::Components;
use crate::diag::{Diagnostic, Span};
use crate::model::{compare_growth, format_significant, Compiled, EvalError, Expr, Growth};
use crate::term::{CountValue, Node, NodeKind, Term};
use crate::uncertainty::{Interval, Source};

pub use super::AXIS;
/// Smallest speedup worth a suggestion.
pub const SUGGEST_MIN_SPEEDUP: f64 = 1.05;
/// A stage this many times slower than the next one is worth replicating.
pub const REPLICATE_MIN_RATIO: f64 = 2.0;
/// Pipelines analysed (outermost first); deeper ones are only counted, which keeps
/// `predict` interactive on terms with hundreds of nested pipelines.
pub const MAX_ANALYSED_PIPELINES: usize = 32;
/// Grid values of `x` added to the crossover scan (evenly thinned beyond this; the scan
/// already samples every decade 16 times).
pub const MAX_EXTRA_SAMPLES: usize = 256;
/// Grid points the suggestions are evaluated at (evenly thinned, always with the last).
pub const MAX_SUGGESTION_POINTS: usize = 64;

/// At most `n` items of `v`, evenly spread, keeping the first and the last.
fn thin<T: Clone>(v: &[T], n: usize) -> Vec<T> {
    if v.len() <= n || n < 2 {
        return v.to_vec();
    }
    (0..n)
        .map(|i| v[i * (v.len() - 1) / (n - 1)].clone())
        .collect()
}

/// `predict --json`: the prediction, and the calibration file its overhead was added
/// from (`predict --overhead`), if any.
#[derive(Serialize)]
pub struct PredictionJson<'a> {
    #[serde(flatten)]
    pub prediction: &'a Prediction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<&'a std::path::Path>,
}

/// The result of `predict`.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// The term, printed canonically.
    pub term: String,
    /// The composed model, canonical (parses back to the same model).
    pub model: String,
    /// Its asymptotically dominant part, when it can be determined.
    pub dominant: Option<String>,
    /// Free parameters of the model.
    pub parameters: Vec<String>,
    /// `--cores`, when given.
    pub cores: Option<u64>,
    /// The names of the grid, in the order given (the first varies slowest in `values`).
    pub grid: Vec<String>,
    pub values: Vec<Value>,
    pub pipelines: Vec<PipelineReport>,
    /// Every crossover of every pipeline over `x >= 1`.
    pub crossovers: Vec<CrossoverReport>,
    pub notes: Vec<String>,
    pub suggestions: Vec<Suggestion>,
    /// The components whose uncertainty the intervals carry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncertain: Vec<UncertainComponent>,
    /// `--advise`: the components by their share of the interval's variance.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<Advice>,
    #[serde(skip)]
    pub expr: Expr,
    #[serde(skip)]
    pub dominant_expr: Option<Expr>,
    /// Index in `pipelines` of the pipeline the whole term is (through task pools).
    #[serde(skip)]
    pub root_pipeline: Option<usize>,
}

/// The model at one grid point.
#[derive(Clone, Debug, Serialize)]
pub struct Value {
    pub point: BTreeMap<String, f64>,
    pub value: f64,
    /// The stage of the outermost pipeline that is the bottleneck here (when the term
    /// is a pipeline, possibly inside task pools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<String>,
    /// The prediction interval, when some component has an uncertainty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// Components evaluated outside the range they were measured on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extrapolation: Vec<Extrapolation>,
}

/// A component whose uncertainty a prediction carries.
#[derive(Clone, Debug, Serialize)]
pub struct UncertainComponent {
    pub component: String,
    /// `bootstrap`, `fit-covariance` or `stated`.
    pub source: Source,
    /// Bootstrap refits (1 otherwise).
    pub replicates: usize,
}

/// How `predict` draws intervals and whether it advises.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PredictOptions {
    pub intervals: IntervalOptions,
    /// Compute [`Prediction::advice`].
    pub advise: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct StageReport {
    pub term: String,
    pub model: String,
}

/// A pipeline of the term and which stage limits it.
#[derive(Clone, Debug, Serialize)]
pub struct PipelineReport {
    pub term: String,
    /// Byte range of the pipeline in the term as written.
    pub span: [usize; 2],
    pub stages: Vec<StageReport>,
    /// The asymptotically dominant stage (the paper's choice), when symbolic comparison
    /// decides it for every value of the other parameters.
    pub asymptotic_stage: Option<String>,
    /// Per combination of the other parameters' values: the stage leading for large `x`.
    pub settles: Vec<Settle>,
    /// Parameters the stages need a value for before crossovers can be computed.
    pub missing: Vec<String>,
}

/// "Stage `stage` for all x >= `from_x`" (given the other parameters' values).
#[derive(Clone, Debug, Serialize)]
pub struct Settle {
    pub given: BTreeMap<String, f64>,
    pub stage: String,
    pub from_x: f64,
    /// Set when the asymptotically dominant stage differs from the one leading at
    /// `x = 1e30`, the end of the numeric scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asymptotic_stage: Option<String>,
}

/// A change of the bottleneck stage of a pipeline.
#[derive(Clone, Debug, Serialize)]
pub struct CrossoverReport {
    pub pipeline: String,
    pub given: BTreeMap<String, f64>,
    pub x: f64,
    pub from: String,
    pub to: String,
    /// Within the range of `x` values evaluated.
    pub in_range: bool,
}

/// A design change the model says is faster.
#[derive(Clone, Debug, Serialize)]
pub struct Suggestion {
    /// `tpool-of-seq` (relation iv) or `replicate-stage`.
    pub kind: String,
    pub pipeline: String,
    pub replacement: String,
    /// Predicted time of the pipeline over that of the replacement.
    pub speedup: f64,
    /// The point the speedup is measured at (empty: asymptotically).
    pub at: BTreeMap<String, f64>,
    pub text: String,
}

/// Compose `term` and evaluate it at every point of `grid`.
///
/// Errors: an unknown component (located in the term), a parameter of the model without
/// a value in a non-empty grid, and a point where the model cannot be evaluated (located
/// at the smallest sub-term that fails there).
pub fn predict(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    grid: &Grid,
) -> Result<Prediction, Diagnostic> {
    predict_with_overhead(term, components, opts, grid, None)
}

/// [`predict`], adding the runtime's own per-element cost when one is given: the seed
/// attributes most of its prediction error to this unmodelled overhead.
pub fn predict_with_overhead(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    grid: &Grid,
    overhead: Option<&Overhead>,
) -> Result<Prediction, Diagnostic> {
    predict_with(
        term,
        components,
        opts,
        grid,
        overhead,
        PredictOptions::default(),
    )
}

/// [`predict_with_overhead`], with intervals drawn as `how` says (and advice when
/// asked for).
pub fn predict_with(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    grid: &Grid,
    overhead: Option<&Overhead>,
    how: PredictOptions,
) -> Result<Prediction, Diagnostic> {
    let comp = compose_keeping_stages(term, components, opts, MAX_ANALYSED_PIPELINES)?;
    let model = match overhead {
        Some(o) => o.apply_composed(&comp, term, components, opts),
        None => comp.model.clone(),
    };
    let params: Vec<String> = model.params().into_iter().collect();

    // Stage models of the outermost pipelines, built once for all analyses.
    let analysed: Vec<Analysed> = (0..comp.pipelines.len().min(MAX_ANALYSED_PIPELINES))
        .filter_map(|i| {
            let p = &comp.pipelines[i];
            let stages = comp.stages(i, term, components, opts).ok()?;
            Some(Analysed {
                span: p.span,
                term: find_node(&term.root, p.span)?.to_string(),
                stages: stages
                    .into_iter()
                    .map(|s: Stage| {
                        let node = find_node(&term.root, s.span);
                        AnalysedStage {
                            threads: node.and_then(|n| threads_of(n, opts.cores)),
                            pool: node.and_then(|n| match &n.kind {
                                NodeKind::Tpool { threads, body } => match threads.value {
                                    CountValue::Int(k) => Some((body.span, k)),
                                    CountValue::Param(_) => None,
                                },
                                _ => None,
                            }),
                            term: s.term,
                            model: s.model,
                        }
                    })
                    .collect(),
            })
        })
        .collect();

    let root_index =
        root_pipeline(&term.root).and_then(|span| analysed.iter().position(|p| p.span == span));
    let mut values = Vec::new();
    if !grid.is_empty() {
        let names = grid.names();
        if let Some(p) = params.iter().find(|p| !names.contains(&p.as_str())) {
            return Err(free_parameter(term, components, p, &names));
        }
        let root_pipe = root_index.map(|i| &analysed[i]);
        let root_models: Vec<Compiled> = root_pipe.map_or_else(Vec::new, |p| {
            p.stages.iter().map(|s| s.model.compile()).collect()
        });
        let compiled = model.compile();
        let meshes = super::mesh::Meshes::of(term);
        for point in grid.points() {
            meshes.check(&point)?;
            // The tree evaluation only for its error.
            let v = match compiled.eval_env(&point) {
                Some(v) => v,
                None => model
                    .eval(&point)
                    .map_err(|e| eval_error(term, components, opts, &point, e))?,
            };
            let bottleneck = root_pipe.and_then(|p| {
                crossover::leader_compiled(&root_models, AXIS, value_of(&point, AXIS)?, &point)
                    .map(|i| p.stages[i].term.clone())
            });
            values.push(Value {
                point: point.iter().cloned().collect(),
                value: v,
                bottleneck,
                interval: None,
                extrapolation: uses::extrapolations(&comp.uses, components, &point),
            });
        }
    }
    // The intervals and the pipeline analyses are independent, and each is about half
    // of the time on big terms: run them side by side.
    let uses = &comp.uses;
    let (intervals, (pipelines, crossovers), suggestions) = std::thread::scope(|s| {
        let values = &mut values;
        let h = s.spawn(move || {
            attach_intervals(values, term, components, opts, grid, overhead, how, uses)
        });
        let analysis = analyse_pipelines(&analysed, grid);
        let suggestions = suggest(term, &analysed, grid, opts);
        let intervals = h
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (intervals, analysis, suggestions)
    });
    let (uncertain, advice) = intervals?;

    let mut notes: Vec<String> = comp.notes.iter().map(|n| n.text.clone()).collect();
    if let Some(o) = overhead.filter(|o| o.ns_per_element > 0.0) {
        notes.push(format!(
            "includes the runtime's own cost, {} ns per element ({})",
            format_significant(o.ns_per_element, 4),
            o.source
        ));
    }
    for s in overhead.map_or(&[][..], |o| &o.saturating[..]) {
        let t = if s.pipeline_slack.is_some() {
            "the time its stages wait for the slowest one"
        } else {
            "time between its elements"
        };
        let ramp = if s.threshold_ns > 0.0 {
            format!(
                "{} x ({t} - {} ns), from 0",
                format_significant(s.slope, 3),
                format_significant(s.threshold_ns, 4)
            )
        } else {
            format!("{} x {t}", format_significant(s.slope, 3))
        };
        notes.push(format!(
            "includes the {}: min({} ns, {ramp})",
            s.what,
            format_significant(s.cap_ns, 4),
        ));
    }
    for p in overhead.map_or(&[][..], |o| &o.phases[..]) {
        if !p.hinges.is_empty() {
            notes.push(format!(
                "includes what {} loses to its stages' phases: {} hinges on the next slowest stage's time over the slowest's",
                p.what,
                p.hinges.len()
            ));
        }
    }
    if how.advise && advice.is_empty() {
        notes.push(if uncertain.is_empty() {
            "--advise: nothing to advise: no component of the term has an uncertainty (a model stated without relative_error, stderr or covariance has none; one fitted to measurements has its fit's)".to_string()
        } else {
            "--advise: nothing to advise: no point to advise at (give --at)".to_string()
        });
    }
    if comp.pipelines.len() > analysed.len() {
        notes.push(format!(
            "{} pipelines; the {} outermost are analysed for bottlenecks and crossovers",
            comp.pipelines.len(),
            analysed.len()
        ));
    }
    let dominant_expr = model.dominant();
    Ok(Prediction {
        term: term.root.to_string(),
        model: model.to_string(),
        dominant: dominant_expr.as_ref().map(Expr::to_string),
        parameters: params,
        cores: opts.cores,
        grid: grid.names().into_iter().map(String::from).collect(),
        values,
        pipelines,
        crossovers,
        notes,
        suggestions,
        uncertain,
        advice,
        expr: model,
        dominant_expr,
        root_pipeline: root_index,
    })
}

/// A pipeline with its stage models.
struct Analysed {
    span: Span,
    term: String,
    stages: Vec<AnalysedStage>,
}

struct AnalysedStage {
    term: String,
    model: Expr,
    /// Threads the stage keeps busy (1 for sequential blocks).
    threads: Option<u64>,
    /// The body and worker count when the stage is a task pool of a constant size.
    pool: Option<(Span, u64)>,
}

fn value_of(p: &Point, name: &str) -> Option<f64> {
    p.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// The span of the pipeline the whole term is (possibly inside task pools).
fn root_pipeline(n: &Node) -> Option<Span> {
    let mut n = n;
    loop {
        match &n.kind {
            NodeKind::Tpool { body, .. } => n = body,
            NodeKind::Pipe(_) => return Some(n.span),
            _ => return None,
        }
    }
}

fn analyse_pipelines(
    analysed: &[Analysed],
    grid: &Grid,
) -> (Vec<PipelineReport>, Vec<CrossoverReport>) {
    let names = grid.names();
    let xs: Vec<f64> = grid
        .values_of(AXIS)
        .map(<[f64]>::to_vec)
        .unwrap_or_default();
    let range = xs.iter().copied().fold(None, |acc: Option<(f64, f64)>, v| {
        Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
    });
    let mut reports = Vec::new();
    let mut all_crossings = Vec::new();
    for p in analysed {
        let models: Vec<Expr> = p.stages.iter().map(|s| s.model.clone()).collect();
        let mut missing: Vec<String> = models
            .iter()
            .flat_map(|m| m.params())
            .filter(|q| q != AXIS && !names.contains(&q.as_str()))
            .collect();
        missing.sort();
        missing.dedup();
        let dominant = crossover::dominant_stage(&models);
        let asymptotic = dominant.map(|i| p.stages[i].term.clone());
        let mut settles = Vec::new();
        if missing.is_empty() {
            for given in grid.others(AXIS) {
                let fixed: Vec<Expr> = models
                    .iter()
                    .map(|m| {
                        given
                            .iter()
                            .fold(m.clone(), |e, (n, v)| e.subst(n, &Expr::constant(*v)))
                    })
                    .collect();
                let extra = {
                    let mut sorted = xs.clone();
                    sorted.sort_by(f64::total_cmp);
                    thin(&sorted, MAX_EXTRA_SAMPLES)
                };
                // With nothing else given the models are the ones whose dominance is known.
                let dominant = if given.is_empty() {
                    dominant
                } else {
                    crossover::dominant_stage(&fixed)
                };
                let Some(s) = crossover::settling_with(&fixed, AXIS, &extra, &given, dominant)
                else {
                    continue;
                };
                let given_map: BTreeMap<String, f64> = given.iter().cloned().collect();
                for Crossover { x, from, to } in &s.crossovers {
                    all_crossings.push(CrossoverReport {
                        pipeline: p.term.clone(),
                        given: given_map.clone(),
                        x: *x,
                        from: p.stages[*from].term.clone(),
                        to: p.stages[*to].term.clone(),
                        in_range: range.is_some_and(|(lo, hi)| *x >= lo && *x <= hi),
                    });
                }
                settles.push(Settle {
                    given: given_map,
                    stage: p.stages[s.stage].term.clone(),
                    from_x: s.from,
                    asymptotic_stage: s
                        .asymptotic
                        .filter(|a| *a != s.stage)
                        .map(|a| p.stages[a].term.clone()),
                });
            }
        }
        reports.push(PipelineReport {
            term: p.term.clone(),
            span: [p.span.start, p.span.end],
            stages: p
                .stages
                .iter()
                .map(|s| StageReport {
                    term: s.term.clone(),
                    model: s.model.to_string(),
                })
                .collect(),
            asymptotic_stage: asymptotic,
            settles,
            missing,
        });
    }
    (reports, all_crossings)
}

/// Relation (iv) and stage replication, for every pipeline.
fn suggest(
    term: &Term,
    analysed: &[Analysed],
    grid: &Grid,
    opts: ComposeOptions,
) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let points = thin(&grid.points(), MAX_SUGGESTION_POINTS);
    for p in analysed {
        let k = p.stages.len();
        if k < 2 {
            continue;
        }
        let eff = opts.cores.map_or(k as u64, |c| c.min(k as u64));
        let stages_text: Vec<&str> = p.stages.iter().map(|s| s.term.as_str()).collect();
        // Workers beyond the cores do not divide further: the fewest reaching the
        // stated time are the cores then.
        let replacement = format!("tpool({eff}, seq({}))", stages_text.join(", "));

        // Relation (iv): the same k threads, each running the whole sequence. The seed
        // states it for sequential stages; a stage with its own threads would change
        // the thread budget.
        let sequential = p.stages.iter().all(|s| s.threads == Some(1));
        let models = || p.stages.iter().map(|s| s.model.clone()).collect::<Vec<_>>();
        let pipe_model = || Expr::max_of(models());
        let alt_model = || Expr::div(Expr::sum_of(models()), Expr::constant(eff as f64));
        let best = if !sequential {
            None
        } else if points.is_empty() {
            match compare_growth(&pipe_model(), &alt_model()) {
                Growth::Same { ratio: Some(r) } => Some((r, BTreeMap::new())),
                _ => None,
            }
        } else {
            let (pipe_model, alt_model) = (pipe_model().compile(), alt_model().compile());
            points
                .iter()
                .filter_map(|pt| {
                    let a = pipe_model.eval_env(pt)?;
                    let b = alt_model.eval_env(pt)?;
                    (b > 0.0).then(|| (a / b, pt.iter().cloned().collect()))
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
        };
        if let Some((speedup, at)) = best {
            if speedup >= SUGGEST_MIN_SPEEDUP {
                let where_ = if at.is_empty() {
                    "for large inputs".to_string()
                } else {
                    format!(
                        "at {}",
                        format_point(&at.iter().map(|(n, v)| (n.clone(), *v)).collect::<Vec<_>>())
                    )
                };
                out.push(Suggestion {
                    kind: "tpool-of-seq".into(),
                    pipeline: p.term.clone(),
                    replacement: replacement.clone(),
                    speedup,
                    at,
                    text: format!(
                        "{} could run as {replacement}: {}x faster {where_} with {} (relation iv of the pattern-composition paper: no stage waits for another)",
                        p.term,
                        format_significant(speedup, 3),
                        if eff == k as u64 {
                            format!("the same {k} threads")
                        } else {
                            format!("{eff} threads, one per core")
                        }
                    ),
                });
            }
        }

        // Replicate the bottleneck stage at the largest evaluated point.
        if let Some(pt) = points.last() {
            if let Some(s) = replicate(term, p, pt, opts) {
                out.push(s);
            }
        }
    }
    out
}

fn replicate(term: &Term, p: &Analysed, pt: &Point, opts: ComposeOptions) -> Option<Suggestion> {
    let vals: Vec<f64> = p
        .stages
        .iter()
        .map(|s| s.model.eval(pt).ok())
        .collect::<Option<_>>()?;
    let (imax, vmax) = vals
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let second = vals
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != imax)
        .map(|(_, v)| *v)
        .fold(f64::NEG_INFINITY, f64::max);
    if second.is_nan() || second <= 0.0 || vmax / second < REPLICATE_MIN_RATIO {
        return None;
    }
    // Replicating a task pool widens it: its body's time over the fewest workers that
    // reach the next stage's time (not whole copies of the pool, which overshoot by up
    // to its width less one), at most a million times the workers it has; extra
    // workers beyond the cores do not help.
    let stage = &p.stages[imax];
    let (stage_text, n) = match stage
        .pool
        .and_then(|(body, n)| Some((find_node(&term.root, body)?, n)))
    {
        Some((body, n)) => (body.to_string(), n),
        None => (stage.term.clone(), 1),
    };
    let n = opts.cores.map_or(n, |c| n.min(c)).max(1);
    let body = vmax * n as f64;
    let workers = fewest_workers(body, second).min(n.saturating_mul(1_000_000));
    if let Some(c) = opts.cores {
        if workers > c {
            return None;
        }
    }
    let replaced = format!("tpool({workers}, {stage_text})");
    let new_max = (body / workers as f64).max(second);
    let speedup = vmax / new_max;
    if speedup < SUGGEST_MIN_SPEEDUP {
        return None;
    }
    let at: BTreeMap<String, f64> = pt.iter().cloned().collect();
    Some(Suggestion {
        kind: "replicate-stage".into(),
        pipeline: p.term.clone(),
        replacement: replaced.clone(),
        speedup,
        at,
        text: format!(
            "stage {} is {}x slower than the next one at {}: replacing it by {replaced} balances {} ({}x faster)",
            p.stages[imax].term,
            format_significant(vmax / second, 3),
            format_point(pt),
            p.term,
            format_significant(speedup, 3)
        ),
    })
}

/// The fewest workers `w` (at least 1) with `time / w ≤ target`: `⌈time/target⌉`, where
/// a ratio within 1e-9 (relative) of an integer is that integer, so that rounding in
/// the times does not cost a worker.
pub(crate) fn fewest_workers(time: f64, target: f64) -> u64 {
    if !(time > 0.0 && target > 0.0) || time <= target {
        return 1;
    }
    let k = time / target;
    let r = k.round();
    let k = if (k - r).abs() <= 1e-9 * r.max(1.0) {
        r
    } else {
        k.ceil()
    };
    if k >= u64::MAX as f64 {
        u64::MAX
    } else {
        (k as u64).max(1)
    }
}

/// The error for a parameter without a value, located where the parameter enters the term.
pub(crate) fn free_parameter(
    term: &Term,
    components: &Components,
    name: &str,
    given: &[&str],
) -> Diagnostic {
    let (span, from) = locate_parameter(term, components, name);
    let given = if given.is_empty() {
        String::new()
    } else {
        format!(" (values are given for {})", given.join(", "))
    };
    Diagnostic::new(
        &term.origin,
        &term.source,
        span,
        format!("the model has a free parameter `{name}` without a value{given}"),
    )
    .with_hint(format!("give it values, e.g. --at {name}=1,2,4{from}"))
}

fn locate_parameter(term: &Term, components: &Components, name: &str) -> (Span, String) {
    let mut stack = vec![&term.root];
    while let Some(n) = stack.pop() {
        match &n.kind {
            NodeKind::Component(c) if components.get(c).is_some_and(|c| c.model.mentions(name)) => {
                return (n.span, format!("; it comes from the model of `{c}`"));
            }
            NodeKind::Tpool { threads, .. }
                if threads.value == CountValue::Param(name.to_string()) =>
            {
                return (threads.span, String::new());
            }
            NodeKind::MapReduce(mr) => {
                for c in [&mr.nodes, &mr.threads] {
                    if c.value == CountValue::Param(name.to_string()) {
                        return (c.span, String::new());
                    }
                }
                for e in [&mr.keys, &mr.per_key] {
                    if e.expr.mentions(name) {
                        return (e.span, String::new());
                    }
                }
                if let Some(s) = &mr.shuffle {
                    if components
                        .get(&s.name)
                        .is_some_and(|c| c.model.mentions(name))
                    {
                        return (s.span, format!("; it comes from the model of `{}`", s.name));
                    }
                }
            }
            NodeKind::Matmul(mm) => {
                if mm.procs.value == CountValue::Param(name.to_string()) {
                    return (mm.procs.span, String::new());
                }
                for e in [&mm.segments, &mm.bytes].into_iter().flatten() {
                    if e.expr.mentions(name) {
                        return (e.span, String::new());
                    }
                }
                if components
                    .get(&mm.message.name)
                    .is_some_and(|c| c.model.mentions(name))
                {
                    return (
                        mm.message.span,
                        format!("; it comes from the model of `{}`", mm.message.name),
                    );
                }
            }
            NodeKind::Dc(dc) => {
                if dc.procs.value == CountValue::Param(name.to_string()) {
                    return (dc.procs.span, String::new());
                }
                if let Some(e) = &dc.size {
                    if e.expr.mentions(name) {
                        return (e.span, String::new());
                    }
                }
                if components
                    .get(&dc.exchange.name)
                    .is_some_and(|c| c.model.mentions(name))
                {
                    return (
                        dc.exchange.span,
                        format!("; it comes from the model of `{}`", dc.exchange.name),
                    );
                }
            }
            _ => {}
        }
        stack.extend(n.children().into_iter().rev());
    }
    (term.root.span, String::new())
}

/// The error for a point where the model cannot be evaluated, located at the smallest
/// sub-term that already fails there.
pub(crate) fn eval_error(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    point: &Point,
    e: EvalError,
) -> Diagnostic {
    let span = deepest_failing(term, &term.root, components, opts, point).unwrap_or(term.root.span);
    let hint = match &e {
        EvalError::Unbound(p) => format!("give it values, e.g. --at {p}=1,2,4"),
        EvalError::DivisionByZero(_) => {
            "the model divides by zero at this point; evaluate at other values".to_string()
        }
        EvalError::LogOfNonPositive { .. } => {
            "log2 needs a positive argument; sizes and counts start at 1".to_string()
        }
        EvalError::NotReal { .. } => {
            "a fractional power of a negative value is not real; check the signs in the model"
                .to_string()
        }
        EvalError::NonFinite(_) => "the value overflows; evaluate at smaller values".to_string(),
    };
    let what = term.text(span);
    Diagnostic::new(
        &term.origin,
        &term.source,
        span,
        format!("cannot evaluate `{what}` at {}: {e}", format_point(point)),
    )
    .with_hint(hint)
}

fn deepest_failing(
    term: &Term,
    node: &Node,
    components: &Components,
    opts: ComposeOptions,
    point: &Point,
) -> Option<Span> {
    let model = compose_node(term, node, components, opts, &Expr::one()).ok()?;
    if model.eval(point).is_ok() {
        return None;
    }
    for child in node.children() {
        if let Some(s) = deepest_failing(term, child, components, opts, point) {
            return Some(s);
        }
    }
    Some(node.span)
}

/// Intervals at every grid point when a component of the term has an uncertainty, and
/// the advice when asked for (at the point whose interval is widest relative to its
/// value).
#[allow(clippy::too_many_arguments)]
fn attach_intervals(
    values: &mut [Value],
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    grid: &Grid,
    overhead: Option<&Overhead>,
    how: PredictOptions,
    used: &[uses::Use],
) -> Result<(Vec<UncertainComponent>, Vec<Advice>), Diagnostic> {
    if !components.iter().any(|c| c.uncertainty.is_some()) {
        return Ok((Vec::new(), Vec::new()));
    }
    let templates = interval::templated(components);
    let model = interval::composed_template(term, &templates, opts, overhead)?;
    let Some(sampler) = Sampler::new(&[&model], components, how.intervals) else {
        return Ok((Vec::new(), Vec::new()));
    };
    let uncertain = sampler
        .components
        .iter()
        .map(|u| UncertainComponent {
            component: u.component.clone(),
            source: u.source,
            replicates: u.replicates(),
        })
        .collect();
    if values.is_empty() {
        return Ok((uncertain, Vec::new()));
    }
    let batch = sampler.batch(&model);
    let points = grid.points();
    for (v, i) in values
        .iter_mut()
        .zip(interval::intervals(&sampler, &batch, &points))
    {
        v.interval = i;
    }
    let mut advice = Vec::new();
    if how.advise {
        let widest = values
            .iter()
            .zip(&points)
            .filter_map(|(v, p)| {
                let i = v.interval?;
                Some(((i.high - i.low) / v.value.abs().max(f64::MIN_POSITIVE), p))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((_, point)) = widest {
            let needed = |name: &str| {
                let c = sampler.components.iter().find(|u| u.component == name)?;
                let d = c.design.as_ref()?;
                uses::needed(used, components, name, &d.parameters, point)
            };
            advice = interval::advise(&sampler, &model, point, &needed);
        }
    }
    Ok((uncertain, advice))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::parse_term;

    #[test]
    fn predict_names_what_a_wake_up_depends_on() {
        let comps = Components::from_models("t", &[("a", "10 * x"), ("c", "2 * x")]).unwrap();
        let term = parse_term("t", "pipe(a, c)").unwrap();
        let grid = Grid::parse(&["x=100".to_string()]).unwrap();
        let p = predict_with_overhead(
            &term,
            &comps,
            ComposeOptions::default(),
            &grid,
            Some(&Overhead {
                ns_per_element: 100.0,
                source: "test".into(),
                saturating: vec![Saturating {
                    what: "wake-up".into(),
                    scale: 1.0,
                    slope: 0.5,
                    cap_ns: 1000.0,
                    threshold_ns: 400.0,
                    pipeline_slack: Some(0),
                    relative_threshold: 0.0,
                }],
                phases: Vec::new(),
            }),
        )
        .unwrap();
        assert_eq!(p.values[0].value, 1000.0 + 100.0 + 200.0);
        assert!(
            p.notes.iter().any(|n| n.contains(
                "min(1000 ns, 0.5 x (the time its stages wait for the slowest one - 400 ns), from 0)"
            )),
            "{:?}",
            p.notes
        );
    }
}
