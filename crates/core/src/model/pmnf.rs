//! The performance model normal form (PMNF): `c0 + Σ_k c_k · Π_l p_l^(i_kl) · log2(p_l)^(j_kl)`.
//!
//! A [`Pmnf`] is a sum of [`Monomial`]s with `f64` coefficients, kept merged (one
//! coefficient per monomial) and in a canonical order, so two PMNFs that denote the same
//! function compare equal structurally (up to floating-point coefficients). Exponents are
//! exact rationals ([`Q`]); negative exponents appear when a model is divided by a
//! parameter (a task pool over `n` threads gives `n^(-1)`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use num_traits::{CheckedAdd, CheckedMul, One, Signed, ToPrimitive, Zero};

use super::number::{MAX_EXPONENT_PART, Q};

/// `p^exp · log2(p)^log` for one parameter `p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Power {
    pub exp: Q,
    pub log: Q,
}

impl Power {
    pub fn new(exp: Q, log: Q) -> Power {
        Power { exp, log }
    }

    pub fn is_one(&self) -> bool {
        self.exp.is_zero() && self.log.is_zero()
    }

    /// Asymptotic order for one parameter: polynomial exponent first, then log exponent.
    pub fn growth_cmp(&self, other: &Power) -> Ordering {
        self.exp.cmp(&other.exp).then(self.log.cmp(&other.log))
    }
}

/// A product of parameter powers, `Π_l p_l^(i_l) · log2(p_l)^(j_l)`; the empty product is 1.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Monomial {
    factors: BTreeMap<String, Power>,
}

impl Monomial {
    /// The constant monomial 1.
    pub fn one() -> Monomial {
        Monomial::default()
    }

    /// `p^exp · log2(p)^log`.
    pub fn power(param: &str, exp: Q, log: Q) -> Monomial {
        let mut m = Monomial::one();
        m.set(param, Power::new(exp, log));
        m
    }

    /// The monomial `p`.
    pub fn param(param: &str) -> Monomial {
        Monomial::power(param, Q::one(), Q::zero())
    }

    fn set(&mut self, param: &str, p: Power) {
        if p.is_one() {
            self.factors.remove(param);
        } else {
            self.factors.insert(param.to_string(), p);
        }
    }

    pub fn is_constant(&self) -> bool {
        self.factors.is_empty()
    }

    /// Factors in parameter-name order.
    pub fn factors(&self) -> impl Iterator<Item = (&str, &Power)> {
        self.factors.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The factor for `param`, or `p^0 · log2(p)^0`.
    pub fn get(&self, param: &str) -> Power {
        self.factors
            .get(param)
            .copied()
            .unwrap_or(Power::new(Q::zero(), Q::zero()))
    }

    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.factors.keys().map(|k| k.as_str())
    }

    /// Product; `None` when an exponent leaves what the parser reads as an exact
    /// exponent ([`MAX_EXPONENT_PART`]), or a 64-bit fraction.
    pub fn mul(&self, other: &Monomial) -> Option<Monomial> {
        let mut out = self.clone();
        for (p, q) in &other.factors {
            let cur = out.get(p);
            out.set(
                p,
                readable(Power::new(
                    cur.exp.checked_add(&q.exp)?,
                    cur.log.checked_add(&q.log)?,
                ))?,
            );
        }
        Some(out)
    }

    /// `self^q`, exact in the exponents; `None` when an exponent leaves what the parser
    /// reads as an exact exponent ([`MAX_EXPONENT_PART`]), or a 64-bit fraction.
    pub fn pow(&self, q: Q) -> Option<Monomial> {
        let mut out = Monomial::one();
        for (p, pw) in &self.factors {
            out.set(
                p,
                readable(Power::new(pw.exp.checked_mul(&q)?, pw.log.checked_mul(&q)?))?,
            );
        }
        Some(out)
    }

    /// True when no factor carries a log.
    pub fn has_no_logs(&self) -> bool {
        self.factors.values().all(|p| p.log.is_zero())
    }

    /// `self` grows at least as fast as `other` in every parameter (the per-parameter
    /// order: polynomial exponent, then log exponent).
    pub fn dominates_or_equals(&self, other: &Monomial) -> bool {
        let mut names: Vec<&str> = self.params().chain(other.params()).collect();
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .all(|n| self.get(n).growth_cmp(&other.get(n)) != Ordering::Less)
    }

    /// `self` dominates `other` and differs from it.
    pub fn strictly_dominates(&self, other: &Monomial) -> bool {
        self != other && self.dominates_or_equals(other)
    }

    /// Total polynomial degree and total log degree, used to order terms for printing.
    fn degree(&self) -> (Q, Q) {
        // Most monomials have one factor: its exponents are the sums (no rational
        // additions, which reduce by a gcd, on every comparison).
        let mut it = self.factors.values();
        match (it.next(), it.next()) {
            (None, _) => (Q::zero(), Q::zero()),
            (Some(p), None) => (p.exp, p.log),
            _ => self
                .factors
                .values()
                .fold((Q::zero(), Q::zero()), |(e, l), p| (e + p.exp, l + p.log)),
        }
    }

