//! Composition: turn a term and the models of its components into a model of the whole
//! program, keeping the provenance a designer needs to act on it.
//!
//! The metric is the pattern-composition paper's: the average time a data element spends in the program
//! (1/throughput), as a function of the input size `x` of an element.
//!
//! | term | model |
//! |---|---|
//! | `seq(a, b)` | `M[a] + M[b]` |
//! | `tpool(n, t)` | `M[t] / n`, or `M[t] / min(n, C)` with `cores = C` (and a note when it caps) |
//! | `pipe(a, b)` | `max(M[a], M[b])`, the pointwise maximum; stages and crossovers are kept |
//! | `mapreduce(map, reduce, nodes=m, threads=n, keys=k, per_key=d, shuffle=S)` | `x·M[map](1)/(m·n) + M[S](d) + k·M[reduce](d)/(m·n)` (the pattern-composition paper's eq. 5) |
//! | `dc(div, comb, leaf, procs=P, exchange=E, size=K)` | `Σ_{j=0}^{log2 P − 1} [M[div](x/2^j) + M[comb](x/2^j) + M[E](K_j)] + M[leaf](x/P)` (the divide-and-conquer paper) |
//! | `matmul(mult, procs=P, message=E, bcast=B)` | `q·[½·B(q, b) + M[E](b) + M[mult](x/q)]`, `q = √P`, `b = bytes(x/q)` (the matrix-multiplication paper, [`crate::skeleton::FoxBlocks`]) |
//!
//! Names inside models: `x` is the input size of whatever the model describes. In
//! `mapreduce`, the component models see `m` (nodes), `n` (threads per node) and `k`
//! (the keys `k(x)`) bound to the pattern's arguments, and the reduce and shuffle see
//! `x := d(x)`; `keys=` and `per_key=` are expressions in the pattern's input size `x`
//! and may use `m` and `n` too. In `dc`, `x` is the size `S` of the whole problem, level
//! `j` (`0 ≤ j < log2 P`) works on subproblems of size `S/2^j`, and the exchange
//! component's `x` is the message size `K_j` exchanged at that level: `size=EXPR` gives
//! it, with `x` meaning the level's subproblem size and `j` the level (default
//! `size=x`: partners exchange their whole subproblem). The `dc` metric is the time of
//! one problem of size `x`, as in the divide-and-conquer paper. In `matmul`, `x` is the order of the
//! matrices, the block product's `x` the order of a block (`x/√P`), and the message
//! component's `x` the bytes of one message: a block (`bytes=`, default `8·x²`), or a
//! `1/k` of it in a pipelined broadcast of `segments=k`. Every other name stays free.
//!
//! [`compose`] returns a [`Composition`]: the model, every pipeline with its stages
//! (for dominance and crossovers, see [`crossover`]), and notes (cores capping,
//! missing shuffle, oversubscription). [`predict`](predict::predict) evaluates it on a
//! grid and adds the analyses; [`laws`] checks the pattern-composition paper's relational theory.

pub mod crossover;
pub mod grid;
pub mod interval;
pub mod laws;
pub(crate) mod mesh;
mod overhead;
pub mod predict;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_uncertainty;
pub mod uses;

use crate::components::Components;
use crate::diag::{Diagnostic, Span};
use crate::model::Expr;
use crate::term::{closest, Count, CountValue, Node, NodeKind, Term};

/// The size parameter crossovers are searched along.
pub const AXIS: &str = "x";

/// How to compose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComposeOptions {
    /// Hardware threads available per node: thread counts above it do not divide further.
    /// `None`: unlimited, as the seed assumes.
    pub cores: Option<u64>,
}

/// The result of composing a term.
#[derive(Clone, Debug)]
pub struct Composition {
    pub model: Expr,
    /// Every pipeline of the term, outermost first (directly nested pipes are one
    /// pipeline: `pipe(a, pipe(b, c))` has the stages a, b, c, by associativity).
    pub pipelines: Vec<Pipeline>,
    /// Things the user should know about how the model was built.
    pub notes: Vec<Note>,
    /// Threads the design keeps busy at once on one node, when all counts are numbers.
    pub threads: Option<u64>,
    /// Where each component with a measured range is evaluated.
    pub uses: Vec<uses::Use>,
}

