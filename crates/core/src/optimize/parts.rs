//! The exact allocation by parts: every sub-term that holds a `?` gets its best time for
//! every thread budget up to the cores, and a pattern combines its parts' (module docs of
//! [`super`]).
//!
//! A sub-term's answer is its *frontier*: the allocations that no other beats, as
//! `(threads, time)` points with the threads rising and the time falling; the best time
//! within `b` threads is the last point with at most `b`. The threads are counted as
//! [`crate::compose`] counts them, the times as it composes them:
//!
//! | sub-term | threads | time | frontier |
//! |---|---|---|---|
//! | no `?` | as written | as composed | one point |
//! | `seq(a, b, ...)` | the most of its parts' (they run one after the other) | the sum | at each budget, every part at its best within it |
//! | `pipe(a, b, ...)` | the sum of its stages' (they run side by side) | the largest | the slowest stage gets its next point, again and again |
//! | `tpool(?, t)` | `n·c` for `t` on `c` | `t`'s time / `n` | every point of `t` times every `n` with `n·c` within the budget: the divisors of each budget |
//! | `tpool(k, t)` | `min(k, C)·c` | `t`'s time / `min(k, C)` | each point of `t`, scaled |
//!
//! The time of each pattern grows with its parts' times, so the best allocation of a
//! whole uses a best allocation of each part at some budget: the frontiers are exact. A
//! pipeline's takes its stages' points times a logarithm, a `seq`'s its parts' points
//! times their number, a task pool's with a `?` about `C·ln C` steps for `C` cores (the
//! multiples of each body point's threads). A `?` inside a MapReduce, a divide and conquer or a matrix product (whose
//! parts are timed at other sizes than the whole) makes that pattern one part whose
//! allocations are enumerated, up to [`super::EXHAUSTIVE_LIMIT`] of them, else searched
//! locally within the same number of evaluations: such a part is named in the outcome.

use std::collections::{BinaryHeap, HashMap};

use super::allocate::{enumerate, local_search, TIE};
use crate::components::Components;
use crate::compose::{compose_node, threads_with, ComposeOptions};
use crate::diag::{Diagnostic, Span};
use crate::model::Expr;
use crate::term::{CountValue, Hole, Node, NodeKind, Term};

/// Evaluations between two calls of the progress callback.
const PROGRESS_EVERY: u64 = 4096;

/// One allocation on a frontier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    pub threads: u64,
    pub value: f64,
}

/// The allocations of a sub-term that no other beats, fewest threads first, and how to
/// write each one's counts.
pub(crate) struct Frontier {
    pub points: Vec<Point>,
    picks: Picks,
}

impl Frontier {
    fn empty() -> Frontier {
        Frontier {
            points: Vec::new(),
            picks: Picks::Fixed,
        }
    }
}

/// How a frontier's points were made, kept after the points themselves are combined
/// into the enclosing pattern's (a few bytes a point: a deep design keeps one of these
/// per level and budget).
enum Picks {
    /// No `?` inside.
    Fixed,
    /// A task pool; point `i` runs `choice[i].0` workers over the body's point
    /// `choice[i].1`.
    Pool {
        hole: Option<usize>,
        choice: Vec<(u32, u32)>,
        body: Box<Picks>,
    },
    /// A `seq` or a pipeline; point `i` takes point `at[i·k + j]` of part `j` (of `k`).
    Parts { at: Vec<u32>, parts: Vec<Picks> },
    /// A pattern whose holes were enumerated or searched; point `i` has the counts
    /// `counts[i·k..(i+1)·k]` for its `k` holes.
    Enumerated { holes: Vec<usize>, counts: Vec<u64> },
}

/// Whether time `a` beats time `b` by more than rounding.
fn lower(a: f64, b: f64) -> bool {
    if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) {
        return false;
    }
    if b.is_infinite() {
        return true;
    }
    let scale = a.abs().max(b.abs()).max(f64::MIN_POSITIVE);
    b - a > TIE * scale
}

/// A time that compares: what cannot be evaluated counts as infinitely slow.
fn time(v: f64) -> f64 {
    if v.is_nan() {
        f64::INFINITY
    } else {
        v
    }
}

/// The result of solving a design by parts.
pub(crate) struct Solved {
    /// The root's frontier.
    pub frontier: Frontier,
    /// The parts whose allocation came from a local search (not guaranteed).
    pub searched: Vec<Span>,
}

impl Solved {
    /// The counts of the holes at point `i` of the root's frontier.
    pub fn counts(&self, i: usize, holes: usize) -> Vec<u64> {
        let mut counts = vec![1; holes];
        write_counts(&self.frontier.picks, i, &mut counts);
        counts
    }
}

