//! What `perfcompose fit` does with the experiments of a file, and its JSON: every series
//! fitted with the modeler (or with each user-given basis), and each fit in the schema of
//! `docs/fitting.md`. The command and the Python package both call these, so that there
//! is one fitting loop and one JSON shape.
//!
//! ```
//! use perfcompose_core::fit::output::{fit_experiments, models_json, Plan};
//! use perfcompose_core::fit::{modeler, FitOptions, Measure};
//! use perfcompose_core::measure::{jsonl, ReadOptions};
//! let text: String = [4.0, 8.0, 16.0, 32.0, 64.0]
//!     .iter()
//!     .map(|x: &f64| format!("{{\"params\":{{\"x\":{x}}},\"callpath\":\"a\",\"value\":{}}}\n", 2.0 * x))
//!     .collect();
//! let exp = jsonl::read_str("<data>", &text, &ReadOptions::default()).unwrap();
//! let plan = Plan {
//!     modeler: modeler("perfcompose").unwrap(),
//!     bases: &[],
//!     options: &FitOptions::default(),
//! };
//! let fits = fit_experiments("<data>", &[exp], &plan, &mut [], &mut || {}).unwrap();
//! let json = models_json(&fits, "perfcompose", Measure::Minimum);
//! let model = &json["models"][0];
//! assert_eq!(model["callpath"], "a");
//! assert_eq!(model["parameters"], serde_json::json!(["x"]));
//! assert_eq!(model["terms"][0]["factors"][0]["parameter"], "x");
//! ```

use serde_json::{json, Value};

use super::{fit_basis, Fit, FitError, FitOptions, Measure, Modeler};
use crate::diag::Diagnostic;
use crate::measure::{Experiment, SeriesKey};
use crate::model::{format_q, Expr, Pmnf, Q};

/// One fitted series, with what the report says about where it came from.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// The file (or other input) it was read from.
    pub file: String,
    pub key: SeriesKey,
    /// The basis as the user wrote it; `None` for the modeler's fit.
    pub basis: Option<String>,
    pub fit: Fit,
    /// The series' parameters, in a file that holds several sets of them.
    pub over: Option<String>,
}

/// How series are fitted: by the modeler, or (when `bases` is not empty) by each basis.
pub struct Plan<'a> {
    pub modeler: &'a dyn Modeler,
    /// Each basis as written, and parsed ([`super::parse_basis`]).
    pub bases: &'a [(String, Vec<(String, Expr)>)],
    pub options: &'a FitOptions,
}

/// `callpath / metric`, with `<empty>` for an empty name.
pub fn show_key(key: &SeriesKey) -> String {
    let show = |s: &str| {
        if s.is_empty() {
            "<empty>".to_string()
        } else {
            s.to_string()
        }
    };
    format!("{} / {}", show(&key.callpath), show(&key.metric))
}

/// Fit every series of `sets` (the experiments read from `origin`) as `plan` says.
/// `fitted[i]` is set when basis `i` was fitted to some series (a basis goes, in a file of
/// several parameter sets, only to the series over the parameters it uses); `tick` is
/// called once per series and basis, for a progress bar. A series that cannot be fitted
/// is an error naming `origin` and the series.
pub fn fit_experiments(
    origin: &str,
    sets: &[Experiment],
    plan: &Plan<'_>,
    fitted: &mut [bool],
    tick: &mut dyn FnMut(),
) -> Result<Vec<Fitted>, Diagnostic> {
    let several = sets.len() > 1;
    let mut rows = Vec::new();
    for exp in sets {
        let over = several.then(|| exp.parameters.join(", "));
        for (key, points) in &exp.series {
            let fail =
                |e: FitError| Diagnostic::whole(origin, format!("series {}: {e}", show_key(key)));
            let row = |basis: Option<&String>, fit: Fit| Fitted {
                file: origin.to_string(),
                key: key.clone(),
                basis: basis.cloned(),
                fit,
                over: over.clone(),
            };
            if plan.bases.is_empty() {
                let fit = plan
                    .modeler
                    .fit(&exp.parameters, points, plan.options)
                    .map_err(fail)?;
                rows.push(row(None, fit));
                tick();
            }
            for (i, (text, basis)) in plan.bases.iter().enumerate() {
                let foreign = |(_, e): &(String, Expr)| {
                    e.params().iter().any(|p| !exp.parameters.contains(p))
                };
                if several && basis.iter().any(foreign) {
                    tick();
                    continue;
                }
                let fit = fit_basis(&exp.parameters, points, basis, plan.options).map_err(fail)?;
                if let Some(f) = fitted.get_mut(i) {
                    *f = true;
                }
                rows.push(row(Some(text), fit));
                tick();
            }
        }
    }
    Ok(rows)
}

/// `{"models": [...]}`: the whole `fit --json` document, one entry per fit
/// ([`fitted_json`]).
pub fn models_json(rows: &[Fitted], modeler: &str, measure: Measure) -> Value {
    let models: Vec<Value> = rows
        .iter()
        .map(|r| fitted_json(r, modeler, measure))
        .collect();
    json!({ "models": models })
}

