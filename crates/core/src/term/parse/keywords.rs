//! Patterns with keyword arguments (`mapreduce`, `dc`, `matmul`): their argument tables,
//! the argument-list parser they share, and their nodes.

use super::super::{
    Broadcast, BroadcastArg, Count, Dc, ExprArg, MapReduce, Matmul, Name, Node, NodeKind,
    Reduction, ReductionArg,
};
use super::hints::usage;
use super::{closest, Parser, Tok};
use crate::diag::{Diagnostic, Span};

/// What a keyword argument holds.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Count,
    Expr,
    Name,
}

struct Keyword {
    name: &'static str,
    slot: Slot,
    required: bool,
    /// Shown when the argument is missing.
    help: &'static str,
}

enum KwValue {
    Count(Count),
    Expr(ExprArg),
    Name(Name),
}

const MAPREDUCE_KEYWORDS: &[Keyword] = &[
    Keyword {
        name: "nodes",
        slot: Slot::Count,
        required: true,
        help: "nodes=m: the number of compute nodes (an integer or a parameter name)",
    },
    Keyword {
        name: "threads",
        slot: Slot::Count,
        required: true,
        help: "threads=n: worker threads per node (an integer or a parameter name)",
    },
    Keyword {
        name: "keys",
        slot: Slot::Expr,
        required: true,
        help: "keys=EXPR: the number of keys k(x) for x input elements, e.g. keys=768",
    },
    Keyword {
        name: "per_key",
        slot: Slot::Expr,
        required: true,
        help: "per_key=EXPR: the elements per key d(x), e.g. per_key=x",
    },
    Keyword {
        name: "shuffle",
        slot: Slot::Name,
        required: false,
        help: "shuffle=NAME: the component modelling the shuffle phase",
    },
    Keyword {
        name: "reduction",
        slot: Slot::Name,
        required: false,
        help:
            "reduction=pairwise|local|global: how the nodes' results are reduced (the pattern-composition paper, §4.2.5)",
    },
];

const DC_KEYWORDS: &[Keyword] = &[
    Keyword {
        name: "procs",
        slot: Slot::Count,
        required: true,
        help: "procs=P: the number of processes, a power of two (or a parameter name)",
    },
    Keyword {
        name: "exchange",
        slot: Slot::Name,
        required: true,
        help: "exchange=NAME: the component modelling one exchange between partners (its x is the message size)",
    },
    Keyword {
        name: "size",
        slot: Slot::Expr,
        required: false,
        help: "size=EXPR: the message size at a level, in terms of that level's subproblem size x",
    },
];

const MATMUL_KEYWORDS: &[Keyword] = &[
    Keyword {
        name: "procs",
        slot: Slot::Count,
        required: true,
        help: "procs=P: the number of processes, a perfect square (or a parameter name)",
    },
    Keyword {
        name: "message",
        slot: Slot::Name,
        required: true,
        help: "message=NAME: the component modelling one point-to-point message (its x is the bytes sent)",
    },
    Keyword {
        name: "bcast",
        slot: Slot::Name,
        required: true,
        help: "bcast=flat|binomial|pipeline: how a block is broadcast along a mesh row (as in the matrix-multiplication paper)",
    },
    Keyword {
        name: "segments",
        slot: Slot::Expr,
        required: false,
        help: "segments=EXPR: the pieces a pipelined broadcast sends a block in",
    },
    Keyword {
        name: "bytes",
        slot: Slot::Expr,
        required: false,
        help: "bytes=EXPR: the bytes of one block of order x (default 8 * x^2, doubles)",
    },
];

