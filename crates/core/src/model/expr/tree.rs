//! The model's node types, its leaves, and queries on its structure: which parameters it
//! mentions, its size, whether it is canonical, approximate equality.

use std::collections::BTreeSet;

use crate::model::number::Q;
use crate::model::pmnf::{Monomial, Pmnf};

/// Models up to this many nodes ([`Expr::node_count`]) whose products were all expanded
/// print canonically: print → parse → print is a fixed point ([`Expr::is_canonical_size`]).
/// Larger models still parse, print and evaluate, but a product of sums beyond the
/// expansion cap (`MAX_PRODUCT_TERMS` term pairs) may come back grouped differently (an
/// equivalent model), since how far it expands depends on the order it was built in.
pub const ROUND_TRIP_NODES: usize = 2_000;

/// A performance model: a function of named, positive parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A PMNF polynomial (including constants).
    Poly(Pmnf),
    /// A sum; at most one `Poly` (first), the rest non-`Poly`, non-`Add`, sorted.
    Add(Vec<Expr>),
    /// A product; at most one `Poly` (first), the rest non-`Poly`, non-`Mul`, sorted.
    Mul(Vec<Expr>),
    /// A quotient whose divisor is not a single PMNF term.
    Div(Box<Expr>, Box<Expr>),
    /// A rational power of a non-PMNF (or negative) base.
    Pow(Box<Expr>, Q),
    /// A power with a non-constant exponent (`2^j` in a divide-and-conquer sum).
    PowE(Box<Expr>, Box<Expr>),
    /// `log2` of something that is not a log-free PMNF term.
    Log2(Box<Expr>),
    /// Pointwise maximum (pipelines); flattened, sorted, deduplicated.
    Max(Vec<Expr>),
    /// Pointwise minimum.
    Min(Vec<Expr>),
    Ceil(Box<Expr>),
    Floor(Box<Expr>),
    /// `Σ_{var = from}^{to} body`, over integers (divide-and-conquer recursions).
    Sum {
        var: String,
        from: Box<Expr>,
        to: Box<Expr>,
        body: Box<Expr>,
    },
    /// A segmented model: `pieces[i]` where `breaks[i-1] <= on < breaks[i]` (the first
    /// piece below `breaks[0]`, the last from the last break on). Breaks are finite and
    /// strictly increasing; there is one piece more than breaks. Measured costs that
    /// step where the data leaves a cache level are fitted this way
    /// (`crate::fit::segmented`); `on` is a model too, so substitution (`x := d(x)`)
    /// carries the condition along.
    Piecewise {
        on: Box<Expr>,
        breaks: Vec<f64>,
        pieces: Vec<Expr>,
    },
}

/// The model type every layer passes around.
pub type Model = Expr;

impl Expr {
    // ----- leaves -------------------------------------------------------------------

    pub fn constant(c: f64) -> Expr {
        Expr::Poly(Pmnf::constant(c))
    }

    pub fn zero() -> Expr {
        Expr::Poly(Pmnf::zero())
    }

    pub fn one() -> Expr {
        Expr::constant(1.0)
    }

    pub fn param(name: &str) -> Expr {
        Expr::Poly(Pmnf::param(name))
    }

    pub fn poly(p: Pmnf) -> Expr {
        Expr::Poly(p)
    }

    /// The PMNF if this model is one.
    pub fn as_pmnf(&self) -> Option<&Pmnf> {
        match self {
            Expr::Poly(p) => Some(p),
            _ => None,
        }
    }

    /// The value if this model is a constant.
    pub fn as_constant(&self) -> Option<f64> {
        self.as_pmnf().and_then(Pmnf::as_constant)
    }

    pub(super) fn single_term(&self) -> Option<(f64, &Monomial)> {
        self.as_pmnf().and_then(Pmnf::as_single_term)
    }

    pub(super) fn is_zero(&self) -> bool {
        matches!(self, Expr::Poly(p) if p.is_zero())
    }

