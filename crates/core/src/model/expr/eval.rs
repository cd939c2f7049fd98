//! Evaluating a model at a point: parameter values ([`Env`]), and errors that name the
//! part of the model outside its domain.

use std::collections::{BTreeMap, HashMap};

use num_traits::{Signed, Zero};

use super::tree::Expr;
use crate::model::pmnf::{pow_q, Pmnf};

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

impl Expr {
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
