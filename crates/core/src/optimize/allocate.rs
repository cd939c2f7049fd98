//! Choosing the holes' thread counts of one design (module docs of [`super`]).

use serde::Serialize;

use super::parts::Solver;
use super::{Evaluator, Request};
use crate::compose::threads_with;
use crate::diag::{Diagnostic, Span};
use crate::term::{CountValue, Hole, Node, NodeKind, Term};

/// Most allocations of one part scored one by one: past it, a local search takes over,
/// within as many evaluations.
pub const EXHAUSTIVE_LIMIT: u64 = 200_000;

/// Two times this close (relatively) are equal; the fewer threads win.
pub(crate) const TIE: f64 = 1e-12;

/// How an allocation was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// No `?`: the design as written.
    AsWritten,
    /// A pipeline of task pools (or one task pool) solved by parts (exact).
    Pipeline,
    /// Any other design solved by parts: nested task pools, `seq`s and pipelines (exact).
    ByParts,
    /// Every allocation within the budget (exact).
    Exhaustive,
    /// A bounded local search, for a part too big to enumerate (not guaranteed to be the
    /// best).
    LocalSearch,
}

/// The chosen counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub counts: Vec<u64>,
    pub threads: u64,
    pub value: f64,
    pub method: Method,
    /// The parts whose counts come from a bounded local search.
    pub searched: Vec<Span>,
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

/// The best allocation of `holes`: by parts, unless `force` asks for the whole design's
/// every allocation or a local search (tests compare them). `progress` hears the number
/// of allocations scored one by one so far.
pub(crate) fn best(
    req: &Request<'_>,
    term: &Term,
    holes: &[Hole],
    eval: &Evaluator,
    force: Option<Method>,
    progress: &mut dyn FnMut(u64),
) -> Result<Allocation, Diagnostic> {
    let finish = |counts: Vec<u64>, method, searched| {
        let threads = threads(term, req.cores, holes, &counts).unwrap_or(u64::MAX);
        Allocation {
            value: eval.value(&counts),
            counts,
            threads,
            method,
            searched,
        }
    };
    if holes.is_empty() {
        return Ok(finish(Vec::new(), Method::AsWritten, Vec::new()));
    }
    let threads_of = |c: &[u64]| threads(term, req.cores, holes, c);
    let value_of = |c: &[u64]| eval.value(c);
    let mut chosen: Option<(Vec<u64>, f64, u64)> = None;
    let mut keep = |c: &[u64], t: u64, v: f64| {
        if chosen
            .as_ref()
            .is_none_or(|(_, bv, bt)| better((v, t), (*bv, *bt)))
        {
            chosen = Some((c.to_vec(), v, t));
        }
    };
    match force {
        Some(Method::Exhaustive) => {
            enumerate(
                holes.len(),
                req.cores,
                &threads_of,
                &value_of,
                None,
                &mut keep,
            );
            let counts = chosen.map_or_else(|| vec![1; holes.len()], |(c, _, _)| c);
            return Ok(finish(counts, Method::Exhaustive, Vec::new()));
        }
        Some(Method::LocalSearch) => {
            local_search(
                holes.len(),
                req.cores,
                &threads_of,
                &value_of,
                super::EXHAUSTIVE_LIMIT,
                &mut keep,
            );
            let counts = chosen.map_or_else(|| vec![1; holes.len()], |(c, _, _)| c);
            return Ok(finish(counts, Method::LocalSearch, Vec::new()));
        }
        _ => {}
    }
    let solved =
        Solver::new(term, holes, req.components, &req.point, req.cores, progress).solve()?;
    let counts = match solved.frontier.points.len() {
        0 => vec![1; holes.len()],
        n => solved.counts(n - 1, holes.len()),
    };
    let method = if !solved.searched.is_empty() {
        Method::LocalSearch
    } else if pipeline_shape(term, holes) {
        Method::Pipeline
    } else if matches!(
        term.root.kind,
        NodeKind::MapReduce(_) | NodeKind::Dc(_) | NodeKind::Matmul(_)
    ) {
        Method::Exhaustive
    } else {
        Method::ByParts
    };
    Ok(finish(counts, method, solved.searched))
}

/// Whether the design is a pipeline (or one task pool) whose open stages are
/// `tpool(?, body)` with bodies free of holes, and whose other stages hold none.
fn pipeline_shape(term: &Term, holes: &[Hole]) -> bool {
    let mut stages = Vec::new();
    flatten_pipe(&term.root, &mut stages);
    let mut open = 0;
    for s in stages {
        match &s.kind {
            NodeKind::Tpool { threads, body } if matches!(&threads.value, CountValue::Param(p) if holes.iter().any(|h| &h.name == p)) =>
            {
                if holes_in(body, holes) > 0 {
                    return false;
                }
                open += 1;
            }
            _ => {
                if holes_in(s, holes) > 0 {
                    return false;
                }
            }
        }
    }
    open == holes.len()
}

fn flatten_pipe<'t>(n: &'t Node, out: &mut Vec<&'t Node>) {
    match &n.kind {
        NodeKind::Pipe(parts) => parts.iter().for_each(|p| flatten_pipe(p, out)),
        _ => out.push(n),
    }
}

fn holes_in(n: &Node, holes: &[Hole]) -> usize {
    holes
        .iter()
        .filter(|h| n.span.start <= h.span.start && h.span.end <= n.span.end)
        .count()
}

/// Every allocation of `holes` counts from 1 whose threads fit `cores`, each handed to
/// `visit` with its threads and time; stops after `limit` of them. Whether every one was
/// visited.
pub(crate) fn enumerate(
    holes: usize,
    cores: u64,
    threads: &dyn Fn(&[u64]) -> Option<u64>,
    value: &dyn Fn(&[u64]) -> f64,
    limit: Option<u64>,
    visit: &mut dyn FnMut(&[u64], u64, f64),
) -> bool {
    let mut counts = vec![1u64; holes];
    let mut visited = 0u64;
    loop {
        if let Some(t) = threads(&counts).filter(|&t| t <= cores) {
            if limit.is_some_and(|l| visited >= l) {
                return false;
            }
            visited += 1;
            visit(&counts, t, value(&counts));
        }
        // Next vector in [1, cores]^holes, skipping the rest of a digit once its
        // threads exceed the budget (threads grow with every count).
        let mut i = 0;
        loop {
            if i == holes {
                return true;
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
/// from one thread each, for at most `limit` evaluations; every allocation scored goes to
/// `visit`. The allocation it ends at.
pub(crate) fn local_search(
    holes: usize,
    cores: u64,
    threads: &dyn Fn(&[u64]) -> Option<u64>,
    value: &dyn Fn(&[u64]) -> f64,
    limit: u64,
    visit: &mut dyn FnMut(&[u64], u64, f64),
) -> Vec<u64> {
    let mut counts = vec![1u64; holes];
    let mut score = |c: &[u64]| -> Option<(f64, u64)> {
        let t = threads(c).filter(|&t| t <= cores)?;
        let v = value(c);
        visit(c, t, v);
        Some((v, t))
    };
    let Some(mut current) = score(&counts) else {
        return counts;
    };
    let mut spent = 1u64;
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
            if spent >= limit {
                return counts;
            }
            spent += 1;
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