    // ----- structure ----------------------------------------------------------------

    /// True when `name` occurs free in the model.
    pub fn mentions(&self, name: &str) -> bool {
        match self {
            Expr::Poly(p) => p.terms().any(|(_, m)| m.params().any(|q| q == name)),
            Expr::Add(v) | Expr::Mul(v) | Expr::Max(v) | Expr::Min(v) => {
                v.iter().any(|e| e.mentions(name))
            }
            Expr::Div(a, b) | Expr::PowE(a, b) => a.mentions(name) || b.mentions(name),
            Expr::Pow(a, _) | Expr::Log2(a) | Expr::Ceil(a) | Expr::Floor(a) => a.mentions(name),
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => from.mentions(name) || to.mentions(name) || (var != name && body.mentions(name)),
            Expr::Piecewise { on, pieces, .. } => {
                on.mentions(name) || pieces.iter().any(|e| e.mentions(name))
            }
        }
    }

    /// The free parameters, sorted.
    pub fn params(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_params(&mut out);
        out
    }

    fn collect_params(&self, out: &mut BTreeSet<String>) {
        match self {
            Expr::Poly(p) => out.extend(p.params()),
            Expr::Add(v) | Expr::Mul(v) | Expr::Max(v) | Expr::Min(v) => {
                v.iter().for_each(|e| e.collect_params(out))
            }
            Expr::Div(a, b) | Expr::PowE(a, b) => {
                a.collect_params(out);
                b.collect_params(out);
            }
            Expr::Pow(a, _) | Expr::Log2(a) | Expr::Ceil(a) | Expr::Floor(a) => {
                a.collect_params(out)
            }
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => {
                from.collect_params(out);
                to.collect_params(out);
                let mut inner = BTreeSet::new();
                body.collect_params(&mut inner);
                inner.remove(var);
                out.extend(inner);
            }
            Expr::Piecewise { on, pieces, .. } => {
                on.collect_params(out);
                pieces.iter().for_each(|e| e.collect_params(out));
            }
        }
    }

    // ----- comparison -----------------------------------------------------------------

    /// Structural equality with a relative tolerance on coefficients.
    pub fn approx_eq(&self, other: &Expr, rel_tol: f64) -> bool {
        match (self, other) {
            (Expr::Poly(a), Expr::Poly(b)) => {
                a.len() == b.len()
                    && a.terms().zip(b.terms()).all(|((ca, ma), (cb, mb))| {
                        ma == mb && (ca - cb).abs() <= rel_tol * ca.abs().max(cb.abs())
                    })
            }
            (Expr::Add(a), Expr::Add(b))
            | (Expr::Mul(a), Expr::Mul(b))
            | (Expr::Max(a), Expr::Max(b))
            | (Expr::Min(a), Expr::Min(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.approx_eq(y, rel_tol))
            }
            (Expr::Div(a1, b1), Expr::Div(a2, b2)) | (Expr::PowE(a1, b1), Expr::PowE(a2, b2)) => {
                a1.approx_eq(a2, rel_tol) && b1.approx_eq(b2, rel_tol)
            }
            (Expr::Pow(a, q), Expr::Pow(b, r)) => q == r && a.approx_eq(b, rel_tol),
            (Expr::Log2(a), Expr::Log2(b))
            | (Expr::Ceil(a), Expr::Ceil(b))
            | (Expr::Floor(a), Expr::Floor(b)) => a.approx_eq(b, rel_tol),
            (
                Expr::Sum {
                    var: v1,
                    from: f1,
                    to: t1,
                    body: b1,
                },
                Expr::Sum {
                    var: v2,
                    from: f2,
                    to: t2,
                    body: b2,
                },
            ) => {
                v1 == v2
                    && f1.approx_eq(f2, rel_tol)
                    && t1.approx_eq(t2, rel_tol)
                    && b1.approx_eq(b2, rel_tol)
            }
            (
                Expr::Piecewise {
                    on: o1,
                    breaks: b1,
                    pieces: p1,
                },
                Expr::Piecewise {
                    on: o2,
                    breaks: b2,
                    pieces: p2,
                },
            ) => {
                o1.approx_eq(o2, rel_tol)
                    && b1.len() == b2.len()
                    && b1
                        .iter()
                        .zip(b2)
                        .all(|(x, y)| (x - y).abs() <= rel_tol * x.abs().max(y.abs()))
                    && p1.len() == p2.len()
                    && p1.iter().zip(p2).all(|(x, y)| x.approx_eq(y, rel_tol))
            }
            _ => false,
        }
    }

