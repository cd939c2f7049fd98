//! Choosing the holes' thread counts of one design (module docs of [`super`]).

use serde::Serialize;

use super::{Evaluator, Request};
use crate::compose::{compose_node, threads_with, ComposeOptions};
use crate::diag::Diagnostic;
use crate::model::Expr;
use crate::term::{CountValue, Hole, Node, NodeKind, Term};

/// Most allocations enumerated one by one before a local search takes over.
pub const EXHAUSTIVE_LIMIT: u64 = 200_000;

/// Two times this close (relatively) are equal; the fewer threads win.
const TIE: f64 = 1e-12;

/// How an allocation was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// No `?`: the design as written.
    AsWritten,
    /// The pipeline allocation (exact).
    Pipeline,
    /// Every allocation within the budget (exact).
    Exhaustive,
    /// A local search (not guaranteed to be the best).
    LocalSearch,
}

/// The chosen counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub counts: Vec<u64>,
    pub threads: u64,
    pub value: f64,
    pub method: Method,
}

/// The design's threads with these counts in its holes.
pub(crate) fn threads(term: &Term, cores: u64, holes: &[Hole], counts: &[u64]) -> Option<u64> {
    let lookup = |p: &str| holes.iter().position(|h| h.name == p).map(|i| counts[i]);
    threads_with(&term.root, Some(cores), &lookup)
}

/// Whether `a` beats `b` (smaller time, or as small with fewer threads).
fn better(a: (f64, u64), b: (f64, u64)) -> bool {
    if !a.0.is_finite() {
        return false;
    }
    if !b.0.is_finite() {
        return true;
    }
    let scale = a.0.abs().max(b.0.abs()).max(f64::MIN_POSITIVE);
    if (a.0 - b.0).abs() <= TIE * scale {
        a.1 < b.1
    } else {
        a.0 < b.0
    }
}

/// The best allocation of `holes`.
pub(crate) fn best(
    req: &Request<'_>,
    term: &Term,
    holes: &[Hole],
    eval: &Evaluator,
    force: Option<Method>,
) -> Result<Allocation, Diagnostic> {
    let finish = |counts: Vec<u64>, method| {
        let threads = threads(term, req.cores, holes, &counts).unwrap_or(u64::MAX);
        Allocation {
            value: eval.value(&counts),
            counts,
            threads,
            method,
        }
    };
    if holes.is_empty() {
        return Ok(finish(Vec::new(), Method::AsWritten));
    }
    let method = match force {
        Some(m) => m,
        None if pipeline_stages(term, holes).is_some() => Method::Pipeline,
        None if allocations_within(req.cores, holes.len()) <= EXHAUSTIVE_LIMIT => {
            Method::Exhaustive
        }
        None => Method::LocalSearch,
    };
    let counts = match method {
        Method::AsWritten => vec![1; holes.len()],
        Method::Pipeline => pipeline(req, term, holes)?,
        Method::Exhaustive => exhaustive(
            req.cores,
            holes.len(),
            &|c| threads(term, req.cores, holes, c),
            eval,
        ),
        Method::LocalSearch => local_search(
            req.cores,
            holes.len(),
            &|c| threads(term, req.cores, holes, c),
            eval,
        ),
    };
    Ok(finish(counts, method))
}

/// Allocations of `holes` counts of at least 1 with a total of at most `cores` (an upper
/// bound on those within the budget: `C(cores, holes)`), saturating.
fn allocations_within(cores: u64, holes: usize) -> u64 {
    let k = holes as u64;
    if k > cores {
        return 0;
    }
    // Compositions of at most `cores` into `k` positive parts: C(cores, k).
    let mut c: u128 = 1;
    for i in 0..k.min(cores - k) {
        c = c * (cores - i) as u128 / (i + 1) as u128;
        if c > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    c as u64
}

/// A stage of a pipeline design: its time with one thread, and which hole divides it.
struct StageCost {
    /// Index of the hole of `tpool(?, body)`, or `None` for a fixed stage.
    hole: Option<usize>,
    /// The body's time (an open stage) or the stage's time (a fixed one).
    value: f64,
    /// Threads of a fixed stage.
    threads: u64,
}

/// The stages of a design that is a pipeline (or one task pool) whose open stages are
/// `tpool(?, body)` with hole-free bodies and whose other stages have no holes.
fn pipeline_stages<'t>(term: &'t Term, holes: &[Hole]) -> Option<Vec<(&'t Node, Option<usize>)>> {
    let mut stages = Vec::new();
    flatten_pipe(&term.root, &mut stages);
    let mut out = Vec::new();
    let mut seen = 0;
    for s in stages {
        let hole_here = |n: &Node| holes_in(n, holes);
        match &s.kind {
            NodeKind::Tpool { threads, body } => match &threads.value {
                CountValue::Param(p) => {
                    let i = holes.iter().position(|h| &h.name == p)?;
                    if hole_here(body) > 0 {
                        return None;
                    }
                    seen += 1;
                    out.push((&**body, Some(i)));
                }
                CountValue::Int(_) => {
                    if hole_here(s) > 0 {
                        return None;
                    }
                    out.push((s, None));
                }
            },
            _ => {
                if hole_here(s) > 0 {
                    return None;
                }
                out.push((s, None));
            }
        }
    }
    (seen == holes.len()).then_some(out)
}

fn flatten_pipe<'t>(n: &'t Node, out: &mut Vec<&'t Node>) {
    match &n.kind {
        NodeKind::Pipe(parts) => parts.iter().for_each(|p| flatten_pipe(p, out)),
        _ => out.push(n),
    }
}

