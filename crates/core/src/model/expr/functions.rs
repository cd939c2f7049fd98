//! Functions of models, simplified as they are built: rational and general powers,
//! `log2`, max and min, ceil and floor, integer sums `Σ`, and segmented (piecewise) models.

use num_traits::{One, Signed, Zero};

use super::order::sort_canonical;
use super::tree::Expr;
use crate::model::number::{exponent_as_q, Q};
use crate::model::pmnf::{pow_q, q_to_f64, Monomial, Pmnf};

/// Largest number of terms a `sum(...)` with constant bounds is expanded into.
const MAX_SUM_EXPANSION: i64 = 64;
/// Largest integer power of a multi-term PMNF that is expanded.
const MAX_POLY_POWER: i64 = 6;

impl Expr {
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
}