impl Parser<'_> {
    /// Positional terms followed by keyword arguments (mapreduce, dc, matmul).
    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    fn args(
        &mut self,
        pattern: &str,
        open: Span,
        positional: &[&str],
        keywords: &[Keyword],
    ) -> Result<Args, Diagnostic> {
        let mut terms = Vec::new();
        let mut kws: Vec<(&'static str, KwValue, Span)> = Vec::new();
        let usage = usage(pattern);
        let close = loop {
            if self.peek().kind == Tok::RParen {
                break self.bump().span;
            }
            if let Some(k) = self.at_keyword() {
                let Tok::Name(key) = &k.kind else {
                    unreachable!("at_keyword returns names")
                };
                let Some(spec) = keywords.iter().find(|s| s.name == key) else {
                    let names: Vec<&str> = keywords.iter().map(|s| s.name).collect();
                    let hint = match closest(key, names.iter().copied()) {
                        Some(c) => {
                            format!("did you mean `{c}`? `{pattern}` takes {}", names.join(", "))
                        }
                        None => format!("`{pattern}` takes {}", names.join(", ")),
                    };
                    return Err(self
                        .error(k.span, format!("unknown argument `{key}` of `{pattern}`"))
                        .with_hint(hint));
                };
                if let Some((_, _, first)) = kws.iter().find(|(n, _, _)| *n == spec.name) {
                    let (_, col) = crate::diag::line_col(self.src, first.start);
                    return Err(self
                        .error(k.span, format!("`{key}=` is given twice"))
                        .with_hint(format!("the first one is at column {col}")));
                }
                self.bump(); // name
                self.bump(); // `=`
                let value = match spec.slot {
                    Slot::Count => {
                        let c = self.count(pattern, spec.name)?;
                        if c.as_int() == Some(0) {
                            return Err(self
                                .error(c.span, format!("`{}` must be at least 1", spec.name))
                                .with_hint(spec.help));
                        }
                        if pattern == "matmul" {
                            if let Some(p) = c.as_int() {
                                let q = (p as f64).sqrt().round() as u64;
                                if q * q != p {
                                    let below = (p as f64).sqrt().floor() as u64;
                                    return Err(self
                                        .error(c.span, format!("a square mesh needs a perfect square of processes, not {p}"))
                                        .with_hint(format!(
                                            "use procs={} or procs={}",
                                            below * below,
                                            (below + 1) * (below + 1)
                                        )));
                                }
                            }
                        }
                        if pattern == "dc" {
                            if let Some(p) = c.as_int() {
                                if !p.is_power_of_two() {
                                    return Err(self
                                        .error(c.span, format!("a hypercube needs a power of two processes, not {p}"))
                                        .with_hint(format!(
                                            "use procs={} or procs={}",
                                            prev_power_of_two(p),
                                            prev_power_of_two(p).saturating_mul(2)
                                        )));
                                }
                            }
                        }
                        KwValue::Count(c)
                    }
                    Slot::Expr => KwValue::Expr(self.expr_arg(spec.name)?),
                    Slot::Name => KwValue::Name(self.name_arg(spec.name)?),
                };
                kws.push((spec.name, value, k.span));
            } else {
                let t = self.peek();
                if !kws.is_empty() {
                    return Err(self
                        .error(t.span, "a term cannot follow keyword arguments")
                        .with_hint(usage.clone()));
                }
                if terms.len() == positional.len() {
                    return Err(self
                        .error(
                            t.span,
                            format!(
                                "`{pattern}` takes {} terms ({}) before its keyword arguments",
                                positional.len(),
                                positional.join(", ")
                            ),
                        )
                        .with_hint(usage.clone()));
                }
                terms.push(self.term()?);
            }
            if let Some(close) = self.separator(pattern, open)? {
                break close;
            }
        };
        if terms.len() < positional.len() {
            return Err(self
                .error(
                    close,
                    format!(
                        "`{pattern}` needs {} terms ({}), got {}",
                        positional.len(),
                        positional.join(", "),
                        terms.len()
                    ),
                )
                .with_hint(usage));
        }
        for spec in keywords.iter().filter(|s| s.required) {
            if !kws.iter().any(|(n, _, _)| *n == spec.name) {
                return Err(self
                    .error(close, format!("`{pattern}` needs `{}=`", spec.name))
                    .with_hint(spec.help));
            }
        }
        Ok((
            terms,
            kws.into_iter().map(|(n, v, _)| (n, v)).collect(),
            close,
        ))
    }

    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    pub(super) fn mapreduce(&mut self, name_span: Span, open: Span) -> Result<Node, Diagnostic> {
        let (terms, kws, close) =
            self.args("mapreduce", open, &["map", "reduce"], MAPREDUCE_KEYWORDS)?;
        let mut it = terms.into_iter();
        let (Some(map), Some(reduce)) = (it.next(), it.next()) else {
            unreachable!("args checked the count")
        };
        let mut kw = Kws(kws);
        let reduction = match kw.name("reduction") {
            None => None,
            Some(n) => match Reduction::from_name(&n.name) {
                Some(value) => Some(ReductionArg {
                    value,
                    span: n.span,
                }),
                None => {
                    return Err(self
                        .error(n.span, format!("unknown reduction variant `{}`", n.name))
                        .with_hint(
                            "the variants are pairwise, local and global (the pattern-composition paper, §4.2.5)",
                        ))
                }
            },
        };
        let mr = MapReduce {
            map,
            reduce,
            nodes: kw.count("nodes"),
            threads: kw.count("threads"),
            keys: kw.expr("keys").expect("required"),
            per_key: kw.expr("per_key").expect("required"),
            shuffle: kw.name("shuffle"),
            reduction,
        };
        Ok(Node {
            kind: NodeKind::MapReduce(Box::new(mr)),
            span: name_span.join(close),
        })
    }

    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    pub(super) fn dc(&mut self, name_span: Span, open: Span) -> Result<Node, Diagnostic> {
        let (terms, kws, close) =
            self.args("dc", open, &["divide", "combine", "leaf"], DC_KEYWORDS)?;
        let mut it = terms.into_iter();
        let (Some(divide), Some(combine), Some(leaf)) = (it.next(), it.next(), it.next()) else {
            unreachable!("args checked the count")
        };
        let mut kw = Kws(kws);
        let dc = Dc {
            divide,
            combine,
            leaf,
            procs: kw.count("procs"),
            exchange: kw.name("exchange").expect("required"),
            size: kw.expr("size"),
        };
        Ok(Node {
            kind: NodeKind::Dc(Box::new(dc)),
            span: name_span.join(close),
        })
    }
}