    /// True when every coefficient (and constant) in the model is a finite number.
    pub fn coefficients_finite(&self) -> bool {
        match self {
            Expr::Poly(p) => p.terms().all(|(c, _)| c.is_finite()),
            Expr::Add(v) | Expr::Mul(v) | Expr::Max(v) | Expr::Min(v) => {
                v.iter().all(Expr::coefficients_finite)
            }
            Expr::Div(a, b) | Expr::PowE(a, b) => {
                a.coefficients_finite() && b.coefficients_finite()
            }
            Expr::Pow(a, _) | Expr::Log2(a) | Expr::Ceil(a) | Expr::Floor(a) => {
                a.coefficients_finite()
            }
            Expr::Sum { from, to, body, .. } => {
                from.coefficients_finite() && to.coefficients_finite() && body.coefficients_finite()
            }
            Expr::Piecewise { on, pieces, .. } => {
                on.coefficients_finite() && pieces.iter().all(Expr::coefficients_finite)
            }
        }
    }

    /// True when some product was left unexpanded because expanding it would exceed
    /// the cap on product size (a product with two PMNF factors, or with a sum among its
    /// factors). Such models are equivalent but not canonical; see
    /// [`ROUND_TRIP_NODES`].
    pub fn hit_expansion_cap(&self) -> bool {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Poly(_) => {}
                Expr::Mul(v) => {
                    let polys = v.iter().filter(|f| matches!(f, Expr::Poly(_))).count();
                    if polys > 1 || v.iter().any(|f| matches!(f, Expr::Add(_))) {
                        return true;
                    }
                    stack.extend(v);
                }
                Expr::Add(v) | Expr::Max(v) | Expr::Min(v) => stack.extend(v),
                Expr::Div(a, b) | Expr::PowE(a, b) => {
                    stack.push(a);
                    stack.push(b);
                }
                Expr::Pow(a, _) | Expr::Log2(a) | Expr::Ceil(a) | Expr::Floor(a) => stack.push(a),
                Expr::Sum { from, to, body, .. } => {
                    stack.push(from);
                    stack.push(to);
                    stack.push(body);
                }
                Expr::Piecewise { on, pieces, .. } => {
                    stack.push(on);
                    stack.extend(pieces);
                }
            }
        }
        false
    }

    /// True when print → parse → print is promised to be a fixed point for this model.
    pub fn is_canonical_size(&self) -> bool {
        self.node_count() <= ROUND_TRIP_NODES && !self.hit_expansion_cap()
    }

    /// Number of nodes (a size measure for benchmarks and limits).
    pub fn node_count(&self) -> usize {
        1 + match self {
            Expr::Poly(p) => p.len(),
            Expr::Add(v) | Expr::Mul(v) | Expr::Max(v) | Expr::Min(v) => {
                v.iter().map(Expr::node_count).sum()
            }
            Expr::Div(a, b) | Expr::PowE(a, b) => a.node_count() + b.node_count(),
            Expr::Pow(a, _) | Expr::Log2(a) | Expr::Ceil(a) | Expr::Floor(a) => a.node_count(),
            Expr::Sum { from, to, body, .. } => {
                from.node_count() + to.node_count() + body.node_count()
            }
            Expr::Piecewise { on, pieces, .. } => {
                on.node_count() + pieces.iter().map(Expr::node_count).sum::<usize>()
            }
        }
    }
}
