//! The best design under a core budget (`perfcompose optimize`).
//!
//! A design leaves thread counts open with `?` (`pipe(tpool(?, a), tpool(?, b), c)`,
//! [`crate::term::parse_design`]); each `?` becomes a parameter of the composed model.
//! [`optimize`] chooses them, at least 1 each, so that the design's threads (a pipeline
//! adds its stages', a task pool multiplies, a `seq` takes its largest part's, as
//! [`crate::compose`] counts them) stay within the budget and the predicted time at the
//! given point is smallest; equal times go to the allocation with fewer threads.
//!
//! How ([`parts`]): by parts, exactly. Every sub-term holding a `?` gets its best time
//! for every budget up to the cores, as the allocations no other beats; a `seq`, a
//! pipeline and a task pool combine their parts' (a pipeline's stages share the budget,
//! a `tpool(?, t)` with `n` workers over `t` on `c` threads uses `n·c`, so its best is a
//! search over the divisors of each budget). Nested task pools are thus a product of
//! independent subproblems under one budget, solved in time polynomial in the cores. The
//! one case left to a search is a `?` inside a MapReduce, a divide and conquer or a
//! matrix product, whose parts are timed at other sizes than the whole: that pattern's
//! own allocations are enumerated up to [`EXHAUSTIVE_LIMIT`], past which a local search
//! within as many evaluations takes over, and the outcome names the part and says the
//! allocation may not be the best ([`Method::LocalSearch`]).
//!
//! With rewrites ([`rewrites`]) the designs the pattern-composition paper's relational laws make comparable are
//! scored the same way: the design's blocks in order, cut into consecutive groups, each
//! group a task pool of the `seq` of its blocks — `pipe(tpool(?, a), tpool(?, b))`,
//! `tpool(?, seq(a, b))` (law iv) and every merge and split between them.

mod allocate;
mod parts;
mod rewrites;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_parts;

use serde::Serialize;

use crate::components::Components;
use crate::compose::{compose, ComposeOptions};
use crate::diag::{Diagnostic, Span};
use crate::model::Expr;
use crate::term::{parse_design, parse_term, Hole, NodeKind, Term};

pub use allocate::{Allocation, Method, EXHAUSTIVE_LIMIT};
pub use rewrites::{blocks_of, rewrite_designs, MAX_REWRITE_BLOCKS};

/// What to optimize.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The design, with `?` for the thread counts to choose.
    pub design: &'a str,
    pub components: &'a Components,
    /// Cores the design's threads must fit in.
    pub cores: u64,
    /// The point the designs are compared at (every free parameter but the holes).
    pub point: Vec<(String, f64)>,
    /// Also score the designs the relational laws make comparable.
    pub rewrites: bool,
}

/// One design with its best allocation.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Ranked {
    /// The design with the chosen thread counts.
    pub term: String,
    /// The design as given or rewritten, with its `?`.
    pub design: String,
    pub threads: u64,
    /// Predicted time at the point.
    pub value: f64,
    /// The stage that sets the time (a pipeline's slowest stage), or the whole design.
    pub bottleneck: String,
    /// How the allocation was found.
    pub method: Method,
    /// The parts whose counts come from a bounded local search (their allocation may
    /// not be the best); empty, and left out of the JSON, when the allocation is exact.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub searched_parts: Vec<String>,
    /// The prediction interval, when a component has an uncertainty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<crate::uncertainty::Interval>,
}

/// The ranking (also the JSON of `perfcompose optimize --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Best first.
    pub designs: Vec<Ranked>,
    pub best: String,
    /// Whether every design's allocation is the best one (no local search was needed).
    pub exact: bool,
    pub cores: u64,
    /// Designs that could not be scored (e.g. a rewrite needing more threads than the
    /// budget), with why.
    pub skipped: Vec<Skipped>,
    /// The share of draws of the components' uncertainty in which the best design is
    /// faster than the second (when a component has an uncertainty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability_best_beats_second: Option<f64>,
}

/// A candidate design left out of the ranking.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub design: String,
    pub why: String,
}

/// Most cores a budget may have: every sub-term's best time is kept for every budget up
/// to it.
pub const MAX_CORES: u64 = 1 << 20;

/// How far [`optimize_with_progress`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Designs scored (the given one and its rewrites).
    pub designs_done: usize,
    pub designs: usize,
    /// Allocations of parts scored one by one in the design being scored (a `?` inside
    /// a MapReduce, a divide and conquer or a matrix product).
    pub evaluations: u64,
}