/// An exponent for JSON: integers as numbers (`1`), fractions as exact strings for the
/// polynomial exponent (`"3/2"`), as the schema says.
fn q_json(q: Q) -> Value {
    if q.is_integer() {
        json!(*q.numer())
    } else {
        json!(format_q(q))
    }
}

/// The constant, its standard error and the terms of a PMNF, in the schema's shape;
/// `se` yields the standard errors in the PMNF's term order (constant first).
fn pmnf_json(p: &Pmnf, se: &mut dyn Iterator<Item = Option<f64>>) -> (f64, Value, Vec<Value>) {
    let mut constant = 0.0;
    let mut constant_se = Value::Null;
    let mut terms = Vec::new();
    for (c, m) in p.terms() {
        let e = se.next().flatten();
        if m.is_constant() {
            constant = c;
            constant_se = json!(e);
            continue;
        }
        let factors: Vec<Value> = m
            .factors()
            .map(|(name, pw)| {
                json!({
                    "parameter": name,
                    "exponent": format_q(pw.exp),
                    "log_exponent": q_json(pw.log),
                })
            })
            .collect();
        terms.push(json!({"coefficient": c, "std_error": e, "factors": factors}));
    }
    (constant, constant_se, terms)
}

/// One fit in the schema of `docs/fitting.md`; `modeler` is the modeler's name (a basis
/// fit says `basis`), `measure` the statistic the fit was made on.
pub fn fitted_json(r: &Fitted, modeler: &str, measure: Measure) -> Value {
    let fit = &r.fit;
    let s = &fit.stats;
    let mut constant = 0.0;
    let mut constant_se = Value::Null;
    let mut terms = Vec::new();
    let mut segments = None;
    if let Some(p) = fit.pmnf() {
        let mut se: Box<dyn Iterator<Item = Option<f64>>> = if r.basis.is_none() {
            // Coefficients in the statistics follow the PMNF's term order, constant first.
            Box::new(s.coefficients.iter().map(|c| c.std_error))
        } else {
            Box::new(std::iter::repeat(None))
        };
        (constant, constant_se, terms) = pmnf_json(p, &mut *se);
        if r.basis.is_some() {
            constant_se = Value::Null;
        }
    } else if let Expr::Piecewise { breaks, pieces, .. } = &fit.model {
        // A segmented model: every piece in the schema's shape, and the last one (the
        // piece that holds for large values) as the top-level constant and terms.
        let mut se = s.coefficients.iter().map(|c| c.std_error);
        let mut out = Vec::new();
        for (i, piece) in pieces.iter().enumerate() {
            let Some(p) = piece.as_pmnf() else { continue };
            let (c, c_se, t) = pmnf_json(p, &mut se);
            out.push(json!({
                "from": if i == 0 { Value::Null } else { json!(breaks[i - 1]) },
                "to": breaks.get(i),
                "model": piece.extrap(),
                "constant": c,
                "constant_std_error": c_se.clone(),
                "terms": t.clone(),
            }));
            (constant, constant_se, terms) = (c, c_se, t);
        }
        segments = Some(out);
    }
    let mut out = json!({
        "callpath": r.key.callpath,
        "metric": r.key.metric,
        "parameters": fit.parameters,
        "model": fit.model.extrap(),
        "constant": constant,
        "terms": terms,
        "rss": finite(s.rss),
        "smape": finite(s.smape),
        "ar2": finite(s.ar2),
        "file": r.file,
        "modeler": if r.basis.is_some() { "basis" } else { modeler },
        "measure": measure.name(),
        "r2": finite(s.r2),
        "constant_std_error": constant_se,
        "points": fit.points.iter().map(|p| json!({
            "coordinate": p.coordinate,
            "value": p.value,
            "predicted": p.predicted,
            "cv": p.cv,
        })).collect::<Vec<_>>(),
        "warnings": fit.warnings,
    });
    if let Some(segments) = segments {
        out["segments"] = json!(segments);
    }
    // The coefficients' covariance, in the order `covariance_terms` names (constant
    // first); null without residual degrees of freedom.
    out["covariance_terms"] = json!(s.coefficients.iter().map(|c| &c.term).collect::<Vec<_>>());
    out["covariance"] = match &s.covariance {
        Some(m) => json!(m
            .iter()
            .map(|row| row.iter().map(|v| finite(*v)).collect::<Vec<_>>())
            .collect::<Vec<_>>()),
        None => Value::Null,
    };
    if let Some(b) = &r.basis {
        out["basis"] = json!(s
            .coefficients
            .iter()
            .map(|c| json!({"function": c.term, "coefficient": c.value, "std_error": c.std_error}))
            .collect::<Vec<_>>());
        out["basis_text"] = json!(b);
    }
    out
}

/// JSON has no NaN: statistics that are undefined (adjusted R² without residual degrees
/// of freedom) become null.
fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}