    /// Evaluate at positive parameter values; `None` when a value is missing.
    pub fn eval_with(&self, lookup: &mut dyn FnMut(&str) -> Option<f64>) -> Option<f64> {
        let mut v = 1.0;
        for (p, pw) in &self.factors {
            let x = lookup(p)?;
            v *= pow_q(x, pw.exp) * pow_q(x.log2(), pw.log);
        }
        Some(v)
    }
}

/// `p` when the parser reads its exponents back exactly: numerators and denominators up
/// to [`MAX_EXPONENT_PART`]. A larger exponent prints as a general power (`(e)^2350296`),
/// so arithmetic that would make one leaves the product or power unsimplified instead,
/// and printing stays a fixed point (`(e^15066)^156` stays that).
fn readable(p: Power) -> Option<Power> {
    let fits = |q: Q| {
        q.numer().unsigned_abs() <= MAX_EXPONENT_PART as u64 && *q.denom() <= MAX_EXPONENT_PART
    };
    (fits(p.exp) && fits(p.log)).then_some(p)
}

/// `x^q` for a rational exponent, with an integer fast path (so negative bases work for
/// integer exponents).
pub fn pow_q(x: f64, q: Q) -> f64 {
    if q.is_zero() {
        return 1.0;
    }
    if q.is_integer() {
        if let Some(i) = q.to_integer().to_i32() {
            return x.powi(i);
        }
    }
    x.powf(q_to_f64(q))
}

pub fn q_to_f64(q: Q) -> f64 {
    *q.numer() as f64 / *q.denom() as f64
}

impl Ord for Monomial {
    /// Canonical print order: lower total degree first (so the constant comes first, as
    /// Extra-P prints), then by the factors.
    fn cmp(&self, other: &Self) -> Ordering {
        let (de, dl) = self.degree();
        let (oe, ol) = other.degree();
        de.cmp(&oe).then(dl.cmp(&ol)).then_with(|| {
            // Lexicographic over the factors, as comparing them collected would be.
            let a = self.factors.iter().map(|(k, p)| (k, p.exp, p.log));
            let b = other.factors.iter().map(|(k, p)| (k, p.exp, p.log));
            a.cmp(b)
        })
    }
}

impl PartialOrd for Monomial {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Largest number of term pairs a product of two PMNFs is expanded into.
pub const MAX_PRODUCT_TERMS: usize = 256;

/// A sum of coefficient × monomial terms; the constant term is the empty monomial.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pmnf {
    terms: BTreeMap<Monomial, f64>,
}

impl Pmnf {
    pub fn zero() -> Pmnf {
        Pmnf::default()
    }

    pub fn constant(c: f64) -> Pmnf {
        Pmnf::term(c, Monomial::one())
    }

    pub fn term(c: f64, m: Monomial) -> Pmnf {
        let mut p = Pmnf::zero();
        p.add_term(c, m);
        p
    }

    /// The parameter `name` as a model.
    pub fn param(name: &str) -> Pmnf {
        Pmnf::term(1.0, Monomial::param(name))
    }

    /// Build from terms, merging equal monomials.
    pub fn from_terms(terms: impl IntoIterator<Item = (f64, Monomial)>) -> Pmnf {
        let mut p = Pmnf::zero();
        for (c, m) in terms {
            p.add_term(c, m);
        }
        p
    }

    fn add_term(&mut self, c: f64, m: Monomial) {
        use std::collections::btree_map::Entry;
        if c == 0.0 {
            return;
        }
        match self.terms.entry(m) {
            Entry::Occupied(mut e) => {
                *e.get_mut() += c;
                // Exact cancellation only; also keeps -0.0 out of the canonical form.
                if *e.get() == 0.0 {
                    e.remove();
                }
            }
            Entry::Vacant(e) => {
                e.insert(c);
            }
        }
    }

    /// Terms in canonical order (constant first, then by growing degree).
    pub fn terms(&self) -> impl Iterator<Item = (f64, &Monomial)> {
        self.terms.iter().map(|(m, c)| (*c, m))
    }

