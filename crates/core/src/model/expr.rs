//! Model expressions: PMNF where possible, an expression tree where not.
//!
//! Composition leaves PMNF in a few well-defined ways — the pointwise `max` of a
//! pipeline, division by a sum, `log2` of a sum, substitution of a non-monomial `d(x)` —
//! so a model is an [`Expr`] whose leaves are [`Pmnf`]s. Every constructor simplifies
//! (the "smart constructors" [`Expr::add`], [`Expr::mul`], ...), which keeps one
//! invariant: *whatever can be PMNF is PMNF*, and the rest is in a canonical shape
//! (flattened, sorted, like terms merged) so that printing is canonical and
//! `print → parse → print` is a fixed point.
//!
//! Parameters are assumed positive (sizes, counts, rates): that is what licenses
//! `c·m · max(a, b) = max(c·m·a, c·m·b)` for `c > 0`, and it is how every model in the
//! seeds reads.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use num_traits::{One, Signed, Zero};

use super::number::{exponent_as_q, Q};
use super::pmnf::{pow_q, q_to_f64, Monomial, Pmnf, Power, MAX_PRODUCT_TERMS};

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

/// Why a model could not be evaluated at a point.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("parameter `{0}` has no value")]
    Unbound(String),
    #[error("division by zero in `{0}`")]
    DivisionByZero(String),
    #[error("log2 of a non-positive value ({value}) in `{what}`")]
    LogOfNonPositive { what: String, value: f64 },
    #[error("`{what}` is not a real number here ({base}^({exp}))")]
    NotReal {
        what: String,
        base: f64,
        exp: String,
    },
    #[error("`{0}` is not finite here")]
    NonFinite(String),
}

/// Values of parameters at one evaluation point.
pub trait Env {
    fn get(&self, name: &str) -> Option<f64>;
}

impl Env for BTreeMap<String, f64> {
    fn get(&self, name: &str) -> Option<f64> {
        BTreeMap::get(self, name).copied()
    }
}

impl Env for HashMap<String, f64> {
    fn get(&self, name: &str) -> Option<f64> {
        HashMap::get(self, name).copied()
    }
}

