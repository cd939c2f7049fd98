//! The pattern term language: how a designer writes down a parallel program.
//!
//! ```text
//! term := NAME                                   a component (sequential building block)
//!       | seq(term, ...)                         one after the other
//!       | pipe(term, ...)                        pipeline (n-ary = nested binary)
//!       | tpool(COUNT, term)                     task pool with COUNT worker threads
//!       | mapreduce(map, reduce, nodes=COUNT, threads=COUNT, keys=EXPR, per_key=EXPR [, shuffle=NAME] [, reduction=pairwise|local|global])
//!       | dc(divide, combine, leaf, procs=COUNT, exchange=NAME [, size=EXPR])
//!       | matmul(multiply, procs=COUNT, message=NAME, bcast=flat|binomial|pipeline [, segments=EXPR] [, bytes=EXPR])
//! COUNT := a positive integer | a parameter name (stays symbolic)
//! EXPR  := a model expression (see [`crate::model`]), e.g. `768`, `x`, `x / 2`
//! ```
//!
//! [`parse_term`] is a hand-written recursive-descent parser: every node of the resulting
//! [`Term`] carries the byte [`Span`] it was read from, so that later stages (an unknown
//! component, a model that cannot be evaluated) can put a caret under the right part of
//! what the user typed. Keyword arguments may come in any order; the printer
//! (`Display`) writes the canonical form, which parses back to the same term.
//!
//! The parser knows nothing about components: whether `qsort` exists is decided when
//! the term is composed ([`crate::compose`]).

mod parse;
mod print;
#[cfg(test)]
mod tests;

use crate::diag::Span;
use crate::model::Expr;

pub use parse::{hole_name, parse_design, parse_term, parse_term_with, Hole, MAX_TERM_DEPTH};

/// The patterns, as written in terms (also the words a component may not be called).
pub const PATTERNS: &[&str] = &["seq", "pipe", "tpool", "mapreduce", "dc", "matmul"];

/// A parsed term together with the text it came from (needed to locate later errors).
#[derive(Clone, Debug)]
pub struct Term {
    /// Where the text came from: `<term>` for a command-line argument, or a file path.
    pub origin: String,
    /// The full text the spans point into.
    pub source: String,
    pub root: Node,
}

impl Term {
    /// The source text under a span (the user's own spelling of a sub-term).
    pub fn text(&self, span: Span) -> &str {
        self.source.get(span.start..span.end).unwrap_or("")
    }
}

/// One node of a term.
#[derive(Clone, Debug)]
pub struct Node {
    pub kind: NodeKind,
    /// The whole node, from its name to its closing parenthesis.
    pub span: Span,
}

/// The closed grammar of terms.
#[derive(Clone, Debug)]
pub enum NodeKind {
    /// A sequential building block, looked up in the components.
    Component(String),
    /// `seq(a, b, ...)`: run one after the other.
    Seq(Vec<Node>),
    /// `pipe(a, b, ...)`: a pipeline with one stage per argument.
    Pipe(Vec<Node>),
    /// `tpool(n, t)`: a task pool of `n` workers, each running `t` on its own elements.
    Tpool {
        threads: Count,
        body: Box<Node>,
    },
    MapReduce(Box<MapReduce>),
    Dc(Box<Dc>),
    Matmul(Box<Matmul>),
}

/// `mapreduce(map, reduce, nodes=m, threads=n, keys=k(x), per_key=d(x)[, shuffle=S])`.
#[derive(Clone, Debug)]
pub struct MapReduce {
    pub map: Node,
    pub reduce: Node,
    pub nodes: Count,
    pub threads: Count,
    /// `k(x)`: the number of keys for `x` input elements.
    pub keys: ExprArg,
    /// `d(x)`: the number of elements per key.
    pub per_key: ExprArg,
    /// The shuffle component; without one the shuffle phase costs nothing (a single
    /// node, as in GrPPI).
    pub shuffle: Option<Name>,
    /// How the nodes' results are reduced (`reduction=`); `None`: as the reduce block
    /// does it on one node (pairwise for a pairwise reduce, per key locally otherwise).
    pub reduction: Option<ReductionArg>,
}

/// The pattern-composition paper's three ways (§4.2.5) to reduce a MapReduce over several nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Every node reduces its key-value collections pairwise to one; the root receives
    /// one collection per other node and reduces them pairwise too.
    Pairwise,
    /// Every node reduces per key to one collection; the root receives one per other node
    /// and reduces them per key.
    Local,
    /// Every node owns a share of the keys: the map outputs go to the keys' owners (an
    /// all-to-all), each reduces its keys over all values, and the root gathers the results.
    Global,
}

impl Reduction {
    /// Every variant, in the order the seed lists them.
    pub const ALL: [Reduction; 3] = [Reduction::Pairwise, Reduction::Local, Reduction::Global];

    /// The name in a term (`reduction=global`).
    pub fn name(self) -> &'static str {
        match self {
            Reduction::Pairwise => "pairwise",
            Reduction::Local => "local",
            Reduction::Global => "global",
        }
    }

    /// The variant of a name, if it is one.
    pub fn from_name(name: &str) -> Option<Reduction> {
        Reduction::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// A `reduction=` argument with where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReductionArg {
    pub value: Reduction,
    pub span: Span,
}

