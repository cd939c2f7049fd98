//! What a components file may state about a model it gives as a string: its uncertainty
//! and the range it was measured over.
//!
//! ```toml
//! [components.qsort]
//! model = "12.5 + 1034.17 * x * log2(x)"
//! stderr = [3.1, 8.2]                 # one per term, in the order the model prints
//! measured = { x = [1000, 64000] }    # predictions beyond are flagged as extrapolation
//!
//! [components.sync]
//! model = "allreduce_ring(p, 8 * x)"
//! relative_error = 0.05               # the whole model, ±5% (one standard error)
//! ```
//!
//! `covariance = [[..], [..]]` gives the coefficients' whole covariance matrix instead
//! of `stderr` (as `perfcompose fit --json` writes it, in the order of its
//! `covariance_terms`). A component fitted from measurements gets both from its fit and
//! may state neither.

use std::collections::BTreeMap;

use toml::Spanned;

use crate::diag::{Diagnostic, Span};
use crate::model::Expr;
use crate::uncertainty::{Source, Uncertain, Uncertainty};

/// What a model states: the measured range of each parameter, and its uncertainty.
type Stated = (BTreeMap<String, [f64; 2]>, Option<Uncertainty>);

/// The keys as read.
pub(super) struct RawStated {
    pub relative_error: Option<Spanned<f64>>,
    pub stderr: Option<Spanned<Vec<f64>>>,
    pub covariance: Option<Spanned<Vec<Vec<f64>>>>,
    pub measured: Option<Spanned<BTreeMap<String, Vec<f64>>>>,
}

fn span<T>(s: &Spanned<T>) -> Span {
    Span::new(s.span().start, s.span().end)
}

impl RawStated {
    /// The spans of the uncertainty keys given, with their names.
    fn given(&self) -> Vec<(&'static str, Span)> {
        let mut v = Vec::new();
        if let Some(s) = &self.relative_error {
            v.push(("relative_error", span(s)));
        }
        if let Some(s) = &self.stderr {
            v.push(("stderr", span(s)));
        }
        if let Some(s) = &self.covariance {
            v.push(("covariance", span(s)));
        }
        v
    }

    /// Refuse keys that do not go together: two ways to state one uncertainty, or a
    /// stated uncertainty or range on a fitted component.
    pub fn check_keys(
        &self,
        origin: &str,
        source: &str,
        name: &str,
        fitted: bool,
    ) -> Result<(), Diagnostic> {
        let given = self.given();
        if fitted {
            let range = self.measured.as_ref().map(|m| ("measured", span(m)));
            if let Some((key, at)) = given.first().copied().or(range) {
                return Err(Diagnostic::new(
                    origin,
                    source,
                    at,
                    format!("component `{name}` is fitted from measurements: its `{key}` comes from the fit"),
                )
                .with_hint("remove it; `perfcompose fit --json FILE` shows what the fit gives"));
            }
        }
        if given.len() > 1 {
            return Err(Diagnostic::new(
                origin,
                source,
                given[1].1,
                format!(
                    "component `{name}` states its uncertainty twice (`{}` and `{}`)",
                    given[0].0, given[1].0
                ),
            )
            .with_hint("keep one of relative_error, stderr and covariance"));
        }
        Ok(())
    }