fn holes_in(n: &Node, holes: &[Hole]) -> usize {
    let mut count = 0;
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        let counts: Vec<&crate::term::Count> = match &m.kind {
            NodeKind::Tpool { threads, .. } => vec![threads],
            NodeKind::MapReduce(mr) => vec![&mr.threads, &mr.nodes],
            _ => Vec::new(),
        };
        count += counts
            .iter()
            .filter(
                |c| matches!(&c.value, CountValue::Param(p) if holes.iter().any(|h| &h.name == p)),
            )
            .count();
        stack.extend(m.children());
    }
    count
}

/// The exact pipeline allocation (module docs of [`super`]).
fn pipeline(req: &Request<'_>, term: &Term, holes: &[Hole]) -> Result<Vec<u64>, Diagnostic> {
    let stages = pipeline_stages(term, holes).ok_or_else(|| {
        Diagnostic::new(
            &term.origin,
            &term.source,
            term.root.span,
            "not a pipeline of task pools with `?` threads",
        )
    })?;
    let opts = ComposeOptions {
        cores: Some(req.cores),
    };
    let point: Vec<(&str, f64)> = req.point.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let mut costs = Vec::new();
    for (node, hole) in stages {
        let model = compose_node(term, node, req.components, opts, &Expr::one())?;
        let value = model
            .eval_at(&point)
            .map_err(|e| Diagnostic::new(&term.origin, &term.source, node.span, e.to_string()))?;
        let threads = match hole {
            Some(_) => 0,
            None => threads_with(node, Some(req.cores), &|_| None).unwrap_or(1),
        };
        costs.push(StageCost {
            hole,
            value,
            threads,
        });
    }
    let fixed_threads: u64 = costs.iter().map(|c| c.threads).sum();
    let budget = req.cores.saturating_sub(fixed_threads);
    let floor = costs
        .iter()
        .filter(|c| c.hole.is_none())
        .map(|c| c.value)
        .fold(0.0, f64::max);
    let open: Vec<&StageCost> = costs.iter().filter(|c| c.hole.is_some()).collect();
    let need = |t: f64| -> u64 { open.iter().map(|c| needed(c.value, t)).sum() };
    // Candidate times: each open stage with k threads, and the fixed stages' floor.
    let mut candidates: Vec<f64> = open
        .iter()
        .flat_map(|c| (1..=budget.max(1)).map(move |k| c.value / k as f64))
        .filter(|t| *t >= floor)
        .collect();
    candidates.push(floor);
    candidates.sort_by(f64::total_cmp);
    candidates.dedup();
    let target = candidates
        .into_iter()
        .find(|&t| t > 0.0 && need(t) <= budget)
        .unwrap_or_else(|| open.iter().map(|c| c.value).fold(floor, f64::max));
    let mut counts = vec![1u64; holes.len()];
    for c in &open {
        if let Some(i) = c.hole {
            counts[i] = needed(c.value, target);
        }
    }
    Ok(counts)
}

/// Threads a stage of time `v` alone needs to take at most `t` (at least 1).
fn needed(v: f64, t: f64) -> u64 {
    if v.is_nan() || t.is_nan() || v <= 0.0 || t <= 0.0 {
        return 1;
    }
    let k = v / t;
    // A ratio within rounding of an integer is that integer.
    let r = k.round();
    let k = if (k - r).abs() <= 1e-9 * r.max(1.0) {
        r
    } else {
        k.ceil()
    };
    (k as u64).max(1)
}

/// Every allocation within the budget; the best.
fn exhaustive(
    cores: u64,
    holes: usize,
    threads: &dyn Fn(&[u64]) -> Option<u64>,
    eval: &Evaluator,
) -> Vec<u64> {
    let mut counts = vec![1u64; holes];
    let mut best: Option<(Vec<u64>, f64, u64)> = None;
    loop {
        if let Some(t) = threads(&counts).filter(|&t| t <= cores) {
            let v = eval.value(&counts);
            if best
                .as_ref()
                .is_none_or(|(_, bv, bt)| better((v, t), (*bv, *bt)))
            {
                best = Some((counts.clone(), v, t));
            }
        }
        // Next vector in [1, cores]^holes, skipping the rest of a digit once its
        // threads exceed the budget (threads grow with every count).
        let mut i = 0;
        loop {
            if i == holes {
                return best.map_or_else(|| vec![1; holes], |(c, _, _)| c);
            }
            counts[i] += 1;
            if counts[i] <= cores && threads(&counts).is_some_and(|t| t <= cores) {
                break;
            }
            counts[i] = 1;
            i += 1;
        }
    }
}

/// Moves of single threads (add, remove, move between two holes) while the time drops,
/// from one thread each.
fn local_search(
    cores: u64,
    holes: usize,
    threads: &dyn Fn(&[u64]) -> Option<u64>,
    eval: &Evaluator,
) -> Vec<u64> {
    let mut counts = vec![1u64; holes];
    let score = |c: &[u64]| -> Option<(f64, u64)> {
        let t = threads(c).filter(|&t| t <= cores)?;
        Some((eval.value(c), t))
    };
    let Some(mut current) = score(&counts) else {
        return counts;
    };
    loop {
        let mut improved = false;
        let mut moves: Vec<Vec<u64>> = Vec::new();
        for i in 0..holes {
            let mut up = counts.clone();
            up[i] += 1;
            moves.push(up);
            if counts[i] > 1 {
                let mut down = counts.clone();
                down[i] -= 1;
                moves.push(down);
                for j in (0..holes).filter(|&j| j != i) {
                    let mut shift = counts.clone();
                    shift[i] -= 1;
                    shift[j] += 1;
                    moves.push(shift);
                }
            }
        }
        for m in moves {
            if let Some(s) = score(&m) {
                if better(s, current) {
                    counts = m;
                    current = s;
                    improved = true;
                }
            }
        }
        if !improved {
            return counts;
        }
    }
}