/// A pipeline of the term. Stage models are built on demand ([`Composition::stages`]):
/// in a deeply nested term every pipeline's last stage holds the rest of the term, and
/// materialising all of them would make composition quadratic. A composition made for
/// the analyses ([`compose_keeping_stages`]) keeps those of the outermost pipelines.
#[derive(Clone, Debug)]
pub struct Pipeline {
    pub span: Span,
    /// The spans of its stages, in order.
    pub stage_spans: Vec<Span>,
    /// The factor the enclosing task pools put on every stage (`1/n`, ...).
    pub factor: Expr,
    /// The stage models as the composition built them, when it kept them.
    pub stage_models: Option<Vec<Expr>>,
}

/// One stage of a pipeline.
#[derive(Clone, Debug)]
pub struct Stage {
    pub term: String,
    pub span: Span,
    /// The stage's model as it enters the whole design: its own model times the factor
    /// of enclosing task pools (which does not change which stage leads).
    pub model: Expr,
}

/// A remark attached to part of the term.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub span: Span,
    pub kind: NoteKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A thread count was capped at the available cores.
    CoresCapped,
    /// The design runs more threads at once than there are cores.
    Oversubscribed,
    /// A `mapreduce` on several nodes without a shuffle component.
    NoShuffle,
    /// A shuffle phase inside a task pool (the paper's grammar excludes it).
    ShuffleInTaskPool,
}

/// Compose the model of `term` from `components`.
///
/// ```
/// use perfcompose_core::{components::seed_table1, compose::{compose, ComposeOptions}, term::parse_term};
/// let t = parse_term("<term>", "pipe(tpool(4, qsort), seq(inc, nop))").unwrap();
/// let c = compose(&t, &seed_table1(), ComposeOptions::default()).unwrap();
/// assert_eq!(c.model.to_string(), "max(258.5425 * x * log2(x), 5422.97 + 536.185 * x)");
/// assert_eq!(c.pipelines[0].stage_spans.len(), 2);
/// ```
pub fn compose(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
) -> Result<Composition, Diagnostic> {
    compose_keeping_stages(term, components, opts, 0)
}

/// [`compose`], keeping the stage models of the `keep` outermost pipelines
/// ([`Pipeline::stage_models`]) for [`Composition::stages`]: the composition builds
/// them anyway, and composing each stage again on its own made the analyses of a deeply
/// nested term quadratic.
pub fn compose_keeping_stages(
    term: &Term,
    components: &Components,
    opts: ComposeOptions,
    keep: usize,
) -> Result<Composition, Diagnostic> {
    let mut c = Composer {
        term,
        components,
        opts,
        pipelines: Vec::new(),
        notes: Vec::new(),
        tpool_depth: 0,
        uses: Vec::new(),
        keep_stages: keep,
    };
    let model = c.node(&term.root, &Expr::one())?;
    if !model.coefficients_finite() {
        return Err(c
            .error(
                term.root.span,
                "the composed model overflows: a coefficient is not finite",
            )
            .with_hint("check the components' constants and the counts in the term"));
    }
    let threads = threads_of(&term.root, opts.cores);
    let mut notes = c.notes;
    if let (Some(cores), Some(t)) = (opts.cores, threads) {
        if t > cores {
            notes.push(Note {
                span: term.root.span,
                kind: NoteKind::Oversubscribed,
                text: format!(
                    "the design keeps {t} threads busy on {cores} cores; the model assumes every stage and worker has a core of its own (the pattern-composition paper, §3.1), so expect it to be optimistic"
                ),
            });
        }
    }
    Ok(Composition {
        model,
        pipelines: c.pipelines,
        notes,
        threads,
        uses: c.uses,
    })
}

/// Compose a sub-term on its own, times `factor` (used to locate evaluation errors and
/// to build stage models).
pub(crate) fn compose_node(
    term: &Term,
    node: &Node,
    components: &Components,
    opts: ComposeOptions,
    factor: &Expr,
) -> Result<Expr, Diagnostic> {
    let mut c = Composer {
        term,
        components,
        opts,
        pipelines: Vec::new(),
        notes: Vec::new(),
        tpool_depth: 0,
        uses: Vec::new(),
        keep_stages: 0,
    };
    c.node(node, factor)
}