    pub fn len(&self) -> usize {
        self.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The constant term `c0` (0 when absent).
    pub fn constant_term(&self) -> f64 {
        self.terms.get(&Monomial::one()).copied().unwrap_or(0.0)
    }

    /// `Some(c)` when the whole PMNF is the constant `c`.
    pub fn as_constant(&self) -> Option<f64> {
        match self.terms.len() {
            0 => Some(0.0),
            1 => self.terms.get(&Monomial::one()).copied(),
            _ => None,
        }
    }

    /// `Some((c, m))` when the PMNF is a single term `c · m` (including a nonzero constant).
    pub fn as_single_term(&self) -> Option<(f64, &Monomial)> {
        if self.terms.len() == 1 {
            self.terms.iter().next().map(|(m, c)| (*c, m))
        } else {
            None
        }
    }

    /// All parameter names, sorted and deduplicated.
    pub fn params(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .terms
            .keys()
            .flat_map(|m| m.params().map(str::to_string))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    pub fn add(&self, other: &Pmnf) -> Pmnf {
        let mut out = self.clone();
        for (m, c) in &other.terms {
            out.add_term(*c, m.clone());
        }
        out
    }

    pub fn scale(&self, k: f64) -> Pmnf {
        if k == 0.0 {
            return Pmnf::zero();
        }
        Pmnf {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), c * k)).collect(),
        }
    }

    pub fn neg(&self) -> Pmnf {
        self.scale(-1.0)
    }

    pub fn sub(&self, other: &Pmnf) -> Pmnf {
        self.add(&other.neg())
    }

    /// Product, expanded term by term (exact in the exponents); `None` on exponent
    /// overflow.
    pub fn mul(&self, other: &Pmnf) -> Option<Pmnf> {
        // Expanding long products of sums grows exponentially (a 250-character model
        // reached 25,000 terms); past this size the product stays a product.
        if self.terms.len().saturating_mul(other.terms.len()) > MAX_PRODUCT_TERMS {
            return None;
        }
        let mut out = Pmnf::zero();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                out.add_term(ca * cb, ma.mul(mb)?);
            }
        }
        Some(out)
    }

    /// Multiply by `c · m`; `None` on exponent overflow.
    pub fn mul_term(&self, c: f64, m: &Monomial) -> Option<Pmnf> {
        let mut out = Pmnf::zero();
        for (k, v) in &self.terms {
            out.add_term(v * c, k.mul(m)?);
        }
        Some(out)
    }

    /// The terms that no other term strictly dominates: the asymptotically leading part.
    /// For one parameter this is the single fastest-growing term; with several parameters
    /// there can be several incomparable ones (`x^2 + y^2`).
    pub fn dominant(&self) -> Pmnf {
        let keep = self
            .terms
            .iter()
            .filter(|(m, _)| !self.terms.keys().any(|other| other.strictly_dominates(m)));
        Pmnf {
            terms: keep.map(|(m, c)| (m.clone(), *c)).collect(),
        }
    }

    /// Evaluate; `None` when a parameter is missing. Domain problems (log of a
    /// non-positive value, ...) yield NaN or infinities here; [`crate::model::Expr::eval`]
    /// reports them as errors.
    pub fn eval_with(&self, lookup: &mut dyn FnMut(&str) -> Option<f64>) -> Option<f64> {
        let mut sum = 0.0;
        for (m, c) in &self.terms {
            sum += c * m.eval_with(lookup)?;
        }
        Some(sum)
    }

    /// Largest absolute difference of coefficients relative to the larger magnitude, over
    /// the union of monomials; 0 for identical PMNFs, 1 when a monomial is missing on one
    /// side.
    pub fn max_relative_coefficient_difference(&self, other: &Pmnf) -> f64 {
        let mut worst: f64 = 0.0;
        for m in self.terms.keys().chain(other.terms.keys()) {
            let a = self.terms.get(m).copied().unwrap_or(0.0);
            let b = other.terms.get(m).copied().unwrap_or(0.0);
            let scale = a.abs().max(b.abs());
            if scale > 0.0 {
                worst = worst.max((a - b).abs() / scale);
            }
        }
        worst
    }
}

/// True when every exponent of `m` is a non-negative number: the terms Extra-P's PMNF uses.
pub fn is_extrap_monomial(m: &Monomial) -> bool {
    m.factors()
        .all(|(_, p)| !p.exp.is_negative() && !p.log.is_negative())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64, d: i64) -> Q {
        Q::new(n, d)
    }

    #[test]
    fn terms_merge_and_cancel() {
        let x = Pmnf::param("x");
        let p = x.add(&Pmnf::constant(3.0)).add(&x);
        assert_eq!(p.len(), 2);
        assert_eq!(p.sub(&p), Pmnf::zero());
    }

    #[test]
    fn product_adds_exponents_exactly() {
        let a = Pmnf::term(2.0, Monomial::power("x", q(1, 3), q(0, 1)));
        let b = Pmnf::term(3.0, Monomial::power("x", q(2, 3), q(1, 1)));
        let prod = a.mul(&b).unwrap();
        let (c, m) = prod.as_single_term().map(|(c, m)| (c, m.clone())).unwrap();
        assert_eq!(c, 6.0);
        assert_eq!(m.get("x"), Power::new(q(1, 1), q(1, 1)));
    }

    #[test]
    fn dominant_term_orders_by_exponent_then_log() {
        let p = Pmnf::from_terms([
            (5.0, Monomial::one()),
            (1.0, Monomial::power("x", q(1, 1), q(1, 1))),
            (9.0, Monomial::power("x", q(1, 1), q(0, 1))),
        ]);
        let d = p.dominant();
        assert_eq!(d.len(), 1);
        assert_eq!(
            d.terms().next().unwrap().1.get("x"),
            Power::new(q(1, 1), q(1, 1))
        );
    }

    #[test]
    fn incomparable_terms_are_both_dominant() {
        let p = Pmnf::from_terms([
            (1.0, Monomial::power("x", q(2, 1), q(0, 1))),
            (1.0, Monomial::power("y", q(2, 1), q(0, 1))),
            (1.0, Monomial::param("x")),
        ]);
        assert_eq!(p.dominant().len(), 2);
    }
}
