//! The term-driven path: a [`Plan`] (a term, as the runtime sees it) plus a [`Registry`]
//! of kernels builds a [`Program`] over [`Data`] with the typed API of
//! [`crate::pattern`], so both paths share one implementation.
//!
//! A plan is built from a parsed term (see `perfcompose_core::term`) or written directly.
//! Everything the runtime cannot run is rejected here with a reason: unknown kernels,
//! kernels in the wrong role (`pipe(map, inc)`), stages whose data do not fit, zero
//! threads, MapReduce on more than one node, and patterns without a thread
//! implementation (divide and conquer runs on MPI processes, not here). A `seq` with a
//! `pipe` or `tpool` among its parts runs in phases ([`Plan::phase_boundary`],
//! [`crate::pattern`]).

use std::fmt;
use std::sync::Arc;

use perfcompose_core::diag::Diagnostic;
use perfcompose_core::term::{parse_term, Count, Node, NodeKind, Reduction, Term};

use crate::ctx::Config;
use crate::data::{Data, DataKind};
use crate::error::{BuildError, KernelError};
use crate::kernel::{Inputs, Op, Registry};
use crate::mapreduce::{mapreduce, Reduce};
use crate::pattern::{adapt, pipe, seq, shared_block, tpool, Pattern};
use crate::program::Program;
use crate::timeline::Recorder;

/// A design as the runtime runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// A registered kernel.
    Kernel(String),
    /// `seq(a, b, ...)`, at least one part; in phases when a part is a `pipe` or `tpool`
    /// ([`Plan::phase_boundary`]).
    Seq(Vec<Plan>),
    /// `pipe(a, b, ...)`, at least one stage; n-ary is nested binary.
    Pipe(Vec<Plan>),
    /// `tpool(n, t)`.
    TPool(usize, Box<Plan>),
    /// `mapreduce(map, reduce, nodes=m, threads=n[, reduction=R])`; on one node the
    /// reduction style comes from the reduce kernel, and `reduction=` must agree with it.
    MapReduce {
        map: String,
        reduce: String,
        nodes: usize,
        threads: usize,
        reduction: Option<Reduction>,
    },
    /// A construct of the term language the runtime cannot execute, with the reason.
    Unsupported { what: String, why: String },
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, parts: &[Plan]| {
            write!(f, "{name}(")?;
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{p}")?;
            }
            write!(f, ")")
        };
        match self {
            Plan::Kernel(k) => write!(f, "{k}"),
            Plan::Seq(parts) => list(f, "seq", parts),
            Plan::Pipe(parts) => list(f, "pipe", parts),
            Plan::TPool(n, t) => write!(f, "tpool({n}, {t})"),
            Plan::MapReduce {
                map,
                reduce,
                nodes,
                threads,
                reduction,
            } => {
                write!(
                    f,
                    "mapreduce({map}, {reduce}, nodes={nodes}, threads={threads}"
                )?;
                if let Some(r) = reduction {
                    write!(f, ", reduction={}", r.name())?;
                }
                write!(f, ")")
            }
            Plan::Unsupported { what, .. } => write!(f, "{what}"),
        }
    }
}

/// A program over [`Data`] built from a plan, with what is needed to feed it.
pub struct Built {
    pub program: Program<Data, Data>,
    /// The kind of element the program takes.
    pub input: DataKind,
    /// Name of the kernel whose unit-test input is one element of the program's stream.
    pub source_kernel: String,
}

impl Plan {
    /// Threads busy at the same time when the plan runs (`tpool(n, pipe(a, b))` → 2n,
    /// `seq(pipe(a, b), tpool(3, c))` → 3: one phase at a time).
    pub fn threads(&self) -> usize {
        match self {
            Plan::Kernel(_) | Plan::Unsupported { .. } => 1,
            Plan::Seq(p) => p.iter().map(Plan::threads).max().unwrap_or(1),
            Plan::Pipe(p) => p.iter().map(Plan::threads).sum(),
            Plan::TPool(n, t) => n * t.threads(),
            Plan::MapReduce { threads, nodes, .. } => threads * nodes,
        }
    }

