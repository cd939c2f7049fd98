//! Asymptotic behaviour of models: the leading part and the comparison of two models.
//!
//! Terms are ordered per parameter by polynomial exponent, then by log exponent
//! (`x^2 > x·log2(x)^2 > x·log2(x) > x`). With several parameters the order is partial:
//! `x^2` and `y^2` are incomparable, so a model can have several dominant terms.

use std::collections::BTreeMap;

use num_traits::{Signed, Zero};

use super::expr::Expr;
use super::number::Q;
use super::pmnf::{q_to_f64, Monomial, Pmnf};

/// How two models compare as their parameters grow.
#[derive(Clone, Debug, PartialEq)]
pub enum Growth {
    /// The first grows strictly slower.
    Slower,
    /// Same leading monomials; `ratio` = leading coefficient of the first over the second
    /// when all leading coefficients share one ratio.
    Same { ratio: Option<f64> },
    /// The first grows strictly faster.
    Faster,
    /// Neither dominates (e.g. `x^2` against `y^2`).
    Incomparable,
    /// The leading behaviour of one side could not be determined (e.g. a `sum` with
    /// symbolic bounds).
    Unknown,
}

impl Expr {
    /// The asymptotically leading part as a PMNF (the dominant terms), or `None` when it
    /// cannot be determined symbolically.
    pub fn leading(&self) -> Option<Pmnf> {
        let p = match self {
            Expr::Poly(p) => p.clone(),
            Expr::Add(v) => {
                let mut acc = Pmnf::zero();
                for e in v {
                    acc = acc.add(&e.leading()?);
                }
                acc
            }
            Expr::Mul(v) => {
                let mut acc = Pmnf::constant(1.0);
                for e in v {
                    acc = acc.mul(&e.leading()?)?.dominant();
                }
                acc
            }
            Expr::Div(a, b) => {
                let la = a.leading()?;
                let lb = b.leading()?;
                let (c, m) = lb.as_single_term()?;
                if c == 0.0 {
                    return None;
                }
                la.mul_term(1.0 / c, &m.pow(-Q::from_integer(1))?)?
            }
            Expr::Pow(a, q) => {
                let la = a.leading()?;
                match la.as_single_term() {
                    Some((c, m)) if c > 0.0 => Pmnf::term(super::pmnf::pow_q(c, *q), m.pow(*q)?),
                    _ if q.is_integer() && q.is_positive() && q.to_integer() <= 6 => {
                        let mut acc = la.clone();
                        for _ in 1..q.to_integer() {
                            acc = acc.mul(&la)?.dominant();
                        }
                        acc
                    }
                    _ => return None,
                }
            }
            Expr::Log2(a) => {
                let la = a.leading()?;
                let (c, m) = la.as_single_term()?;
                if c <= 0.0 {
                    return None;
                }
                if m.is_constant() {
                    Pmnf::constant(c.log2())
                } else if m.factors().all(|(_, p)| !p.exp.is_zero()) {
                    Pmnf::from_terms(m.factors().map(|(name, p)| {
                        (
                            q_to_f64(p.exp),
                            Monomial::power(name, Q::zero(), Q::from_integer(1)),
                        )
                    }))
                } else {
                    return None;
                }
            }
            Expr::Max(v) => extremum_leading(v, true)?,
            Expr::Min(v) => extremum_leading(v, false)?,
            Expr::Ceil(a) | Expr::Floor(a) => a.leading()?,
            Expr::Sum { .. } | Expr::PowE(_, _) => return None,
            // Where the condition grows without bound, the last piece is what remains.
            Expr::Piecewise { on, pieces, .. } => {
                let lo = on.leading()?;
                let (c, m) = lo.as_single_term()?;
                if m.is_constant() || c == 0.0 {
                    return None;
                }
                let piece = if c > 0.0 {
                    pieces.last()?
                } else {
                    pieces.first()?
                };
                piece.leading()?
            }
        };
        Some(p.dominant())
    }

    /// The dominant part, as a model (see [`Expr::leading`]).
    pub fn dominant(&self) -> Option<Expr> {
        self.leading().map(Expr::Poly)
    }
}