impl Composition {
    /// The stages of pipeline `index`, with their models.
    pub fn stages(
        &self,
        index: usize,
        term: &Term,
        components: &Components,
        opts: ComposeOptions,
    ) -> Result<Vec<Stage>, Diagnostic> {
        let p = &self.pipelines[index];
        p.stage_spans
            .iter()
            .enumerate()
            .map(|(i, span)| {
                let node = find_node(&term.root, *span).unwrap_or(&term.root);
                let model = match p.stage_models.as_ref().and_then(|m| m.get(i)) {
                    Some(m) => m.clone(),
                    None => compose_node(term, node, components, opts, &p.factor)?,
                };
                Ok(Stage {
                    term: node.to_string(),
                    span: *span,
                    model,
                })
            })
            .collect()
    }
}

/// The node with exactly this span.
pub fn find_node(root: &Node, span: Span) -> Option<&Node> {
    let mut n = root;
    loop {
        if n.span == span {
            return Some(n);
        }
        n = n
            .children()
            .into_iter()
            .find(|c| c.span.start <= span.start && span.end <= c.span.end)?;
    }
}

struct Composer<'a> {
    term: &'a Term,
    components: &'a Components,
    opts: ComposeOptions,
    pipelines: Vec<Pipeline>,
    notes: Vec<Note>,
    tpool_depth: usize,
    uses: Vec<uses::Use>,
    /// How many of the outermost pipelines keep their stage models.
    keep_stages: usize,
}