    /// Whether one element can be processed on one thread: a kernel, a MapReduce, a `seq`
    /// of callable parts. A `pipe` or `tpool`, and a `seq` with one of them among its
    /// parts, is a stream network; such a `seq` runs in phases (see
    /// [`crate::pattern`]).
    pub fn callable(&self) -> bool {
        match self {
            Plan::Kernel(_) | Plan::MapReduce { .. } | Plan::Unsupported { .. } => true,
            Plan::Seq(p) => p.iter().all(Plan::callable),
            // A pipeline of one stage is that stage.
            Plan::Pipe(p) => p.len() == 1 && p[0].callable(),
            Plan::TPool(..) => false,
        }
    }

    /// For the parts of a `seq`: whether a phase boundary comes before part `i`, i.e.
    /// the whole (sub)stream has gone through the parts before it when it starts, on
    /// threads of its own. Consecutive callable parts share a phase (one thread,
    /// element by element); a stream network is a phase of its own.
    pub fn phase_boundary(parts: &[Plan], i: usize) -> bool {
        i > 0 && i < parts.len() && !(parts[i - 1].callable() && parts[i].callable())
    }

    /// The leftmost kernel: its unit-test input of size `x` is one element of the stream.
    pub fn source_kernel(&self) -> Option<&str> {
        match self {
            Plan::Kernel(k) => Some(k),
            Plan::Seq(p) | Plan::Pipe(p) => p.first().and_then(Plan::source_kernel),
            Plan::TPool(_, t) => t.source_kernel(),
            Plan::MapReduce { map, .. } => Some(map),
            Plan::Unsupported { .. } => None,
        }
    }

    /// Whether a MapReduce is part of the plan.
    pub fn has_mapreduce(&self) -> bool {
        match self {
            Plan::MapReduce { .. } => true,
            Plan::Seq(p) | Plan::Pipe(p) => p.iter().any(Plan::has_mapreduce),
            Plan::TPool(_, t) => t.has_mapreduce(),
            Plan::Kernel(_) | Plan::Unsupported { .. } => false,
        }
    }

    /// Whether the runtime can run every part of the plan (no [`Plan::Unsupported`]).
    pub fn runs(&self) -> bool {
        match self {
            Plan::Seq(p) | Plan::Pipe(p) => p.iter().all(Plan::runs),
            Plan::TPool(_, t) => t.runs(),
            Plan::Kernel(_) | Plan::MapReduce { .. } => true,
            Plan::Unsupported { .. } => false,
        }
    }

    /// Every kernel the plan names, left to right.
    pub fn kernels(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_kernels(&mut out);
        out
    }

    fn collect_kernels(&self, out: &mut Vec<String>) {
        match self {
            Plan::Kernel(k) => out.push(k.clone()),
            Plan::Seq(p) | Plan::Pipe(p) => p.iter().for_each(|p| p.collect_kernels(out)),
            Plan::TPool(_, t) => t.collect_kernels(out),
            Plan::MapReduce { map, reduce, .. } => {
                out.push(map.clone());
                out.push(reduce.clone());
            }
            Plan::Unsupported { .. } => {}
        }
    }

    /// Build a runnable program.
    pub fn build(&self, registry: &Registry, config: Config) -> Result<Built, BuildError> {
        self.build_with(registry, config, None)
    }

    /// Build a program whose blocks record each call with `recorder` (a timeline of a
    /// run: [`crate::timeline`]).
    pub fn build_traced(
        &self,
        registry: &Registry,
        config: Config,
        recorder: &Arc<Recorder>,
    ) -> Result<Built, BuildError> {
        self.build_with(registry, config, Some(recorder))
    }

    fn build_with(
        &self,
        registry: &Registry,
        config: Config,
        recorder: Option<&Arc<Recorder>>,
    ) -> Result<Built, BuildError> {
        let (pattern, input, _) = self.pattern(registry, recorder)?;
        let source_kernel = self
            .source_kernel()
            .ok_or_else(|| BuildError::Unsupported {
                what: self.to_string(),
                why: "the design names no kernel".into(),
            })?
            .to_string();
        Ok(Built {
            program: Program::with_config(pattern, config)?,
            input,
            source_kernel,
        })
    }