fn extremum_leading(v: &[Expr], is_max: bool) -> Option<Pmnf> {
    let leads: Vec<Pmnf> = if is_max {
        v.iter().map(Expr::leading).collect::<Option<_>>()?
    } else {
        // A minimum is at most each of its arguments, so the arguments whose growth is
        // known bound it: `min(1, p - 2^floor(log2(p)))` (a non-power-of-two correction
        // in a collective) grows at most like 1. With no known argument: unknown.
        let known: Vec<Pmnf> = v.iter().filter_map(Expr::leading).collect();
        if known.is_empty() {
            return None;
        }
        known
    };
    if is_max {
        // Union of all leading terms, keeping the larger coefficient per monomial.
        let mut best: BTreeMap<Monomial, f64> = BTreeMap::new();
        for l in &leads {
            for (c, m) in l.terms() {
                best.entry(m.clone())
                    .and_modify(|b| *b = b.max(c))
                    .or_insert(c);
            }
        }
        Some(Pmnf::from_terms(best.into_iter().map(|(m, c)| (c, m))).dominant())
    } else {
        // The slowest-growing argument, if there is one.
        let mut best: Option<Pmnf> = None;
        for l in leads {
            best = Some(match best {
                None => l,
                Some(b) => match compare_pmnf(&l, &b) {
                    Growth::Slower => l,
                    Growth::Faster => b,
                    Growth::Same { .. } => {
                        if l.terms().map(|(c, _)| c).sum::<f64>()
                            < b.terms().map(|(c, _)| c).sum::<f64>()
                        {
                            l
                        } else {
                            b
                        }
                    }
                    _ => return None,
                },
            });
        }
        best
    }
}

/// Compare two models asymptotically.
pub fn compare_growth(a: &Expr, b: &Expr) -> Growth {
    match (a.leading(), b.leading()) {
        (Some(la), Some(lb)) => compare_pmnf(&la, &lb),
        _ => Growth::Unknown,
    }
}

/// Compare the leading parts of two PMNFs.
pub fn compare_pmnf(a: &Pmnf, b: &Pmnf) -> Growth {
    let la = a.dominant();
    let lb = b.dominant();
    let ma: Vec<&Monomial> = la.terms().map(|(_, m)| m).collect();
    let mb: Vec<&Monomial> = lb.terms().map(|(_, m)| m).collect();
    if ma.is_empty() && mb.is_empty() {
        return Growth::Same { ratio: None };
    }
    if ma == mb {
        let ratios: Vec<f64> = la
            .terms()
            .zip(lb.terms())
            .map(|((ca, _), (cb, _))| ca / cb)
            .collect();
        let r0 = ratios[0];
        let same = ratios
            .iter()
            .all(|r| (r - r0).abs() <= 1e-9 * r0.abs().max(r.abs()));
        return Growth::Same {
            ratio: if same && r0.is_finite() {
                Some(r0)
            } else {
                None
            },
        };
    }
    let below = |xs: &[&Monomial], ys: &[&Monomial]| {
        !xs.is_empty()
            && xs
                .iter()
                .all(|x| ys.iter().any(|y| y.strictly_dominates(x)))
    };
    if ma.is_empty() || below(&ma, &mb) {
        Growth::Slower
    } else if mb.is_empty() || below(&mb, &ma) {
        Growth::Faster
    } else {
        Growth::Incomparable
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse::parse_model;

    fn m(s: &str) -> Expr {
        parse_model(s).unwrap()
    }

    #[test]
    fn qsort_beats_inc() {
        assert_eq!(
            compare_growth(&m("1034.17 * x * log2(x)"), &m("536.185 * x + 5422.97")),
            Growth::Faster
        );
        assert_eq!(
            compare_growth(&m("536.185 * x"), &m("x^(3/2)")),
            Growth::Slower
        );
    }

    #[test]
    fn same_order_reports_the_coefficient_ratio() {
        match compare_growth(&m("6 * x * log2(x) + x"), &m("2 * x * log2(x)")) {
            Growth::Same { ratio: Some(r) } => assert!((r - 3.0).abs() < 1e-12),
            g => panic!("{g:?}"),
        }
    }

    #[test]
    fn leading_of_max_and_division() {
        let e = m("max(5422.97 + 536.185 * x, 258.5425 * x * log2(x))");
        assert_eq!(e.leading().unwrap().to_string(), "258.5425 * x * log2(x)");
        let d = m("x^2 / (x + 1)");
        assert_eq!(d.leading().unwrap().to_string(), "x");
    }

    #[test]
    fn a_minimum_is_bounded_by_its_known_arguments() {
        let e = m("x * log2(p) + min(1, p - 2^floor(log2(p)))");
        assert_eq!(e.leading().unwrap().to_string(), "log2(p) * x");
        assert_eq!(m("min(3, log2(x + 1))").leading().unwrap().to_string(), "3");
    }

    #[test]
    fn multi_parameter_terms_can_be_incomparable() {
        assert_eq!(compare_growth(&m("x^2"), &m("y^2")), Growth::Incomparable);
        assert_eq!(m("x^2 + y^2 + x").leading().unwrap().len(), 2);
    }
}
