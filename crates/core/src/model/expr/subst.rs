//! Substituting a model for a parameter, re-simplifying, with bound variables of sums
//! renamed to avoid capture.

use super::tree::Expr;
use crate::model::pmnf::{Monomial, Pmnf, Power};

impl Expr {
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
}

fn fresh_name(base: &str, a: &Expr, b: &Expr) -> String {
    (1..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| !a.mentions(n) && !b.mentions(n))
        .unwrap_or_else(|| format!("{base}_"))
}