/// A point given as `(name, value)` pairs.
pub struct Pairs<'a>(pub &'a [(&'a str, f64)]);

impl Env for Pairs<'_> {
    fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

impl<const N: usize> Env for [(&str, f64); N] {
    fn get(&self, name: &str) -> Option<f64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

impl Env for Vec<(String, f64)> {
    fn get(&self, name: &str) -> Option<f64> {
        self.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// An environment with one extra binding (the variable of a `sum`).
struct Bound<'a> {
    inner: &'a dyn Env,
    name: &'a str,
    value: f64,
}

impl Env for Bound<'_> {
    fn get(&self, name: &str) -> Option<f64> {
        if name == self.name {
            Some(self.value)
        } else {
            self.inner.get(name)
        }
    }
}

/// Largest number of terms a `sum(...)` with constant bounds is expanded into.
const MAX_SUM_EXPANSION: i64 = 64;
/// Largest integer power of a multi-term PMNF that is expanded.
const MAX_POLY_POWER: i64 = 6;

// The smart constructors are named after the operations they build; the operator traits
// below delegate to them so `a + b` works too.
#[allow(clippy::should_implement_trait)]
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

    fn single_term(&self) -> Option<(f64, &Monomial)> {
        self.as_pmnf().and_then(Pmnf::as_single_term)
    }

    fn is_zero(&self) -> bool {
        matches!(self, Expr::Poly(p) if p.is_zero())
    }

    // ----- smart constructors -----------------------------------------------------

    /// `a + b`, simplified.
    pub fn add(a: Expr, b: Expr) -> Expr {
        Expr::sum_of(vec![a, b])
    }

    /// `a - b`, simplified.
    pub fn sub(a: Expr, b: Expr) -> Expr {
        Expr::add(a, Expr::neg(b))
    }

    /// `-a`, simplified.
    pub fn neg(a: Expr) -> Expr {
        Expr::mul(Expr::constant(-1.0), a)
    }

    /// The sum of many models, simplified.
    pub fn sum_of(args: Vec<Expr>) -> Expr {
        let mut poly = Pmnf::zero();
        // Like terms: core expression -> (monomial, coefficient) list.
        let mut others: Vec<(Expr, Monomial, f64)> = Vec::new();
        let mut stack = args;
        stack.reverse();
        while let Some(e) = stack.pop() {
            match e {
                Expr::Poly(p) => poly = poly.add(&p),
                Expr::Add(inner) => {
                    for x in inner.into_iter().rev() {
                        stack.push(x);
                    }
                }
                other => {
                    let (c, m, core) = split_scalar(other);
                    others.push((core, m, c));
                }
            }
        }
        let others = merge_like_terms(others);
        let mut rest: Vec<Expr> = Vec::new();
        for (core, m, c) in others {
            if c == 0.0 {
                continue;
            }
            let e = if c == 1.0 && m.is_constant() {
                core
            } else {
                Expr::mul(Expr::Poly(Pmnf::term(c, m)), core)
            };
            match e {
                Expr::Poly(p) => poly = poly.add(&p),
                Expr::Add(inner) => {
                    // Re-scaling can distribute into a sum again; merge its parts.
                    for x in inner {
                        match x {
                            Expr::Poly(p) => poly = poly.add(&p),
                            x => rest.push(x),
                        }
                    }
                }
                x => rest.push(x),
            }
        }
        // Re-scaling (`c · core` distributing into a quotient or a max) can turn two
        // different terms into like terms; merge again until nothing changes. Each
        // round removes at least one term, so this ends.
        if rest.len() > 1 && has_like_terms(&rest) {
            let mut again = vec![Expr::Poly(poly)];
            again.extend(rest);
            return Expr::sum_of(again);
        }
        sort_canonical(&mut rest);
        match (poly.is_zero(), rest.len()) {
            (_, 0) => Expr::Poly(poly),
            (true, 1) => rest.pop().unwrap_or_else(Expr::zero),
            (true, _) => Expr::Add(rest),
            (false, _) => {
                let mut v = vec![Expr::Poly(poly)];
                v.extend(rest);
                Expr::Add(v)
            }
        }
    }

    /// `a · b`, simplified.
    pub fn mul(a: Expr, b: Expr) -> Expr {
        if a.is_zero() || b.is_zero() {
            return Expr::zero();
        }
        match (a, b) {
            (Expr::Poly(p), Expr::Poly(q)) => match p.mul(&q) {
                Some(r) => Expr::Poly(r),
                None => Expr::Mul(vec![Expr::Poly(p), Expr::Poly(q)]),
            },
            (Expr::Poly(p), other) | (other, Expr::Poly(p)) => Expr::mul_poly(p, other),
            (a, b) => Expr::mul_nonpoly(a, b),
        }
    }

    /// The product of many models, simplified.
    pub fn product_of(args: Vec<Expr>) -> Expr {
        args.into_iter().fold(Expr::one(), Expr::mul)
    }

    fn mul_poly(p: Pmnf, other: Expr) -> Expr {
        if p.as_constant() == Some(1.0) {
            return other;
        }
        if let Some((c, m)) = p.as_single_term() {
            let m = m.clone();
            return Expr::scale(c, &m, other);
        }
        match other {
            // Distribute a polynomial over a sum (unless the expansion would be huge).
            Expr::Add(args) if p.len().saturating_mul(args.len()) <= MAX_PRODUCT_TERMS => {
                Expr::sum_of(
                    args.into_iter()
                        .map(|a| Expr::mul(Expr::Poly(p.clone()), a))
                        .collect(),
                )
            }
            Expr::Div(n, d) => Expr::div(Expr::mul(Expr::Poly(p), *n), *d),
            Expr::Mul(mut fs) => {
                if let Some(Expr::Poly(q)) = fs.first() {
                    if let Some(r) = p.mul(q) {
                        fs[0] = Expr::Poly(r);
                        return Expr::rebuild_mul(fs);
                    }
                }
                fs.insert(0, Expr::Poly(p));
                Expr::rebuild_mul(fs)
            }
            other => Expr::Mul(vec![Expr::Poly(p), other]),
        }
    }

    /// `c · m · e` for a single term `c · m`: distributes into sums, quotients, max/min
    /// (swapping them when `c < 0`) and sum bodies.
    fn scale(c: f64, m: &Monomial, e: Expr) -> Expr {
        if c == 1.0 && m.is_constant() {
            return e;
        }
        let term = || Expr::Poly(Pmnf::term(c, m.clone()));
        match e {
            Expr::Poly(p) => match p.mul_term(c, m) {
                Some(r) => Expr::Poly(r),
                None => Expr::Mul(vec![term(), Expr::Poly(p)]),
            },
            Expr::Add(args) => {
                Expr::sum_of(args.into_iter().map(|a| Expr::scale(c, m, a)).collect())
            }
            Expr::Div(n, d) => Expr::div(Expr::scale(c, m, *n), *d),
            Expr::Max(args) => {
                let scaled: Vec<Expr> = args.into_iter().map(|a| Expr::scale(c, m, a)).collect();
                if c > 0.0 {
                    Expr::max_of(scaled)
                } else {
                    Expr::min_of(scaled)
                }
            }
            Expr::Min(args) => {
                let scaled: Vec<Expr> = args.into_iter().map(|a| Expr::scale(c, m, a)).collect();
                if c > 0.0 {
                    Expr::min_of(scaled)
                } else {
                    Expr::max_of(scaled)
                }
            }
            Expr::Sum {
                var,
                from,
                to,
                body,
            } if !m.params().any(|p| p == var) => Expr::Sum {
                var,
                from,
                to,
                body: Box::new(Expr::scale(c, m, *body)),
            },
            Expr::Piecewise { on, breaks, pieces } => Expr::piecewise(
                *on,
                breaks,
                pieces.into_iter().map(|e| Expr::scale(c, m, e)).collect(),
            )
            .expect("scaling keeps the breaks of a valid segmented model"),
            Expr::Mul(mut fs) => {
                if let Some(Expr::Poly(q)) = fs.first() {
                    if let Some(r) = q.mul_term(c, m) {
                        fs[0] = Expr::Poly(r);
                        return Expr::rebuild_mul(fs);
                    }
                }
                fs.insert(0, term());
                Expr::rebuild_mul(fs)
            }
            other => Expr::Mul(vec![term(), other]),
        }
    }

    fn mul_nonpoly(a: Expr, b: Expr) -> Expr {
        match (a, b) {
            (Expr::Div(n, d), other) | (other, Expr::Div(n, d)) => {
                Expr::div(Expr::mul(*n, other), *d)
            }
            (Expr::Add(args), other) | (other, Expr::Add(args))
                if args.len().saturating_mul(match &other {
                    Expr::Add(o) => o.len(),
                    _ => 1,
                }) <= MAX_PRODUCT_TERMS =>
            {
                Expr::sum_of(
                    args.into_iter()
                        .map(|x| Expr::mul(x, other.clone()))
                        .collect(),
                )
            }
            (a, b) => {
                let mut fs = Vec::new();
                for e in [a, b] {
                    match e {
                        Expr::Mul(inner) => fs.extend(inner),
                        e => fs.push(e),
                    }
                }
                Expr::rebuild_mul(fs)
            }
        }
    }

    /// Normalise a flat list of factors into the canonical `Mul` shape.
    fn rebuild_mul(fs: Vec<Expr>) -> Expr {
        Expr::rebuild_mul_with(fs, true)
    }

    /// [`Expr::rebuild_mul`]; `absorb` lets a single term move into the first factor that
    /// takes scalars (done at most once per call chain, so this always ends).
    fn rebuild_mul_with(fs: Vec<Expr>, absorb: bool) -> Expr {
        let mut poly: Option<Pmnf> = None;
        let mut rest = Vec::new();
        let mut leftover_polys = Vec::new();
        for f in fs {
            match f {
                Expr::Poly(p) => match poly.take() {
                    None => poly = Some(p),
                    Some(q) => match q.mul(&p) {
                        Some(r) => poly = Some(r),
                        None => {
                            poly = Some(q);
                            leftover_polys.push(Expr::Poly(p));
                        }
                    },
                },
                Expr::Mul(inner) => rest.extend(inner),
                other => rest.push(other),
            }
        }
        if let Some(p) = &poly {
            if p.is_zero() {
                return Expr::zero();
            }
        }
        sort_canonical(&mut rest);
        // A single term next to a factor that absorbs scalars (max, min, a quotient, a
        // sum) goes into the first such factor: `c · max(a, b) · f = max(c·a, c·b) · f`.
        // This is the shape the parser produces from the printed form, so printing stays
        // a fixed point.
        if absorb && leftover_polys.is_empty() {
            if let Some((c, m)) = poly.as_ref().and_then(Pmnf::as_single_term) {
                if c != 1.0 || !m.is_constant() {
                    if let Some(i) = rest.iter().position(|f| absorbs_scalars(f, m)) {
                        let (c, m) = (c, m.clone());
                        let absorbed = Expr::scale(c, &m, rest.remove(i));
                        rest.push(absorbed);
                        return Expr::rebuild_mul_with(rest, false);
                    }
                }
            }
        }
        rest.extend(leftover_polys);
        let poly = poly.filter(|p| p.as_constant() != Some(1.0));
        match (poly, rest.len()) {
            (None, 0) => Expr::one(),
            (Some(p), 0) => Expr::Poly(p),
            (None, 1) => rest.pop().unwrap_or_else(Expr::one),
            (None, _) => Expr::Mul(rest),
            (Some(p), _) => {
                let mut v = vec![Expr::Poly(p)];
                v.extend(rest);
                Expr::Mul(v)
            }
        }
    }

    /// `a / b`, simplified. Division by a single PMNF term is multiplication by its
    /// inverse (negative exponents); division by a sum stays a quotient.
    pub fn div(a: Expr, b: Expr) -> Expr {
        if let Some((c, m)) = b.single_term() {
            if c != 0.0 {
                if let Some(inv) = m.pow(-Q::one()) {
                    return Expr::scale(1.0 / c, &inv, a);
                }
            }
        }
        if a.is_zero() && !b.is_zero() {
            return Expr::zero();
        }
        match (a, b) {
            (Expr::Div(n, d), b) => Expr::div(*n, Expr::mul(*d, b)),
            (a, Expr::Div(n, d)) => Expr::div(Expr::mul(a, *d), *n),
            (a, b) => Expr::Div(Box::new(a), Box::new(b)),
        }
    }

    /// `a ^ q` for a rational exponent, simplified.
    pub fn pow(a: Expr, q: Q) -> Expr {
        if q.is_zero() {
            return Expr::one();
        }
        if q.is_one() {
            return a;
        }
        if let Expr::Poly(p) = &a {
            if p.is_zero() && q.is_positive() {
                return Expr::zero();
            }
            if let Some((c, m)) = p.as_single_term() {
                if c > 0.0 || q.is_integer() {
                    if let Some(mq) = m.pow(q) {
                        return Expr::Poly(Pmnf::term(pow_q(c, q), mq));
                    }
                }
            } else if q.is_integer() && q.is_positive() && q.to_integer() <= MAX_POLY_POWER {
                let mut acc = Some(p.clone());
                for _ in 1..q.to_integer() {
                    acc = acc.and_then(|x| x.mul(p));
                }
                if let Some(r) = acc {
                    return Expr::Poly(r);
                }
            }
        }
        Expr::Pow(Box::new(a), q)
    }

    /// `a ^ b` for a general exponent: a rational power once `b` is a constant integer
    /// (or both are constants), a `PowE` node otherwise.
    pub fn pow_expr(a: Expr, b: Expr) -> Expr {
        if let Some(k) = b.as_constant() {
            if let Some(q) = exponent_as_q(k) {
                return Expr::pow(a, q);
            }
            if let Some(c) = a.as_constant() {
                return Expr::constant(c.powf(k));
            }
        }
        Expr::PowE(Box::new(a), Box::new(b))
    }

    /// `log2(a)`, simplified: the log of a log-free PMNF term is PMNF
    /// (`log2(c · x^i · y^k) = log2(c) + i·log2(x) + k·log2(y)`).
    pub fn log2(a: Expr) -> Expr {
        if let Some((c, m)) = a.single_term() {
            if c > 0.0 && m.has_no_logs() {
                let mut p = Pmnf::constant(c.log2());
                for (name, pw) in m.factors() {
                    p = p.add(&Pmnf::term(
                        q_to_f64(pw.exp),
                        Monomial::power(name, Q::zero(), Q::one()),
                    ));
                }
                return Expr::Poly(p);
            }
        }
        Expr::Log2(Box::new(a))
    }

    /// `max(a, b)`, simplified.
    pub fn max(a: Expr, b: Expr) -> Expr {
        Expr::max_of(vec![a, b])
    }

    /// `min(a, b)`, simplified.
    pub fn min(a: Expr, b: Expr) -> Expr {
        Expr::min_of(vec![a, b])
    }

    /// The pointwise maximum of many models: nested maxima flattened, constants merged,
    /// duplicates removed, arguments sorted.
    pub fn max_of(args: Vec<Expr>) -> Expr {
        Expr::extremum(args, true)
    }

    /// The pointwise minimum of many models.
    pub fn min_of(args: Vec<Expr>) -> Expr {
        Expr::extremum(args, false)
    }

    fn extremum(args: Vec<Expr>, is_max: bool) -> Expr {
        let mut flat = Vec::new();
        let mut constant: Option<f64> = None;
        let mut stack = args;
        while let Some(e) = stack.pop() {
            match e {
                Expr::Max(inner) if is_max => stack.extend(inner),
                Expr::Min(inner) if !is_max => stack.extend(inner),
                e => match e.as_constant() {
                    Some(c) if !c.is_nan() => {
                        constant = Some(match constant {
                            None => c,
                            Some(k) if is_max => k.max(c),
                            Some(k) => k.min(c),
                        })
                    }
                    _ => flat.push(e),
                },
            }
        }
        if let Some(c) = constant {
            flat.push(Expr::constant(c));
        }
        sort_canonical(&mut flat);
        flat.dedup();
        match flat.len() {
            0 => Expr::zero(),
            1 => flat.pop().unwrap_or_else(Expr::zero),
            _ if is_max => Expr::Max(flat),
            _ => Expr::Min(flat),
        }
    }

    pub fn ceil(a: Expr) -> Expr {
        match a.as_constant() {
            Some(c) => Expr::constant(c.ceil()),
            None => Expr::Ceil(Box::new(a)),
        }
    }

    pub fn floor(a: Expr) -> Expr {
        match a.as_constant() {
            Some(c) => Expr::constant(c.floor()),
            None => Expr::Floor(Box::new(a)),
        }
    }

    /// `Σ_{var = from}^{to} body` over integers. Expanded when the bounds are small
    /// constants; a body free of `var` becomes `(to - from + 1) · body`.
    pub fn sum_over(var: &str, from: Expr, to: Expr, body: Expr) -> Expr {
        if !body.mentions(var) {
            let count = Expr::add(Expr::sub(to, from), Expr::one());
            return Expr::mul(count, body);
        }
        if let (Some(f), Some(t)) = (from.as_constant(), to.as_constant()) {
            if f.is_finite() && t.is_finite() && f.fract() == 0.0 && t.fract() == 0.0 {
                let (f, t) = (f as i64, t as i64);
                if t < f {
                    return Expr::zero();
                }
                if t - f < MAX_SUM_EXPANSION {
                    let parts = (f..=t)
                        .map(|k| body.subst(var, &Expr::constant(k as f64)))
                        .collect();
                    return Expr::sum_of(parts);
                }
            }
        }
        Expr::Sum {
            var: var.to_string(),
            from: Box::new(from),
            to: Box::new(to),
            body: Box::new(body),
        }
    }

    /// `pieces[i]` where `breaks[i-1] <= on < breaks[i]`, simplified: a constant `on`
    /// selects its piece, equal neighbouring pieces merge. `None` when the shape is wrong
    /// (not one piece more than breaks, a break that is not finite, breaks not strictly
    /// increasing).
    pub fn piecewise(on: Expr, breaks: Vec<f64>, pieces: Vec<Expr>) -> Option<Expr> {
        if pieces.len() != breaks.len() + 1
            || breaks.iter().any(|b| !b.is_finite())
            || breaks.windows(2).any(|w| w[0] >= w[1])
        {
            return None;
        }
        if let Some(v) = on.as_constant() {
            let i = breaks.iter().take_while(|&&b| b <= v).count();
            return pieces.into_iter().nth(i);
        }
        let mut kept_breaks = Vec::with_capacity(breaks.len());
        let mut kept: Vec<Expr> = Vec::with_capacity(pieces.len());
        for (i, piece) in pieces.into_iter().enumerate() {
            if kept.last() == Some(&piece) {
                continue;
            }
            if i > 0 {
                kept_breaks.push(breaks[i - 1]);
            }
            kept.push(piece);
        }
        if kept.len() == 1 {
            return kept.pop();
        }
        Some(Expr::Piecewise {
            on: Box::new(on),
            breaks: kept_breaks,
            pieces: kept,
        })
    }

    /// The piece of a segmented model that applies where `on` is `value` (the model
    /// itself when it is not segmented).
    pub fn piece_at(&self, value: f64) -> &Expr {
        match self {
            Expr::Piecewise { breaks, pieces, .. } => {
                &pieces[breaks.iter().take_while(|&&b| b <= value).count()]
            }
            e => e,
        }
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

    /// Replace parameter `name` by the model `by` everywhere, re-simplifying
    /// (`x := d(x)` in MapReduce's reduce, `m := 1` for a single node, ...).
    pub fn subst(&self, name: &str, by: &Expr) -> Expr {
        if !self.mentions(name) {
            return self.clone();
        }
        match self {
            Expr::Poly(p) => {
                let mut parts = Vec::with_capacity(p.len());
                for (c, m) in p.terms() {
                    let mut rest = Monomial::one();
                    let mut hit = None;
                    for (q, pw) in m.factors() {
                        if q == name {
                            hit = Some(*pw);
                        } else {
                            rest = rest
                                .mul(&Monomial::power(q, pw.exp, pw.log))
                                .unwrap_or_else(|| rest.clone());
                        }
                    }
                    let mut term = Expr::Poly(Pmnf::term(c, rest));
                    if let Some(Power { exp, log }) = hit {
                        term = Expr::mul(term, Expr::pow(by.clone(), exp));
                        term = Expr::mul(term, Expr::pow(Expr::log2(by.clone()), log));
                    }
                    parts.push(term);
                }
                Expr::sum_of(parts)
            }
            Expr::Add(v) => Expr::sum_of(v.iter().map(|e| e.subst(name, by)).collect()),
            Expr::Mul(v) => Expr::product_of(v.iter().map(|e| e.subst(name, by)).collect()),
            Expr::Max(v) => Expr::max_of(v.iter().map(|e| e.subst(name, by)).collect()),
            Expr::Min(v) => Expr::min_of(v.iter().map(|e| e.subst(name, by)).collect()),
            Expr::Div(a, b) => Expr::div(a.subst(name, by), b.subst(name, by)),
            Expr::Pow(a, q) => Expr::pow(a.subst(name, by), *q),
            Expr::PowE(a, b) => Expr::pow_expr(a.subst(name, by), b.subst(name, by)),
            Expr::Log2(a) => Expr::log2(a.subst(name, by)),
            Expr::Ceil(a) => Expr::ceil(a.subst(name, by)),
            Expr::Floor(a) => Expr::floor(a.subst(name, by)),
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => {
                let body = if var == name {
                    (**body).clone()
                } else if by.mentions(var) {
                    // Rename the bound variable to avoid capture.
                    let fresh = fresh_name(var, by, body);
                    body.subst(var, &Expr::param(&fresh)).subst(name, by)
                } else {
                    body.subst(name, by)
                };
                let var = if var != name && by.mentions(var) {
                    fresh_name(var, by, &body)
                } else {
                    var.clone()
                };
                Expr::sum_over(&var, from.subst(name, by), to.subst(name, by), body)
            }
            Expr::Piecewise { on, breaks, pieces } => Expr::piecewise(
                on.subst(name, by),
                breaks.clone(),
                pieces.iter().map(|e| e.subst(name, by)).collect(),
            )
            .expect("substitution keeps the breaks of a valid segmented model"),
        }
    }

    /// Substitute several parameters at once (each by a model).
    pub fn subst_all(&self, bindings: &[(&str, Expr)]) -> Expr {
        bindings
            .iter()
            .fold(self.clone(), |e, (n, by)| e.subst(n, by))
    }

    // ----- evaluation ---------------------------------------------------------------

    /// Evaluate at a point. Domain problems — a missing value, division by zero, `log2`
    /// of a non-positive value, a fractional power of a negative number — are errors
    /// naming the offending part of the model.
    pub fn eval(&self, env: &dyn Env) -> Result<f64, EvalError> {
        let v = self.eval_inner(env)?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(EvalError::NonFinite(self.to_string()))
        }
    }

    fn eval_inner(&self, env: &dyn Env) -> Result<f64, EvalError> {
        match self {
            Expr::Poly(p) => eval_pmnf(p, env),
            Expr::Add(v) => v
                .iter()
                .try_fold(0.0, |acc, e| Ok(acc + e.eval_inner(env)?)),
            Expr::Mul(v) => v
                .iter()
                .try_fold(1.0, |acc, e| Ok(acc * e.eval_inner(env)?)),
            Expr::Div(a, b) => {
                let d = b.eval_inner(env)?;
                if d == 0.0 {
                    return Err(EvalError::DivisionByZero(b.to_string()));
                }
                Ok(a.eval_inner(env)? / d)
            }
            Expr::Pow(a, q) => {
                let x = a.eval_inner(env)?;
                if x < 0.0 && !q.is_integer() {
                    return Err(EvalError::NotReal {
                        what: self.to_string(),
                        base: x,
                        exp: q.to_string(),
                    });
                }
                if x == 0.0 && q.is_negative() {
                    return Err(EvalError::DivisionByZero(a.to_string()));
                }
                Ok(pow_q(x, *q))
            }
            Expr::PowE(a, b) => {
                let x = a.eval_inner(env)?;
                let y = b.eval_inner(env)?;
                if x < 0.0 && y.fract() != 0.0 {
                    return Err(EvalError::NotReal {
                        what: self.to_string(),
                        base: x,
                        exp: y.to_string(),
                    });
                }
                if x == 0.0 && y < 0.0 {
                    return Err(EvalError::DivisionByZero(a.to_string()));
                }
                Ok(x.powf(y))
            }
            Expr::Log2(a) => {
                let x = a.eval_inner(env)?;
                if x <= 0.0 {
                    return Err(EvalError::LogOfNonPositive {
                        what: a.to_string(),
                        value: x,
                    });
                }
                Ok(x.log2())
            }
            Expr::Max(v) => v
                .iter()
                .try_fold(f64::NEG_INFINITY, |acc, e| Ok(acc.max(e.eval_inner(env)?))),
            Expr::Min(v) => v
                .iter()
                .try_fold(f64::INFINITY, |acc, e| Ok(acc.min(e.eval_inner(env)?))),
            Expr::Ceil(a) => Ok(a.eval_inner(env)?.ceil()),
            Expr::Floor(a) => Ok(a.eval_inner(env)?.floor()),
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => {
                let f = from.eval_inner(env)?.ceil();
                let t = to.eval_inner(env)?.floor();
                if !(f.is_finite() && t.is_finite()) || t - f > 1e7 {
                    return Err(EvalError::NonFinite(self.to_string()));
                }
                let mut acc = 0.0;
                let mut k = f;
                while k <= t {
                    let bound = Bound {
                        inner: env,
                        name: var,
                        value: k,
                    };
                    acc += body.eval_inner(&bound)?;
                    k += 1.0;
                }
                Ok(acc)
            }
            Expr::Piecewise { on, breaks, pieces } => {
                let v = on.eval_inner(env)?;
                if v.is_nan() {
                    return Err(EvalError::NonFinite(on.to_string()));
                }
                pieces[breaks.iter().take_while(|&&b| b <= v).count()].eval_inner(env)
            }
        }
    }

    /// Evaluate at a point given as `(name, value)` pairs.
    pub fn eval_at(&self, point: &[(&str, f64)]) -> Result<f64, EvalError> {
        self.eval(&Pairs(point))
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

/// Evaluate a PMNF with domain checks per factor.
fn eval_pmnf(p: &Pmnf, env: &dyn Env) -> Result<f64, EvalError> {
    let mut sum = 0.0;
    for (c, m) in p.terms() {
        let mut v = c;
        for (name, pw) in m.factors() {
            let x = env
                .get(name)
                .ok_or_else(|| EvalError::Unbound(name.to_string()))?;
            if !pw.exp.is_zero() {
                if x == 0.0 && pw.exp.is_negative() {
                    return Err(EvalError::DivisionByZero(name.to_string()));
                }
                if x < 0.0 && !pw.exp.is_integer() {
                    return Err(EvalError::NotReal {
                        what: name.to_string(),
                        base: x,
                        exp: pw.exp.to_string(),
                    });
                }
                v *= pow_q(x, pw.exp);
            }
            if !pw.log.is_zero() {
                if x <= 0.0 {
                    return Err(EvalError::LogOfNonPositive {
                        what: format!("log2({name})"),
                        value: x,
                    });
                }
                let l = x.log2();
                if l == 0.0 && pw.log.is_negative() {
                    return Err(EvalError::DivisionByZero(format!("log2({name})")));
                }
                if l < 0.0 && !pw.log.is_integer() {
                    return Err(EvalError::NotReal {
                        what: format!("log2({name})"),
                        base: l,
                        exp: pw.log.to_string(),
                    });
                }
                v *= pow_q(l, pw.log);
            }
        }
        sum += v;
    }
    Ok(sum)
}

/// Merge like terms `c1 · m · core + c2 · m · core` of a sum, keeping the order of
/// first appearance and adding coefficients in that order. Sorting by structure finds
/// the groups in O(n log n); a pairwise search made long sums quadratic (a 150 kB
/// model took seconds to read).
fn merge_like_terms(others: Vec<(Expr, Monomial, f64)>) -> Vec<(Expr, Monomial, f64)> {
    use std::cmp::Ordering;
    let n = others.len();
    if n < 2 {
        return others;
    }
    let key = |a: usize, b: usize| {
        cmp_structure(&others[a].0, &others[b].0).then_with(|| others[a].1.cmp(&others[b].1))
    };
    let mut order: Vec<usize> = (0..n).collect();
    // Stable: within a group the first appearance comes first.
    order.sort_by(|&a, &b| key(a, b));
    let mut leader: Vec<usize> = (0..n).collect();
    let mut i = 0;
    while i < n {
        let first = order[i];
        let mut j = i + 1;
        while j < n && key(order[j], first) == Ordering::Equal {
            let k = order[j];
            if others[k].0 == others[first].0 && others[k].1 == others[first].1 {
                leader[k] = first;
            }
            j += 1;
        }
        i = j;
    }
    let mut slots: Vec<Option<(Expr, Monomial, f64)>> = others.into_iter().map(Some).collect();
    for k in 0..n {
        let l = leader[k];
        if l != k {
            if let Some((_, _, c)) = slots[k].take() {
                if let Some(slot) = slots[l].as_mut() {
                    slot.2 += c;
                }
            }
        }
    }
    slots.into_iter().flatten().collect()
}

/// Factors that take the scalar `c · m` into themselves under [`Expr::scale`].
fn absorbs_scalars(e: &Expr, m: &Monomial) -> bool {
    match e {
        Expr::Max(_) | Expr::Min(_) | Expr::Div(_, _) | Expr::Add(_) | Expr::Piecewise { .. } => {
            true
        }
        Expr::Sum { var, .. } => !m.params().any(|p| p == var),
        _ => false,
    }
}

/// True when two of the (non-PMNF) summands differ only in their scalar factor.
fn has_like_terms(rest: &[Expr]) -> bool {
    let mut keys: Vec<(Expr, Monomial)> = rest
        .iter()
        .map(|e| {
            let (_, m, core) = split_scalar(e.clone());
            (core, m)
        })
        .collect();
    keys.sort_by(|a, b| cmp_structure(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    keys.windows(2).any(|w| w[0] == w[1])
}

/// Split `c · m · core` (a `Mul` led by a single PMNF term) into its parts, so like
/// terms can be merged in sums.
fn split_scalar(e: Expr) -> (f64, Monomial, Expr) {
    if let Expr::Mul(fs) = &e {
        if let Some((c, m)) = fs.first().and_then(Expr::single_term) {
            let (c, m) = (c, m.clone());
            let rest: Vec<Expr> = fs[1..].to_vec();
            let core = if rest.len() == 1 {
                rest.into_iter().next().unwrap_or_else(Expr::one)
            } else {
                Expr::Mul(rest)
            };
            return (c, m, core);
        }
    }
    // A quotient with a single-term numerator is `c · m · (1 / d)`: its scalar lives in
    // the numerator (where `scale` puts it), so pull it out to see like terms.
    if let Expr::Div(n, d) = &e {
        if let Some((c, m)) = n.single_term() {
            return (c, m.clone(), Expr::Div(Box::new(Expr::one()), d.clone()));
        }
    }
    (1.0, Monomial::one(), e)
}

/// Sort arguments of commutative nodes into the canonical order: PMNF arguments first,
/// in the order of their printed form, then the other arguments by a structural order
/// ([`cmp_structure`]).
///
/// Printing every argument to sort it made composition quadratic in the depth of a
/// model (a task pool rescales, and so re-sorts, every level below it); the structural
/// order decides almost every comparison at the first node.
fn sort_canonical(v: &mut [Expr]) {
    if v.len() < 2 {
        return;
    }
    let polys = v.iter().filter(|e| matches!(e, Expr::Poly(_))).count();
    if polys < 2 {
        v.sort_by(cmp_structure);
        return;
    }
    // Sort a permutation, then move the arguments into place (no clones: the
    // arguments can be large).
    let keys: Vec<Option<String>> = v
        .iter()
        .map(|e| matches!(e, Expr::Poly(_)).then(|| e.to_string()))
        .collect();
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| match (&keys[a], &keys[b]) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => cmp_structure(&v[a], &v[b]),
    });
    let mut taken: Vec<Option<Expr>> = v
        .iter_mut()
        .map(|e| Some(std::mem::replace(e, Expr::zero())))
        .collect();
    for (slot, i) in v.iter_mut().zip(order) {
        *slot = taken[i].take().unwrap_or_else(Expr::zero);
    }
}

/// A total order on models: by kind (PMNF first), then by parts, left to right.
/// Coefficients compare with `f64::total_cmp`, so the order is total.
fn cmp_structure(a: &Expr, b: &Expr) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(e: &Expr) -> u8 {
        match e {
            Expr::Poly(_) => 0,
            Expr::Add(_) => 1,
            Expr::Mul(_) => 2,
            Expr::Div(_, _) => 3,
            Expr::Pow(_, _) => 4,
            Expr::PowE(_, _) => 5,
            Expr::Log2(_) => 6,
            Expr::Max(_) => 7,
            Expr::Min(_) => 8,
            Expr::Ceil(_) => 9,
            Expr::Floor(_) => 10,
            Expr::Sum { .. } => 11,
            Expr::Piecewise { .. } => 12,
        }
    }
    fn slices(x: &[Expr], y: &[Expr]) -> Ordering {
        for (p, q) in x.iter().zip(y) {
            let o = cmp_structure(p, q);
            if o != Ordering::Equal {
                return o;
            }
        }
        x.len().cmp(&y.len())
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Expr::Poly(p), Expr::Poly(q)) => {
            for ((cp, mp), (cq, mq)) in p.terms().zip(q.terms()) {
                let o = mp.cmp(mq).then(cp.total_cmp(&cq));
                if o != Ordering::Equal {
                    return o;
                }
            }
            p.len().cmp(&q.len())
        }
        (Expr::Add(x), Expr::Add(y))
        | (Expr::Mul(x), Expr::Mul(y))
        | (Expr::Max(x), Expr::Max(y))
        | (Expr::Min(x), Expr::Min(y)) => slices(x, y),
        (Expr::Div(a1, b1), Expr::Div(a2, b2)) | (Expr::PowE(a1, b1), Expr::PowE(a2, b2)) => {
            cmp_structure(a1, a2).then_with(|| cmp_structure(b1, b2))
        }
        (Expr::Pow(x, q), Expr::Pow(y, r)) => cmp_structure(x, y).then(q.cmp(r)),
        (Expr::Log2(x), Expr::Log2(y))
        | (Expr::Ceil(x), Expr::Ceil(y))
        | (Expr::Floor(x), Expr::Floor(y)) => cmp_structure(x, y),
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
        ) => v1
            .cmp(v2)
            .then_with(|| cmp_structure(f1, f2))
            .then_with(|| cmp_structure(t1, t2))
            .then_with(|| cmp_structure(b1, b2)),
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
        ) => cmp_structure(o1, o2)
            .then_with(|| {
                b1.iter()
                    .zip(b2)
                    .map(|(x, y)| x.total_cmp(y))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or_else(|| b1.len().cmp(&b2.len()))
            })
            .then_with(|| slices(p1, p2)),
        _ => Ordering::Equal,
    })
}

fn fresh_name(base: &str, a: &Expr, b: &Expr) -> String {
    (1..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| !a.mentions(n) && !b.mentions(n))
        .unwrap_or_else(|| format!("{base}_"))
}

impl std::ops::Add for Expr {
    type Output = Expr;
    fn add(self, rhs: Expr) -> Expr {
        Expr::add(self, rhs)
    }
}

impl std::ops::Sub for Expr {
    type Output = Expr;
    fn sub(self, rhs: Expr) -> Expr {
        Expr::sub(self, rhs)
    }
}

impl std::ops::Mul for Expr {
    type Output = Expr;
    fn mul(self, rhs: Expr) -> Expr {
        Expr::mul(self, rhs)
    }
}

impl std::ops::Div for Expr {
    type Output = Expr;
    fn div(self, rhs: Expr) -> Expr {
        Expr::div(self, rhs)
    }
}

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(self)
    }
}