impl Composer<'_> {
    /// Record a use of component `name` (when it has a measured range).
    fn record(&mut self, name: &str, span: Span) {
        if let Some(u) = uses::Use::new(name, span, self.components) {
            self.uses.push(u);
        }
    }

    /// Substitute `bindings` in the arguments of the uses recorded since `from`.
    fn subst_uses(&mut self, from: usize, bindings: &[(&str, Expr)]) {
        for u in &mut self.uses[from..] {
            u.subst(bindings);
        }
    }

    /// The uses recorded since `from` lie inside a recursion over `var` from 0 to `to`.
    fn level_uses(&mut self, from: usize, var: &str, to: &Expr) {
        for u in &mut self.uses[from..] {
            u.levels
                .insert(0, (var.to_string(), Expr::zero(), to.clone()));
        }
    }

    fn error(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.term.origin, &self.term.source, span, msg)
    }

    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn component(&self, name: &str, span: Span) -> Result<Expr, Diagnostic> {
        match self.components.get(name) {
            Some(c) => Ok(c.model.clone()),
            None => {
                let known: Vec<&str> = self.components.names().collect();
                let list = if known.len() > 20 {
                    format!("{}, ... ({} in all)", known[..20].join(", "), known.len())
                } else {
                    known.join(", ")
                };
                let hint = match closest(name, known.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`? known components: {list}"),
                    None => format!("known components ({}): {list}", self.components.origin),
                };
                Err(self
                    .error(span, format!("unknown component `{name}`"))
                    .with_hint(hint))
            }
        }
    }

    /// The model of `n` times `factor` (a single PMNF term). Task pools push their
    /// `1/n` down to the components instead of rescaling the composed model: positive
    /// scaling distributes over sums and maxima anyway, and this keeps composition
    /// linear in the size of the term.
    fn node(&mut self, n: &Node, factor: &Expr) -> Result<Expr, Diagnostic> {
        match &n.kind {
            NodeKind::Component(name) => {
                let model = self.component(name, n.span)?;
                self.record(name, n.span);
                Ok(Expr::mul(factor.clone(), model))
            }
            NodeKind::Seq(parts) => {
                let models = parts
                    .iter()
                    .map(|p| self.node(p, factor))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Expr::sum_of(models))
            }
            NodeKind::Pipe(_) => self.pipe(n, factor),
            NodeKind::Tpool { threads, body } => {
                let divisor = self.capped(threads, n.span, "tpool", "threads");
                self.tpool_depth += 1;
                let inner = if divisor
                    .as_pmnf()
                    .is_some_and(|p| p.as_single_term().is_some())
                {
                    self.node(body, &Expr::div(factor.clone(), divisor))
                } else {
                    // min(n, C): not a single term, divide the composed model.
                    self.node(body, factor).map(|m| Expr::div(m, divisor))
                };
                self.tpool_depth -= 1;
                inner
            }
            NodeKind::MapReduce(mr) => self.mapreduce(n, mr, factor),
            NodeKind::Dc(dc) => {
                let m = self.dc(dc)?;
                Ok(Expr::mul(factor.clone(), m))
            }
            NodeKind::Matmul(mm) => {
                let m = self.matmul(mm)?;
                Ok(Expr::mul(factor.clone(), m))
            }
        }
    }

    /// A thread count divided by, capped at the cores when they are given.
    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn capped(&mut self, count: &Count, at: Span, pattern: &str, what: &str) -> Expr {
        let Some(cores) = self.opts.cores else {
            return count.to_expr();
        };
        // Name the pattern as written when it is short, else by its head and column.
        let written = self.term.text(at);
        let pattern = if written.len() <= 40 {
            format!("`{written}`")
        } else {
            let (_, col) = crate::diag::line_col(&self.term.source, at.start);
            format!("{pattern}(...) at column {col}")
        };
        match &count.value {
            CountValue::Int(k) if *k > cores => {
                self.notes.push(Note {
                    span: at,
                    kind: NoteKind::CoresCapped,
                    text: format!(
                        "{pattern}: {k} {what} capped at {cores} cores (divides by {cores}, not {k})"
                    ),
                });
                Expr::constant(cores as f64)
            }
            CountValue::Int(k) => Expr::constant(*k as f64),
            CountValue::Param(p) => {
                self.notes.push(Note {
                    span: at,
                    kind: NoteKind::CoresCapped,
                    text: format!(
                        "{pattern}: divides by min({p}, {cores}) ({what} capped at {cores} cores)"
                    ),
                });
                Expr::min(Expr::param(p), Expr::constant(cores as f64))
            }
        }
    }

    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn pipe(&mut self, n: &Node, factor: &Expr) -> Result<Expr, Diagnostic> {
        // Flatten directly nested pipes: by associativity they are one pipeline.
        let mut stage_nodes = Vec::new();
        let mut stack = vec![n];
        while let Some(p) = stack.pop() {
            match &p.kind {
                NodeKind::Pipe(v) => stack.extend(v.iter().rev()),
                _ => stage_nodes.push(p),
            }
        }
        let index = self.pipelines.len();
        self.pipelines.push(Pipeline {
            span: n.span,
            stage_spans: stage_nodes.iter().map(|s| s.span).collect(),
            factor: factor.clone(),
            stage_models: None,
        });
        let models = stage_nodes
            .into_iter()
            .map(|s| self.node(s, factor))
            .collect::<Result<Vec<_>, _>>()?;
        if index < self.keep_stages {
            self.pipelines[index].stage_models = Some(models.clone());
        }
        Ok(Expr::max_of(models))
    }

    /// The pattern-composition paper's eq. 5, times `factor`.
    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn mapreduce(
        &mut self,
        n: &Node,
        mr: &crate::term::MapReduce,
        factor: &Expr,
    ) -> Result<Expr, Diagnostic> {
        let m = mr.nodes.to_expr();
        let threads = self.capped(&mr.threads, n.span, "mapreduce", "threads per node");
        let workers = Expr::mul(m.clone(), threads.clone());
        // The pattern's own names in keys= and per_key=.
        let outer = [("m", m.clone()), ("n", threads.clone())];
        let keys = subst_simultaneous(mr.keys.expr.clone(), &outer);
        let per_key = subst_simultaneous(mr.per_key.expr.clone(), &outer);
        let bound = |x: Expr| {
            [
                ("x", x),
                ("m", m.clone()),
                ("n", threads.clone()),
                ("k", keys.clone()),
            ]
        };
        let x = Expr::param("x");
        let one = Expr::one();

        let from = self.uses.len();
        let map = self.node(&mr.map, &one)?;
        self.subst_uses(from, &bound(Expr::one()));
        let map_one = subst_simultaneous(map, &bound(Expr::one()));
        let map_phase = Expr::div(Expr::mul(x, map_one), workers.clone());

        let shuffle_phase = match &mr.shuffle {
            Some(s) => {
                let model = self.component(&s.name, s.span)?;
                let from = self.uses.len();
                self.record(&s.name, s.span);
                self.subst_uses(from, &bound(per_key.clone()));
                if self.tpool_depth > 0 {
                    self.notes.push(Note {
                        span: n.span,
                        kind: NoteKind::ShuffleInTaskPool,
                        text: "a mapreduce with a shuffle runs inside a task pool; the pattern-composition paper treats the shuffle as a property of the cluster and excludes this nesting".to_string(),
                    });
                }
                subst_simultaneous(model, &bound(per_key.clone()))
            }
            None => {
                if mr.nodes.as_int() != Some(1) {
                    self.notes.push(Note {
                        span: n.span,
                        kind: NoteKind::NoShuffle,
                        text: format!(
                            "mapreduce on {} nodes without shuffle=: the shuffle phase is taken to cost nothing",
                            mr.nodes
                        ),
                    });
                }
                Expr::zero()
            }
        };

        // The reduce may be a large sub-term: push `factor · k / (m·n)` into its
        // composition instead of rescaling it afterwards — allowed when that is a
        // single term free of the names the substitution below replaces.
        let bindings = bound(per_key.clone());
        let replaced: Vec<&str> = bindings
            .iter()
            .filter(|(name, by)| *by != Expr::param(name))
            .map(|(name, _)| *name)
            .collect();
        let scale = Expr::div(Expr::mul(factor.clone(), keys.clone()), workers.clone());
        let single = scale
            .as_pmnf()
            .is_some_and(|p| p.as_single_term().is_some());
        let from = self.uses.len();
        let reduce_phase = if single && !replaced.iter().any(|v| scale.mentions(v)) {
            let reduce = self.node(&mr.reduce, &scale)?;
            self.subst_uses(from, &bindings);
            subst_simultaneous(reduce, &bindings)
        } else {
            let reduce = self.node(&mr.reduce, &one)?;
            self.subst_uses(from, &bindings);
            let reduce_d = subst_simultaneous(reduce, &bindings);
            Expr::mul(
                factor.clone(),
                Expr::div(Expr::mul(keys, reduce_d), workers),
            )
        };
        let rest = Expr::mul(factor.clone(), Expr::add(map_phase, shuffle_phase));
        Ok(Expr::add(rest, reduce_phase))
    }

    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn dc(&mut self, dc: &crate::term::Dc) -> Result<Expr, Diagnostic> {
        let one = Expr::one();
        let at_level = self.uses.len();
        let divide = self.node(&dc.divide, &one)?;
        let combine = self.node(&dc.combine, &one)?;
        let at_leaf = self.uses.len();
        let leaf = self.node(&dc.leaf, &one)?;
        let at_exchange = self.uses.len();
        let exchange = self.component(&dc.exchange.name, dc.exchange.span)?;
        self.record(&dc.exchange.name, dc.exchange.span);
        let procs = dc.procs.to_expr();
        let size = dc
            .size
            .as_ref()
            .map_or_else(|| Expr::param("x"), |s| s.expr.clone());

        // The level variable must not capture a parameter of the models it sums.
        let j = fresh_var("j", &[&divide, &combine, &exchange, &size, &procs]);
        let level = Expr::param(&j);
        let sub = Expr::div(
            Expr::param("x"),
            Expr::pow_expr(Expr::constant(2.0), level.clone()),
        );
        let message = subst_simultaneous(size.clone(), &[("x", sub.clone()), ("j", level)]);
        let body = Expr::sum_of(vec![
            divide.subst("x", &sub),
            combine.subst("x", &sub),
            exchange.subst("x", &message),
        ]);
        let levels = Expr::log2(procs.clone());
        let last = Expr::sub(levels, Expr::one());
        let leaf_size = Expr::div(Expr::param("x"), procs);
        // The uses' arguments follow the model: divide and combine at x/2^j, the
        // exchange at the level's message, the leaf at x/P.
        let leaf_uses: Vec<uses::Use> = self.uses.drain(at_leaf..at_exchange).collect();
        for u in &mut self.uses[at_level..at_leaf] {
            u.subst(&[("x", sub.clone())]);
        }
        self.subst_uses(at_leaf, &[("x", message.clone())]);
        self.level_uses(at_level, &j, &last);
        let leaf_from = self.uses.len();
        self.uses.extend(leaf_uses);
        self.subst_uses(leaf_from, &[("x", leaf_size.clone())]);
        let recursion = Expr::sum_over(&j, Expr::zero(), last, body);
        let share = leaf.subst("x", &leaf_size);
        Ok(Expr::add(recursion, share))
    }
}

impl Composer<'_> {
    // Out of line: inlined, its locals would sit in every level's frame of the
    // recursion over deep terms.
    #[inline(never)]
    fn matmul(&mut self, mm: &crate::term::Matmul) -> Result<Expr, Diagnostic> {
        use crate::comm::Algorithm;
        use crate::term::Broadcast;
        let from = self.uses.len();
        let multiply = self.node(&mm.multiply, &Expr::one())?;
        let message = self.component(&mm.message.name, mm.message.span)?;
        let blocks = crate::skeleton::FoxBlocks {
            procs: mm.procs.to_expr(),
            multiply,
            message,
            bytes: mm
                .bytes
                .as_ref()
                .map_or_else(crate::skeleton::double_block_bytes, |b| b.expr.clone()),
            bcast: match mm.bcast.value {
                Broadcast::Flat => Algorithm::BcastFlat,
                Broadcast::Binomial => Algorithm::BcastBinomial,
                Broadcast::Pipeline => Algorithm::BcastPipeline,
            },
            segments: mm.segments.as_ref().map(|k| k.expr.clone()),
        };
        // The uses follow FoxBlocks: the block product at x/√P, a message of one
        // block's bytes (a 1/k of it in a pipelined broadcast).
        let block = Expr::div(
            Expr::param("x"),
            Expr::pow(blocks.procs.clone(), crate::model::Q::new(1, 2)),
        );
        self.subst_uses(from, &[("x", block.clone())]);
        let bytes = blocks.bytes.subst("x", &block);
        let mut sizes = vec![bytes.clone()];
        if let Some(k) = &blocks.segments {
            sizes.push(Expr::div(bytes, k.clone()));
        }
        for size in sizes {
            let at = self.uses.len();
            self.record(&mm.message.name, mm.message.span);
            self.subst_uses(at, &[("x", size)]);
        }
        Ok(blocks.model().expect("the three broadcasts have models"))
    }
}

/// Replace several names at once (`x := d(x)` and `k := k(x)` must not see each
/// other's results), by renaming to placeholders no user can write first.
pub fn subst_simultaneous(e: Expr, bindings: &[(&str, Expr)]) -> Expr {
    // Identity bindings (`x := x`, `n := n`) change nothing; skipping them saves a pass
    // over the model.
    let active: Vec<&(&str, Expr)> = bindings
        .iter()
        .filter(|(n, by)| *by != Expr::param(n) && e.mentions(n))
        .collect();
    if active.len() <= 1 {
        return match active.first() {
            Some((n, by)) => e.subst(n, by),
            None => e,
        };
    }
    let mut out = e;
    for (i, (n, _)) in active.iter().enumerate() {
        out = out.subst(n, &Expr::param(&format!("#{i}")));
    }
    for (i, (_, by)) in active.iter().enumerate() {
        out = out.subst(&format!("#{i}"), by);
    }
    out
}

/// `base`, or `base_1`, `base_2`, ... — the first not mentioned by any of `models`.
fn fresh_var(base: &str, models: &[&Expr]) -> String {
    std::iter::once(base.to_string())
        .chain((1..).map(|i| format!("{base}_{i}")))
        .find(|v| models.iter().all(|m| !m.mentions(v)))
        .unwrap_or_else(|| base.to_string())
}

/// Threads a node keeps busy at once (per node), when every count is a number: a
/// pipeline runs its stages side by side, a task pool multiplies (by at most the cores,
/// since capping is noted on its own), everything else runs its parts one after the
/// other.
pub(crate) fn threads_of(n: &Node, cores: Option<u64>) -> Option<u64> {
    threads_with(n, cores, &|_| None)
}

/// [`threads_of`], with the counts that are parameters looked up in `value`.
pub(crate) fn threads_with(
    n: &Node,
    cores: Option<u64>,
    value: &dyn Fn(&str) -> Option<u64>,
) -> Option<u64> {
    let cap = |k: u64| cores.map_or(k, |c| k.min(c));
    let count = |c: &Count| match &c.value {
        CountValue::Int(k) => Some(*k),
        CountValue::Param(p) => value(p),
    };
    let of = |c: &Node| threads_with(c, cores, value);
    match &n.kind {
        NodeKind::Component(_) => Some(1),
        NodeKind::Seq(v) => v.iter().map(of).try_fold(1u64, |a, t| Some(a.max(t?))),
        NodeKind::Pipe(v) => v.iter().map(of).try_fold(0u64, |a, t| a.checked_add(t?)),
        NodeKind::Tpool { threads, body } => cap(count(threads)?).checked_mul(of(body)?),
        NodeKind::MapReduce(mr) => {
            let inner = of(&mr.map)?.max(of(&mr.reduce)?);
            cap(count(&mr.threads)?).checked_mul(inner)
        }
        NodeKind::Dc(dc) => Some(of(&dc.divide)?.max(of(&dc.combine)?).max(of(&dc.leaf)?)),
        NodeKind::Matmul(mm) => of(&mm.multiply),
    }
}