/// Optimize `req.design` (and its rewrites). Errors are the given design's own: a term
/// that does not parse, an unknown component, a budget below its minimum.
pub fn optimize(req: &Request<'_>) -> Result<Outcome, Diagnostic> {
    optimize_with_progress(req, &mut |_| {})
}

/// [`optimize`], telling `progress` how far it is after every design and every few
/// thousand allocations scored one by one.
pub fn optimize_with_progress(
    req: &Request<'_>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, Diagnostic> {
    let (term, holes) = parse_design("<term>", req.design)?;
    let texts = if req.rewrites {
        rewrite_designs(&term)
    } else {
        Vec::new()
    };
    let total = 1 + texts.len();
    let mut report = |done: usize, evaluations: u64| {
        progress(Progress {
            designs_done: done,
            designs: total,
            evaluations,
        })
    };
    report(0, 0);
    let first = optimize_term_with(req, &term, &holes, None, &mut |e| report(0, e))?;
    report(1, 0);
    let mut designs = vec![first];
    let mut skipped = Vec::new();
    for (i, text) in texts.into_iter().enumerate() {
        // Designs before this one: the given one and `i` rewrites.
        let done = i + 1;
        if !designs.iter().any(|d| d.design == text) {
            let scored = parse_design("<rewrite>", &text)
                .and_then(|(t, h)| optimize_term_with(req, &t, &h, None, &mut |e| report(done, e)));
            match scored {
                Ok(r) => designs.push(r),
                Err(e) => skipped.push(Skipped {
                    design: text,
                    why: e.message,
                }),
            }
        }
        report(done + 1, 0);
    }
    designs.sort_by(|a, b| {
        a.value
            .total_cmp(&b.value)
            .then(a.threads.cmp(&b.threads))
            .then(a.term.cmp(&b.term))
    });
    designs.dedup_by(|a, b| a.term == b.term);
    let exact = designs.iter().all(|d| d.method != Method::LocalSearch);
    let probability_best_beats_second = intervals(req, &mut designs)?;
    Ok(Outcome {
        best: designs[0].term.clone(),
        designs,
        exact,
        cores: req.cores,
        skipped,
        probability_best_beats_second,
    })
}

/// Each ranked design's interval at the point, all on the same draws of the
/// components' uncertainty, and the probability that the first beats the second
/// (`None` when no component has an uncertainty).
fn intervals(req: &Request<'_>, designs: &mut [Ranked]) -> Result<Option<f64>, Diagnostic> {
    use crate::compose::interval::{composed_template, templated, IntervalOptions, Sampler};
    if !req.components.iter().any(|c| c.uncertainty.is_some()) {
        return Ok(None);
    }
    let opts = ComposeOptions {
        cores: Some(req.cores),
    };
    let templates = templated(req.components);
    let models = designs
        .iter()
        .map(|d| {
            let t = parse_term("<design>", &d.term)?;
            composed_template(&t, &templates, opts, None)
        })
        .collect::<Result<Vec<Expr>, Diagnostic>>()?;
    let refs: Vec<&Expr> = models.iter().collect();
    let Some(sampler) = Sampler::new(&refs, req.components, IntervalOptions::default()) else {
        return Ok(None);
    };
    let mut values = Vec::new();
    for (d, m) in designs.iter_mut().zip(&models) {
        let v = sampler
            .values(&sampler.batch(m), &req.point)
            .unwrap_or_default();
        d.interval = crate::uncertainty::interval_of(v.clone(), sampler.options.level);
        values.push(v);
    }
    Ok(match &values[..] {
        [a, b, ..] => crate::uncertainty::probability_smaller(a, b),
        _ => None,
    })
}

/// The best allocation of one design's holes; `force` picks the method (tests compare
/// them), else by parts.
pub fn optimize_term(
    req: &Request<'_>,
    term: &Term,
    holes: &[Hole],
    force: Option<Method>,
) -> Result<Ranked, Diagnostic> {
    optimize_term_with(req, term, holes, force, &mut |_| {})
}