    /// The typed pattern with the kinds of data it takes and produces.
    fn pattern(
        &self,
        reg: &Registry,
        rec: Option<&Arc<Recorder>>,
    ) -> Result<(Pattern<Data, Data>, DataKind, DataKind), BuildError> {
        match self {
            Plan::Kernel(name) => {
                let k = reg.get(name)?;
                match k.op() {
                    Op::Block { input, output, f } => {
                        let f = match rec {
                            Some(r) => r.wrap(name, f),
                            None => f,
                        };
                        Ok((shared_block(name.clone(), f), input, output))
                    }
                    other => Err(BuildError::WrongRole {
                        name: name.clone(),
                        role: other.role().into(),
                        used_as: "a block (only `mapreduce(...)` takes map and reduce kernels)"
                            .into(),
                    }),
                }
            }
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                let is_pipe = matches!(self, Plan::Pipe(_));
                let mut iter = parts.iter();
                let first = iter.next().ok_or_else(|| BuildError::Unsupported {
                    what: self.to_string(),
                    why: "it has no parts".into(),
                })?;
                let (first, input, mut out) = first.pattern(reg, rec)?;
                let mut typed = vec![first];
                let mut left = parts[0].to_string();
                for part in iter {
                    let (p, pin, pout) = part.pattern(reg, rec)?;
                    if !out.fits(pin) {
                        return Err(BuildError::TypeMismatch {
                            at: self.to_string(),
                            message: format!("`{left}` produces {out} but `{part}` takes {pin}"),
                        });
                    }
                    typed.push(p);
                    if pout != DataKind::Any {
                        out = pout;
                    }
                    left = part.to_string();
                }
                let acc = if is_pipe {
                    typed.into_iter().reduce(pipe)
                } else {
                    phases(typed).into_iter().reduce(seq)
                };
                Ok((acc.expect("at least one part"), input, out))
            }
            Plan::TPool(n, inner) => {
                let (p, i, o) = inner.pattern(reg, rec)?;
                Ok((tpool(*n, p), i, o))
            }
            Plan::MapReduce {
                map,
                reduce,
                nodes,
                threads,
                reduction,
            } => {
                if *nodes != 1 {
                    return Err(BuildError::Unsupported {
                        what: self.to_string(),
                        why: format!(
                            "the thread runtime runs MapReduce on one node; nodes={nodes} \
                             needs {nodes} machines (set nodes=1 to validate on this one)"
                        ),
                    });
                }
                let map_f = match reg.get(map)?.op() {
                    Op::Map { f, .. } => f,
                    other => {
                        return Err(BuildError::WrongRole {
                            name: map.clone(),
                            role: other.role().into(),
                            used_as: "the map of a mapreduce".into(),
                        })
                    }
                };
                let op = reg.get(reduce)?.op();
                check_reduction(self, reduce, &op, *reduction)?;
                let reduction = match op {
                    Op::ReducePairwise(f) => Reduce::pairwise(reduce.clone(), move |a, b| f(a, b)),
                    Op::ReducePerKey(f) => Reduce::per_key(reduce.clone(), move |k, v| f(k, v)),
                    other => {
                        return Err(BuildError::WrongRole {
                            name: reduce.clone(),
                            role: other.role().into(),
                            used_as: "the reduce of a mapreduce".into(),
                        })
                    }
                };
                let mr = mapreduce(*threads, map.clone(), move |d: &Data| map_f(d), reduction);
                let p = adapt(
                    |d: Data| match d {
                        Data::Batch(items) => items,
                        other => vec![other],
                    },
                    mr,
                    Data::Counts,
                );
                Ok((p, DataKind::Batch, DataKind::Counts))
            }
            Plan::Unsupported { what, why } => Err(BuildError::Unsupported {
                what: what.clone(),
                why: why.clone(),
            }),
        }
    }
}

/// An error unless `reduction=` (when given) is what reduce kernel `reduce` does: a
/// pairwise reduce for `pairwise`, a per-key reduce for `local` and `global`.
pub fn check_reduction(
    plan: &Plan,
    reduce: &str,
    op: &Op,
    reduction: Option<Reduction>,
) -> Result<(), BuildError> {
    let Some(r) = reduction else {
        return Ok(());
    };
    let fits = match op {
        Op::ReducePairwise(_) => r == Reduction::Pairwise,
        Op::ReducePerKey(_) => r != Reduction::Pairwise,
        _ => true,
    };
    if fits {
        return Ok(());
    }
    let does = match op {
        Op::ReducePairwise(_) => "reduces two collections at a time (use reduction=pairwise)",
        _ => "reduces per key (use reduction=local or reduction=global)",
    };
    Err(BuildError::TypeMismatch {
        at: plan.to_string(),
        message: format!(
            "reduction={} does not fit the reduce kernel `{reduce}`, which {does}",
            r.name()
        ),
    })
}