fn write_counts(picks: &Picks, i: usize, counts: &mut [u64]) {
    match picks {
        Picks::Fixed => {}
        Picks::Pool { hole, choice, body } => {
            let (n, at) = choice[i];
            if let Some(h) = hole {
                counts[*h] = u64::from(n);
            }
            write_counts(body, at as usize, counts);
        }
        Picks::Parts { at, parts } => {
            let k = parts.len();
            for (part, &j) in parts.iter().zip(&at[i * k..(i + 1) * k]) {
                write_counts(part, j as usize, counts);
            }
        }
        Picks::Enumerated { holes, counts: c } => {
            let k = holes.len();
            for (&h, &n) in holes.iter().zip(&c[i * k..(i + 1) * k]) {
                counts[h] = n;
            }
        }
    }
}

/// Solves a design's sub-terms against one budget.
pub(crate) struct Solver<'a> {
    term: &'a Term,
    holes: HashMap<&'a str, usize>,
    /// Where each hole is.
    spans: Vec<Span>,
    /// The holes' positions in the source, sorted (a node holds a hole when one of
    /// them lies in its span).
    starts: Vec<usize>,
    components: &'a Components,
    opts: ComposeOptions,
    point: Vec<(&'a str, f64)>,
    budget: u64,
    progress: &'a mut dyn FnMut(u64),
    evaluations: u64,
    searched: Vec<Span>,
}

impl<'a> Solver<'a> {
    pub fn new(
        term: &'a Term,
        holes: &'a [Hole],
        components: &'a Components,
        point: &'a [(String, f64)],
        budget: u64,
        progress: &'a mut dyn FnMut(u64),
    ) -> Solver<'a> {
        let mut starts: Vec<usize> = holes.iter().map(|h| h.span.start).collect();
        starts.sort_unstable();
        Solver {
            term,
            holes: holes
                .iter()
                .enumerate()
                .map(|(i, h)| (h.name.as_str(), i))
                .collect(),
            spans: holes.iter().map(|h| h.span).collect(),
            starts,
            components,
            opts: ComposeOptions {
                cores: Some(budget),
            },
            point: point.iter().map(|(n, v)| (n.as_str(), *v)).collect(),
            budget,
            progress,
            evaluations: 0,
            searched: Vec::new(),
        }
    }

    /// The frontier of the whole design.
    pub fn solve(mut self) -> Result<Solved, Diagnostic> {
        let frontier = self.node(&self.term.root)?;
        Ok(Solved {
            frontier,
            searched: self.searched,
        })
    }

    fn has_hole(&self, n: &Node) -> bool {
        let i = self.starts.partition_point(|&s| s < n.span.start);
        self.starts.get(i).is_some_and(|&s| s < n.span.end)
    }

    fn error(&self, n: &Node, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.term.origin, &self.term.source, n.span, msg)
    }

    /// The frontier of `n`; the progress callback hears of every pattern combined.
    // Out of line: inlined, the patterns' locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn node(&mut self, n: &Node) -> Result<Frontier, Diagnostic> {
        if !self.has_hole(n) {
            return self.fixed(n);
        }
        let frontier = match &n.kind {
            NodeKind::Seq(parts) => {
                let parts = parts
                    .iter()
                    .map(|p| self.node(p))
                    .collect::<Result<Vec<_>, _>>()?;
                seq(parts)
            }
            NodeKind::Pipe(_) => {
                // Directly nested pipes are one pipeline, as composition counts them.
                let mut stages = Vec::new();
                let mut stack = vec![n];
                while let Some(p) = stack.pop() {
                    match &p.kind {
                        NodeKind::Pipe(v) => stack.extend(v.iter().rev()),
                        _ => stages.push(p),
                    }
                }
                let parts = stages
                    .into_iter()
                    .map(|p| self.node(p))
                    .collect::<Result<Vec<_>, _>>()?;
                pipe(parts, self.budget)
            }
            NodeKind::Tpool { threads, body } => match &threads.value {
                CountValue::Param(p) => {
                    let hole = *self.holes.get(p.as_str()).ok_or_else(|| {
                        self.error(
                            n,
                            format!("the thread count `{p}` is a parameter; write a number or `?`"),
                        )
                    })?;
                    pool(self.node(body)?, hole, self.budget)
                }
                CountValue::Int(k) => {
                    fixed_pool(self.node(body)?, (*k).clamp(1, self.budget), self.budget)
                }
            },
            _ => self.enumerated(n)?,
        };
        (self.progress)(self.evaluations);
        Ok(frontier)
    }

    /// A sub-term without holes: one point.
    fn fixed(&mut self, n: &Node) -> Result<Frontier, Diagnostic> {
        let threads = threads_with(n, Some(self.budget), &|_| None).ok_or_else(|| {
            self.error(
                n,
                "the design's threads depend on a count that is a parameter; write it as a number or `?`",
            )
        })?;
        let model = compose_node(self.term, n, self.components, self.opts, &Expr::one())?;
        let value = time(model.eval_at(&self.point).unwrap_or(f64::NAN));
        let points = if threads <= self.budget {
            vec![Point { threads, value }]
        } else {
            Vec::new()
        };
        Ok(Frontier {
            points,
            picks: Picks::Fixed,
        })
    }

    /// A pattern whose parts are timed at other sizes than the whole: its own holes,
    /// every allocation within the budget, or a bounded local search.
    fn enumerated(&mut self, n: &Node) -> Result<Frontier, Diagnostic> {
        let mut m = compose_node(self.term, n, self.components, self.opts, &Expr::one())?;
        for (name, v) in &self.point {
            m = m.subst(name, &Expr::constant(*v));
        }
        // The holes inside `n`, in order.
        let mut inside: Vec<(&str, usize)> = self
            .holes
            .iter()
            .filter(|(_, &i)| {
                n.span.start <= self.spans[i].start && self.spans[i].end <= n.span.end
            })
            .map(|(name, &i)| (*name, i))
            .collect();
        inside.sort_by_key(|(_, i)| *i);
        let budget = self.budget;
        let threads = |c: &[u64]| {
            let lookup = |p: &str| inside.iter().position(|(n, _)| *n == p).map(|i| c[i]);
            threads_with(n, Some(budget), &lookup)
        };
        let value = |c: &[u64]| {
            let env: Vec<(&str, f64)> = inside
                .iter()
                .zip(c)
                .map(|((n, _), &k)| (*n, k as f64))
                .collect();
            time(m.eval_at(&env).unwrap_or(f64::NAN))
        };
        // Per thread count, the best allocation seen.
        let mut best: Vec<Option<(f64, Vec<u64>)>> = vec![None; budget as usize + 1];
        let mut evaluations = self.evaluations;
        let progress = &mut *self.progress;
        let mut visit = |c: &[u64], t: u64, v: f64| {
            evaluations += 1;
            if evaluations % PROGRESS_EVERY == 0 {
                progress(evaluations);
            }
            let slot = &mut best[t as usize];
            if slot.as_ref().is_none_or(|(bv, _)| lower(v, *bv)) {
                *slot = Some((v, c.to_vec()));
            }
        };
        let limit = super::EXHAUSTIVE_LIMIT;
        if !enumerate(
            inside.len(),
            budget,
            &threads,
            &value,
            Some(limit),
            &mut visit,
        ) {
            // Too many: what a local search within the same number of evaluations finds.
            local_search(inside.len(), budget, &threads, &value, limit, &mut visit);
            self.searched.push(n.span);
        }
        self.evaluations = evaluations;
        let mut points: Vec<Point> = Vec::new();
        let mut counts = Vec::new();
        for (t, b) in best.into_iter().enumerate() {
            let Some((v, c)) = b else { continue };
            if points.last().is_none_or(|p| lower(v, p.value)) {
                points.push(Point {
                    threads: t as u64,
                    value: v,
                });
                counts.extend(c);
            }
        }
        Ok(Frontier {
            points,
            picks: Picks::Enumerated {
                holes: inside.iter().map(|(_, i)| *i).collect(),
                counts,
            },
        })
    }
}