    /// The measured ranges and the uncertainty of the model `model` of a component.
    pub fn read(
        self,
        origin: &str,
        source: &str,
        name: &str,
        model: &Expr,
    ) -> Result<Stated, Diagnostic> {
        let err = |at: Span, msg: String| Diagnostic::new(origin, source, at, msg);
        let mut measured = BTreeMap::new();
        if let Some(m) = &self.measured {
            let over = model.params();
            if let Some(p) = m.get_ref().keys().find(|p| !over.contains(*p)) {
                let names: Vec<&str> = over.iter().map(String::as_str).collect();
                let d = err(
                    span(m),
                    if names.is_empty() {
                        format!("component `{name}`: measured range of `{p}`, and the model `{model}` has no parameters")
                    } else {
                        format!(
                            "component `{name}`: measured range of `{p}`, and the model is over {}",
                            names.join(", ")
                        )
                    },
                );
                return Err(match names.first() {
                    Some(first) => d.with_hint(format!(
                        "name the model's parameters, e.g. measured = {{ {first} = [1000, 64000] }}"
                    )),
                    None => d.with_hint(
                        "a model without parameters is the same everywhere: remove `measured`",
                    ),
                });
            }
            for (p, range) in m.get_ref() {
                match range.as_slice() {
                    [lo, hi] if lo.is_finite() && hi.is_finite() && lo <= hi => {
                        measured.insert(p.clone(), [*lo, *hi]);
                    }
                    _ => {
                        return Err(err(
                            span(m),
                            format!("component `{name}`: measured range of `{p}` must be [smallest, largest], two finite numbers"),
                        )
                        .with_hint("e.g. measured = { x = [1000, 64000] }"))
                    }
                }
            }
        }
        let terms = || -> Vec<String> {
            model
                .as_pmnf()
                .map(|p| {
                    p.terms()
                        .map(|(c, m)| {
                            Expr::Poly(crate::model::Pmnf::term(c, m.clone())).to_string()
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let uncertainty = if let Some(r) = &self.relative_error {
            let v = *r.get_ref();
            if !(v.is_finite() && v >= 0.0) {
                return Err(err(
                    span(r),
                    format!("component `{name}`: relative_error must be a finite number ≥ 0"),
                )
                .with_hint("0.05 means the model is known to ±5% (one standard error)"));
            }
            (v > 0.0).then(|| Uncertainty::relative(name, model, v))
        } else if let Some(s) = &self.stderr {
            let t = terms();
            let at = span(s);
            if t.is_empty() {
                return Err(err(at, format!("component `{name}`: stderr needs a model that is a sum of terms (PMNF), and `{model}` is not")).with_hint("state relative_error = R instead: it applies to any model"));
            }
            if s.get_ref().len() != t.len() {
                return Err(err(
                    at,
                    format!(
                        "component `{name}`: stderr has {} values for the model's {} terms",
                        s.get_ref().len(),
                        t.len()
                    ),
                )
                .with_hint(format!("one per term, in this order: {}", t.join(", "))));
            }
            if s.get_ref().iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(err(
                    at,
                    format!("component `{name}`: a standard error must be a finite number ≥ 0"),
                ));
            }
            let n = t.len();
            let cov = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i == j { s.get_ref()[i].powi(2) } else { 0.0 })
                        .collect()
                })
                .collect();
            Uncertain::new(name, model, cov).map(|u| Uncertainty::normal(&u, Source::Stated))
        } else if let Some(c) = &self.covariance {
            let t = terms();
            let at = span(c);
            let m = c.get_ref();
            let n = t.len();
            if t.is_empty() {
                return Err(err(at, format!("component `{name}`: covariance needs a model that is a sum of terms (PMNF), and `{model}` is not")).with_hint("state relative_error = R instead: it applies to any model"));
            }
            if m.len() != n || m.iter().any(|r| r.len() != n) {
                return Err(err(
                    at,
                    format!("component `{name}`: covariance must be {n}×{n}, one row and column per term of the model"),
                )
                .with_hint(format!("the terms, in order: {}", t.join(", "))));
            }
            let bad = m.iter().flatten().any(|v| !v.is_finite())
                || (0..n).any(|i| m[i][i] < 0.0)
                || (0..n).any(|i| {
                    (0..n).any(|j| {
                        (m[i][j] - m[j][i]).abs() > 1e-9 * (m[i][i] * m[j][j]).sqrt().max(1e-300)
                    })
                });
            if bad {
                return Err(err(at, format!("component `{name}`: a covariance matrix is symmetric, with finite entries and a diagonal ≥ 0")));
            }
            Uncertain::new(name, model, m.clone()).map(|u| Uncertainty::normal(&u, Source::Stated))
        } else {
            None
        };
        Ok((measured, uncertainty))
    }
}