/// The parts of a `seq` as its phases: consecutive callable parts joined into one
/// callable `seq` (run element by element on one thread), every stream network a phase
/// of its own ([`Plan::phase_boundary`]).
fn phases(parts: Vec<Pattern<Data, Data>>) -> Vec<Pattern<Data, Data>> {
    let mut out = Vec::new();
    let mut callable: Option<Pattern<Data, Data>> = None;
    for p in parts {
        if p.callable() {
            callable = Some(match callable.take() {
                Some(run) => seq(run, p),
                None => p,
            });
        } else {
            out.extend(callable.take());
            out.push(p);
        }
    }
    out.extend(callable);
    out
}

/// `count` deterministic elements of size `x` for the stream of a program built from a
/// plan: copies of the source kernel's unit-test input. Refuses (before allocating) when
/// they would take more than `limit_bytes`.
pub fn stream_inputs(
    registry: &Registry,
    source_kernel: &str,
    x: usize,
    count: usize,
    inputs: &Inputs,
    limit_bytes: u128,
) -> Result<Vec<Data>, crate::Error> {
    let k = registry.get(source_kernel)?;
    let needed = k.input_bytes(x, inputs).saturating_mul(count as u128);
    if needed > limit_bytes {
        return Err(KernelError::TooLarge {
            what: format!("{count} inputs of size x={x} for `{source_kernel}`"),
            needed_bytes: needed,
            limit_bytes,
        }
        .into());
    }
    // Distinct inputs, cycled (see `Inputs::variant`): copies of one array would let the
    // branch predictor learn it.
    let templates = (0..crate::kernel::input_pool_size(x).min(count))
        .map(|v| k.input(x, &inputs.variant(v as u64)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let template = &templates[i % templates.len()];
        out.push(template.try_clone().ok_or_else(|| KernelError::BadInput {
            kernel: source_kernel.to_string(),
            message: "its input cannot be copied for a stream".into(),
        })?);
    }
    Ok(out)
}

/// A parsed term as the runtime's plan; errors point into the term's source. Thread counts
/// must be numbers; divide and conquer (`dc`) becomes [`Plan::Unsupported`], which
/// [`Plan::build`] refuses with the reason.
pub fn plan_from_term(term: &Term) -> Result<Plan, Diagnostic> {
    node_plan(term, &term.root)
}

/// Parse a term (named `origin` in errors) and lower it to a plan.
pub fn parse_plan(origin: &str, text: &str) -> Result<(Term, Plan), crate::Error> {
    let term = parse_term(origin, text)?;
    let plan = plan_from_term(&term)?;
    Ok((term, plan))
}

fn located(term: &Term, node: &Node, message: String, hint: &str) -> Diagnostic {
    Diagnostic::new(&term.origin, &term.source, node.span, message).with_hint(hint)
}

fn count(term: &Term, node: &Node, c: &Count, what: &str) -> Result<usize, Diagnostic> {
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
    let parts = |parts: &[Node]| -> Result<Vec<Plan>, Diagnostic> {
        parts.iter().map(|p| node_plan(term, p)).collect()
    };
    Ok(match &node.kind {
        NodeKind::Component(name) => Plan::Kernel(name.clone()),
        NodeKind::Seq(ps) => Plan::Seq(parts(ps)?),
        NodeKind::Pipe(ps) => Plan::Pipe(parts(ps)?),
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
                reduction: mr.reduction.as_ref().map(|r| r.value),
            }
        }
        NodeKind::Dc(_) => Plan::Unsupported {
            what: term.text(node.span).to_string(),
            why: "divide and conquer runs on P message-passing processes; the thread \
                  runtime has no implementation of it"
                .into(),
        },
        NodeKind::Matmul(_) => Plan::Unsupported {
            what: term.text(node.span).to_string(),
            why: "the matrix multiplication runs on a mesh of P message-passing processes; \
                  the thread runtime has no implementation of it"
                .into(),
        },
    })
}