/// `seq(parts)`: at each budget every part at its best within it; the threads are the
/// most any part uses, the time the sum.
fn seq(parts: Vec<Frontier>) -> Frontier {
    if parts.iter().any(|p| p.points.is_empty()) {
        return Frontier::empty();
    }
    // Every budget where some part gains a point, from the least that fits all.
    let start = parts.iter().map(|p| p.points[0].threads).max().unwrap_or(1);
    let mut budgets: Vec<u64> = parts
        .iter()
        .flat_map(|p| p.points.iter().map(|q| q.threads))
        .filter(|&t| t >= start)
        .collect();
    budgets.push(start);
    budgets.sort_unstable();
    budgets.dedup();
    let mut at = vec![0usize; parts.len()];
    let mut points = Vec::new();
    let mut picks = Vec::new();
    for b in budgets {
        for (j, p) in parts.iter().enumerate() {
            while at[j] + 1 < p.points.len() && p.points[at[j] + 1].threads <= b {
                at[j] += 1;
            }
        }
        let value: f64 = parts.iter().zip(&at).map(|(p, &i)| p.points[i].value).sum();
        let threads = parts
            .iter()
            .zip(&at)
            .map(|(p, &i)| p.points[i].threads)
            .max()
            .unwrap_or(1);
        if points.last().is_none_or(|q: &Point| lower(value, q.value)) {
            points.push(Point { threads, value });
            picks.extend(at.iter().map(|&i| i as u32));
        }
    }
    Frontier {
        points,
        picks: Picks::Parts {
            at: picks,
            parts: parts.into_iter().map(|p| p.picks).collect(),
        },
    }
}

