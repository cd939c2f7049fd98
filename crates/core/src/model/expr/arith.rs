//! Sums, products and quotients, simplified as they are built: PMNF parts combined, like
//! terms merged, single terms distributed into sums, quotients, max and min; and the
//! operators that delegate to them.

use num_traits::One;

use super::order::{cmp_structure, sort_canonical};
use super::tree::Expr;
use crate::model::number::Q;
use crate::model::pmnf::{Monomial, Pmnf, MAX_PRODUCT_TERMS};

// The smart constructors are named after the operations they build; the operator traits
// below delegate to them so `a + b` works too.
#[allow(clippy::should_implement_trait)]
impl Expr {
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
            Expr::Add(args)
                if p.len().saturating_mul(args.len()) <= MAX_PRODUCT_TERMS
                    && expansion_fits(p.len() + 1, &args) =>
            {
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
                }) <= MAX_PRODUCT_TERMS
                    && expansion_fits(other.node_count(), &args) =>
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
}

/// Whether distributing a factor of `factor_nodes` nodes over the sum `args` stays within
/// [`MAX_EXPANSION_NODES`]. The term-pair cap alone bounds each step, not the result: a
/// product of sums that each hold a polynomial and one other term doubles at every
/// factor (a 400-character model grew to 600 kB and took seconds to read).
fn expansion_fits(factor_nodes: usize, args: &[Expr]) -> bool {
    let sum_nodes: usize = 1 + args.iter().map(Expr::node_count).sum::<usize>();
    factor_nodes.saturating_mul(sum_nodes) <= MAX_EXPANSION_NODES
}

/// Largest size (nodes of one factor times nodes of the other) of a product that is
/// distributed over a sum; beyond it the product stays a product, like one past
/// [`MAX_PRODUCT_TERMS`].
pub const MAX_EXPANSION_NODES: usize = 4096;

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