/// `dc(divide, combine, leaf, procs=P, exchange=E[, size=K])`: hypercube divide and
/// conquer over `P` processes (the divide-and-conquer paper).
#[derive(Clone, Debug)]
pub struct Dc {
    pub divide: Node,
    pub combine: Node,
    /// The sequential solver each process runs on its `S/P` share.
    pub leaf: Node,
    pub procs: Count,
    /// The component modelling one exchange between partners; its `x` is the message size.
    pub exchange: Name,
    /// The message size `K` exchanged at a level; inside it `x` is that level's
    /// subproblem size and `j` the level. Default: `x`.
    pub size: Option<ExprArg>,
}

/// `matmul(multiply, procs=P, message=MSG, bcast=B[, segments=K][, bytes=EXPR])`: seed
/// 002's matrix multiplication by Fox's broadcast–multiply–roll algorithm on a `√P × √P`
/// mesh of processes, for matrices of order `x`.
#[derive(Clone, Debug)]
pub struct Matmul {
    /// The block product each process runs once per iteration (`C += A·B` on blocks of
    /// order `x/√P`; its `x` is the block order).
    pub multiply: Node,
    /// `P`, a perfect square.
    pub procs: Count,
    /// The component modelling one point-to-point message; its `x` is the bytes sent.
    pub message: Name,
    /// How a block of A is broadcast along a mesh row.
    pub bcast: BroadcastArg,
    /// Segments of a pipelined broadcast (`bcast=pipeline` only).
    pub segments: Option<ExprArg>,
    /// The bytes of one block in terms of its order `x`. Default: `8 * x^2` (doubles).
    pub bytes: Option<ExprArg>,
}

/// The broadcasts the matrix-multiplication paper compares for Fox's algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broadcast {
    /// The root sends to every other process in turn.
    Flat,
    /// A binomial tree: `⌈log2 q⌉` rounds.
    Binomial,
    /// A chain along which the block flows in `segments` pieces.
    Pipeline,
}

impl Broadcast {
    /// Every variant.
    pub const ALL: [Broadcast; 3] = [Broadcast::Flat, Broadcast::Binomial, Broadcast::Pipeline];

    /// The name in a term (`bcast=binomial`).
    pub fn name(self) -> &'static str {
        match self {
            Broadcast::Flat => "flat",
            Broadcast::Binomial => "binomial",
            Broadcast::Pipeline => "pipeline",
        }
    }

    /// The variant of a name, if it is one.
    pub fn from_name(name: &str) -> Option<Broadcast> {
        Broadcast::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// A `bcast=` argument with where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BroadcastArg {
    pub value: Broadcast,
    pub span: Span,
}

/// A component name used as an argument (`shuffle=S`, `exchange=E`, `message=M`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub name: String,
    pub span: Span,
}

/// A number of threads, nodes or processes: a positive integer or a parameter name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub value: CountValue,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CountValue {
    Int(u64),
    Param(String),
}

impl Count {
    /// The count as a model (a constant or a parameter).
    pub fn to_expr(&self) -> Expr {
        match &self.value {
            CountValue::Int(n) => Expr::constant(*n as f64),
            CountValue::Param(p) => Expr::param(p),
        }
    }

    /// The integer, when the count is one.
    pub fn as_int(&self) -> Option<u64> {
        match self.value {
            CountValue::Int(n) => Some(n),
            CountValue::Param(_) => None,
        }
    }
}

/// A model expression given as an argument (`keys=768`), with the span of its text.
#[derive(Clone, Debug)]
pub struct ExprArg {
    pub expr: Expr,
    pub span: Span,
}

impl Node {
    /// The pattern's name (`pipe`, ...) or the component's name.
    pub fn head(&self) -> &str {
        match &self.kind {
            NodeKind::Component(n) => n,
            NodeKind::Seq(_) => "seq",
            NodeKind::Pipe(_) => "pipe",
            NodeKind::Tpool { .. } => "tpool",
            NodeKind::MapReduce(_) => "mapreduce",
            NodeKind::Dc(_) => "dc",
            NodeKind::Matmul(_) => "matmul",
        }
    }

    /// The sub-terms, in order.
    pub fn children(&self) -> Vec<&Node> {
        match &self.kind {
            NodeKind::Component(_) => Vec::new(),
            NodeKind::Seq(v) | NodeKind::Pipe(v) => v.iter().collect(),
            NodeKind::Tpool { body, .. } => vec![body],
            NodeKind::MapReduce(mr) => vec![&mr.map, &mr.reduce],
            NodeKind::Dc(dc) => vec![&dc.divide, &dc.combine, &dc.leaf],
            NodeKind::Matmul(mm) => vec![&mm.multiply],
        }
    }

    /// Every component name the node refers to (including `shuffle=` and `exchange=`),
    /// with its span, in source order.
    pub fn component_refs(&self) -> Vec<Name> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            match &n.kind {
                NodeKind::Component(c) => out.push(Name {
                    name: c.clone(),
                    span: n.span,
                }),
                NodeKind::MapReduce(mr) => {
                    if let Some(s) = &mr.shuffle {
                        out.push(s.clone());
                    }
                }
                NodeKind::Dc(dc) => out.push(dc.exchange.clone()),
                NodeKind::Matmul(mm) => out.push(mm.message.clone()),
                _ => {}
            }
            stack.extend(n.children().into_iter().rev());
        }
        out.sort_by_key(|n| n.span.start);
        out
    }

    /// Number of pattern nodes (everything but components).
    pub fn pattern_count(&self) -> usize {
        let mut count = 0;
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            if !matches!(n.kind, NodeKind::Component(_)) {
                count += 1;
            }
            stack.extend(n.children());
        }
        count
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a
/// plausible typo (for "did you mean" hints).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) && *d < c.len().max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