impl Parser<'_> {
    // Kept out of line: inlined, every pattern's locals would sit in each level's
    // stack frame of the recursion.
    #[inline(never)]
    pub(super) fn matmul(&mut self, name_span: Span, open: Span) -> Result<Node, Diagnostic> {
        let (terms, kws, close) = self.args("matmul", open, &["multiply"], MATMUL_KEYWORDS)?;
        let Some(multiply) = terms.into_iter().next() else {
            unreachable!("args checked the count")
        };
        let mut kw = Kws(kws);
        let b = kw.name("bcast").expect("required");
        let Some(value) = Broadcast::from_name(&b.name) else {
            return Err(self
                .error(b.span, format!("unknown broadcast `{}`", b.name))
                .with_hint("the broadcasts are flat, binomial and pipeline (as in the matrix-multiplication paper)"));
        };
        let segments = kw.expr("segments");
        match (value, &segments) {
            (Broadcast::Pipeline, None) => {
                return Err(self
                    .error(b.span, "a pipelined broadcast needs `segments=`")
                    .with_hint("write bcast=pipeline, segments=4: the pieces a block is sent in"))
            }
            (Broadcast::Flat | Broadcast::Binomial, Some(k)) => {
                return Err(self
                    .error(k.span, "`segments=` is used by bcast=pipeline only")
                    .with_hint(format!(
                        "drop it, or write bcast=pipeline instead of bcast={}",
                        b.name
                    )))
            }
            _ => {}
        }
        let mm = Matmul {
            multiply,
            procs: kw.count("procs"),
            message: kw.name("message").expect("required"),
            bcast: BroadcastArg {
                value,
                span: b.span,
            },
            segments,
            bytes: kw.expr("bytes"),
        };
        Ok(Node {
            kind: NodeKind::Matmul(Box::new(mm)),
            span: name_span.join(close),
        })
    }
}

/// Positional terms, keyword values and the closing parenthesis of an argument list.
type Args = (Vec<Node>, Vec<(&'static str, KwValue)>, Span);

/// Keyword values by name (the parser has already checked presence and kinds).
struct Kws(Vec<(&'static str, KwValue)>);

impl Kws {
    fn take(&mut self, name: &str) -> Option<KwValue> {
        let i = self.0.iter().position(|(n, _)| *n == name)?;
        Some(self.0.swap_remove(i).1)
    }

    fn count(&mut self, name: &str) -> Count {
        match self.take(name) {
            Some(KwValue::Count(c)) => c,
            _ => unreachable!("required count checked by the parser"),
        }
    }

    fn expr(&mut self, name: &str) -> Option<ExprArg> {
        match self.take(name) {
            Some(KwValue::Expr(e)) => Some(e),
            _ => None,
        }
    }

    fn name(&mut self, name: &str) -> Option<Name> {
        match self.take(name) {
            Some(KwValue::Name(n)) => Some(n),
            _ => None,
        }
    }
}

fn prev_power_of_two(p: u64) -> u64 {
    if p == 0 {
        1
    } else {
        1 << (63 - p.leading_zeros())
    }
}