/// [`optimize_term`], telling `progress` the allocations scored one by one so far.
pub fn optimize_term_with(
    req: &Request<'_>,
    term: &Term,
    holes: &[Hole],
    force: Option<Method>,
    progress: &mut dyn FnMut(u64),
) -> Result<Ranked, Diagnostic> {
    if req.cores > MAX_CORES {
        return Err(Diagnostic::new(
            &term.origin,
            &term.source,
            term.root.span,
            format!(
                "a budget of {} cores is more than the {MAX_CORES} this search supports",
                req.cores
            ),
        ));
    }
    // A matrix product whose order does not split into the mesh's blocks has no time at
    // this point, whatever the allocation.
    crate::compose::mesh::check_meshes(term, &req.point)?;
    let opts = ComposeOptions {
        cores: Some(req.cores),
    };
    let composed = compose(term, req.components, opts)?;
    let at_one = allocate::threads(term, req.cores, holes, &vec![1; holes.len()]);
    match at_one {
        Some(t) if t <= req.cores => {}
        Some(t) => {
            return Err(Diagnostic::new(
                &term.origin,
                &term.source,
                term.root.span,
                format!(
                    "the design needs at least {t} threads (one per `?` and per fixed stage), more than the {} cores of the budget",
                    req.cores
                ),
            )
            .with_hint(format!("give --cores {t} or more, or fewer stages")))
        }
        None => {
            return Err(Diagnostic::new(
                &term.origin,
                &term.source,
                term.root.span,
                "the design's threads depend on a count that is a parameter; write it as a number or `?`",
            ))
        }
    }
    let eval = Evaluator::new(&composed.model, &req.point, holes, term)?;
    let alloc = allocate::best(req, term, holes, &eval, force, progress)?;
    let filled = fill(term, holes, &alloc.counts);
    let filled_term = parse_term("<design>", &filled).map_err(|mut d| {
        d.message = format!(
            "internal: the allocated design does not parse: {}",
            d.message
        );
        d
    })?;
    let bottleneck = bottleneck(&filled_term, req, opts)?;
    Ok(Ranked {
        term: filled_term.root.to_string(),
        design: term.source.clone(),
        threads: alloc.threads,
        value: alloc.value,
        bottleneck,
        method: alloc.method,
        searched_parts: alloc
            .searched
            .iter()
            .map(|s| term.text(*s).to_string())
            .collect(),
        interval: None,
    })
}

/// The design's text with the holes' counts written in.
pub fn fill(term: &Term, holes: &[Hole], counts: &[u64]) -> String {
    let mut text = term.source.clone();
    let mut order: Vec<(Span, u64)> = holes
        .iter()
        .map(|h| h.span)
        .zip(counts.iter().copied())
        .collect();
    order.sort_by_key(|(s, _)| std::cmp::Reverse(s.start));
    for (span, n) in order {
        text.replace_range(span.start..span.end, &n.to_string());
    }
    text
}

/// The slowest stage of the outermost pipeline when the design is one, else the design.
fn bottleneck(term: &Term, req: &Request<'_>, opts: ComposeOptions) -> Result<String, Diagnostic> {
    if !matches!(term.root.kind, NodeKind::Pipe(_)) {
        return Ok(term.root.to_string());
    }
    let composed = compose(term, req.components, opts)?;
    let stages = composed.stages(0, term, req.components, opts)?;
    let point: Vec<(&str, f64)> = req.point.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let mut best: Option<(f64, String)> = None;
    for s in stages {
        let v = s.model.eval_at(&point).unwrap_or(f64::NAN);
        if best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, s.term));
        }
    }
    Ok(best.map_or_else(|| term.root.to_string(), |(_, t)| t))
}

/// The composed model at the point, as a function of the holes' counts.
pub struct Evaluator {
    model: Expr,
    env: Vec<(String, f64)>,
    holes: usize,
}

impl Evaluator {
    fn new(
        model: &Expr,
        point: &[(String, f64)],
        holes: &[Hole],
        term: &Term,
    ) -> Result<Evaluator, Diagnostic> {
        // Bind the point once; what is left are the holes.
        let mut m = model.clone();
        for (name, v) in point {
            m = m.subst(name, &Expr::constant(*v));
        }
        let missing: Vec<String> = m
            .params()
            .into_iter()
            .filter(|p| !holes.iter().any(|h| &h.name == p))
            .collect();
        if !missing.is_empty() {
            return Err(Diagnostic::new(
                &term.origin,
                &term.source,
                term.root.span,
                format!(
                    "the design's model needs a value for {}",
                    missing
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .with_hint("give it with --at NAME=VALUE"));
        }
        Ok(Evaluator {
            model: m,
            env: holes.iter().map(|h| (h.name.clone(), 1.0)).collect(),
            holes: holes.len(),
        })
    }

    /// The time with `counts` threads in the holes (NaN when the model cannot be
    /// evaluated there).
    pub fn value(&self, counts: &[u64]) -> f64 {
        debug_assert_eq!(counts.len(), self.holes);
        let env: Vec<(&str, f64)> = self
            .env
            .iter()
            .zip(counts)
            .map(|((n, _), c)| (n.as_str(), *c as f64))
            .collect();
        self.model.eval_at(&env).unwrap_or(f64::NAN)
    }
}