/// The time of stage `stage` at its point, ordered for a max-heap (ties: the first
/// stage).
#[derive(PartialEq)]
struct Slowest {
    value: f64,
    stage: usize,
}

impl Eq for Slowest {}

impl PartialOrd for Slowest {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Slowest {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.value
            .total_cmp(&other.value)
            .then(other.stage.cmp(&self.stage))
    }
}

/// `pipe(stages)`: the threads add up, the time is the slowest stage's. From every stage
/// at its fewest threads, the slowest stage moves to its next point, again and again:
/// each time the slowest time drops, that is the fewest threads reaching it (a faster
/// pipeline needs every stage at least as fast, so at least those points).
fn pipe(parts: Vec<Frontier>, budget: u64) -> Frontier {
    if parts.iter().any(|p| p.points.is_empty()) {
        return Frontier::empty();
    }
    let mut at = vec![0usize; parts.len()];
    let mut threads: u64 = parts.iter().map(|p| p.points[0].threads).sum();
    if threads > budget {
        return Frontier::empty();
    }
    let mut heap: BinaryHeap<Slowest> = parts
        .iter()
        .enumerate()
        .map(|(stage, p)| Slowest {
            value: p.points[0].value,
            stage,
        })
        .collect();
    let mut points = vec![Point {
        threads,
        value: heap.peek().map_or(0.0, |s| s.value),
    }];
    let mut picks = vec![0u32; parts.len()];
    while let Some(slowest) = heap.pop() {
        let j = slowest.stage;
        let p = &parts[j].points;
        let Some(next) = p.get(at[j] + 1) else {
            break;
        };
        threads = threads - p[at[j]].threads + next.threads;
        if threads > budget {
            break;
        }
        at[j] += 1;
        heap.push(Slowest {
            value: next.value,
            stage: j,
        });
        let value = heap.peek().map_or(next.value, |s| s.value);
        if points.last().is_some_and(|q| lower(value, q.value)) {
            points.push(Point { threads, value });
            picks.extend(at.iter().map(|&i| i as u32));
        }
    }
    Frontier {
        points,
        picks: Picks::Parts {
            at: picks,
            parts: parts.into_iter().map(|p| p.picks).collect(),
        },
    }
}

/// `tpool(?, body)`: `n` workers over a body of `c` threads use `n·c`, for the body's
/// time over `n`; every `n` with `n·c` within the budget. On `m` threads that is the
/// body's `c·time` over `m`, least among the body's points whose `c` divides `m`. Of
/// equal times on equal threads, the most workers (whole copies of the body rather
/// than wider parts).
fn pool(body: Frontier, hole: usize, budget: u64) -> Frontier {
    // Per thread count `m`, the least `c·time` of a body point with `c` dividing `m`, and
    // that point. Points in order of `c`: a later one replaces only a clearly lower work.
    let slots = budget as usize + 1;
    let mut work = vec![f64::INFINITY; slots];
    let mut from = vec![u32::MAX; slots];
    for (i, p) in body.points.iter().enumerate() {
        let c = p.threads as usize;
        if c == 0 {
            continue;
        }
        let w = p.value * c as f64;
        for m in (c..slots).step_by(c) {
            if from[m] == u32::MAX || lower(w, work[m]) {
                work[m] = w;
                // Indices fit: a frontier has at most `MAX_CORES` points.
                from[m] = i as u32;
            }
        }
    }
    let mut points: Vec<Point> = Vec::new();
    let mut choice = Vec::new();
    for (m, &i) in from.iter().enumerate().skip(1) {
        if i == u32::MAX {
            continue;
        }
        let c = body.points[i as usize].threads;
        let n = m as u64 / c;
        let v = body.points[i as usize].value / n as f64;
        if points.last().is_none_or(|q| lower(v, q.value)) {
            points.push(Point {
                threads: m as u64,
                value: v,
            });
            choice.push((n as u32, i));
        }
    }
    Frontier {
        points,
        picks: Picks::Pool {
            hole: Some(hole),
            choice,
            body: Box::new(body.picks),
        },
    }
}

/// `tpool(k, body)` with `k` capped at the cores: the body's points, `k` times the
/// threads, the time over `k`.
fn fixed_pool(body: Frontier, k: u64, budget: u64) -> Frontier {
    let mut points = Vec::new();
    let mut choice = Vec::new();
    for (i, p) in body.points.iter().enumerate() {
        let Some(c) = p.threads.checked_mul(k).filter(|&c| c <= budget) else {
            break;
        };
        points.push(Point {
            threads: c,
            value: p.value / k as f64,
        });
        choice.push((k as u32, i as u32));
    }
    Frontier {
        points,
        picks: Picks::Pool {
            hole: None,
            choice,
            body: Box::new(body.picks),
        },
    }
}
