//! Fitting user-given basis functions (`--basis "1, N, M"`), as the divide-and-conquer paper fits its
//! per-block cost functions: when the form of a cost is known (`a + b·N + c·M`), only the
//! coefficients are unknown, and ordinary linear least squares over the basis gives them,
//! with R² telling how well that coefficient set explains the data.
//!
//! Basis functions are model expressions ([`crate::model::parse_model`]), so anything the
//! model language says — `N * log2(N)`, `M^(3/2)`, `max(N, M)` — is a basis function.

use super::data::prepare;
use super::lsq::lstsq;
use super::{point_stats, statistics, Fit, FitError, FitOptions};
use crate::diag::Diagnostic;
use crate::measure::Point;
use crate::model::{parse_model_in, Expr};

/// The fit of one basis: a [`Fit`] whose coefficients are labelled by the basis
/// functions as written.
pub type BasisFit = Fit;

/// Split `text` at top-level commas and parse each piece as a model; errors point into
/// `text` (origin `--basis`).
pub fn parse_basis(text: &str) -> Result<Vec<(String, Expr)>, Diagnostic> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = text.as_bytes();
    for i in 0..=bytes.len() {
        let end = i == bytes.len();
        if !end {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
        }
        if end || (bytes[i] == b',' && depth == 0) {
            let piece = &text[start..i];
            let trimmed = piece.trim();
            if trimmed.is_empty() {
                return Err(Diagnostic::new(
                    "--basis",
                    text,
                    crate::diag::Span::at(start.min(text.len().saturating_sub(1))),
                    "empty basis function",
                )
                .with_hint("write the functions separated by commas, e.g. \"1, N, M\""));
            }
            let offset = start + (piece.len() - piece.trim_start().len());
            let e =
                parse_model_in("--basis", trimmed).map_err(|d| d.embed("--basis", text, offset))?;
            out.push((trimmed.to_string(), e));
            start = i + 1;
        }
    }
    Ok(out)
}

/// Fit `Σ c_i · basis_i` to the points by ordinary least squares.
pub fn fit_basis(
    parameters: &[String],
    points: &[Point],
    basis: &[(String, Expr)],
    options: &FitOptions,
) -> Result<BasisFit, FitError> {
    if basis.is_empty() {
        return Err(FitError::Basis("the basis is empty".into()));
    }
    for (text, e) in basis {
        if let Some(p) = e.params().into_iter().find(|p| !parameters.contains(p)) {
            return Err(FitError::Basis(format!(
                "basis function `{text}` uses `{p}`, which is not a parameter of the measurements ({})",
                parameters.join(", ")
            )));
        }
    }
    let data = prepare(parameters, points, options)?;
    if data.len() < basis.len() {
        return Err(FitError::TooFewPoints {
            got: data.len(),
            need: basis.len(),
            what: format!("a basis of {} functions", basis.len()),
        });
    }
    let mut columns = Vec::with_capacity(basis.len());
    for (text, e) in basis {
        let mut col = Vec::with_capacity(data.len());
        for c in &data.coords {
            let env: Vec<(String, f64)> =
                parameters.iter().cloned().zip(c.iter().copied()).collect();
            let v = e.eval(&env).map_err(|err| {
                FitError::Basis(format!(
                    "basis function `{text}` cannot be evaluated: {err}"
                ))
            })?;
            col.push(v);
        }
        columns.push(col);
    }
    let refs: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
    let s = lstsq(&refs, &data.y, None, false).map_err(|_| {
        FitError::Basis(
            "the basis functions are linearly dependent on these points (or one is zero everywhere)"
                .into(),
        )
    })?;
    let model = Expr::sum_of(
        basis
            .iter()
            .zip(&s.coef)
            .map(|((_, e), &c)| Expr::mul(Expr::constant(c), e.clone()))
            .collect(),
    );
    let labels = basis.iter().map(|(t, _)| t.clone()).collect();
    let (stats, predicted) = statistics(&data, labels, &columns, &s.coef, None);
    Ok(Fit {
        parameters: parameters.to_vec(),
        model,
        stats,
        points: point_stats(&data, &predicted),
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coefficients from exact data agree to this relative error.
    const EXACT_TOL: f64 = 1e-9;

    #[test]
    fn seed_004_style_block_cost() {
        let basis = parse_basis("1, N, M").unwrap();
        let params = vec!["N".to_string(), "M".to_string()];
        let mut points = Vec::new();
        for n in [1e3, 2e3, 4e3, 8e3] {
            for m in [10.0, 20.0, 40.0] {
                points.push(Point::new(vec![n, m], vec![5.0 + 0.25 * n + 3.0 * m]));
            }
        }
        let fit = fit_basis(&params, &points, &basis, &FitOptions::default()).unwrap();
        let c: Vec<f64> = fit.stats.coefficients.iter().map(|c| c.value).collect();
        for (got, want) in c.iter().zip([5.0, 0.25, 3.0]) {
            assert!(
                (got - want).abs() <= EXACT_TOL * want.abs().max(1.0),
                "{got}"
            );
        }
        assert!((fit.stats.r2 - 1.0).abs() < EXACT_TOL);
        assert_eq!(fit.stats.coefficients[2].term, "M");
    }

    #[test]
    fn basis_errors_are_clear() {
        let d = parse_basis("1, , M").unwrap_err();
        assert!(d.message.contains("empty"));
        let d = parse_basis("1, N +").unwrap_err();
        assert_eq!(d.origin, "--basis");
        assert!(d.span.start >= 3);
        let params = vec!["N".to_string()];
        let pts = vec![
            Point::new(vec![1.0], vec![1.0]),
            Point::new(vec![2.0], vec![2.0]),
        ];
        let e = fit_basis(
            &params,
            &pts,
            &parse_basis("1, Q").unwrap(),
            &FitOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("`Q`"), "{e}");
        let e = fit_basis(
            &params,
            &pts,
            &parse_basis("N, 2*N").unwrap(),
            &FitOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("dependent"), "{e}");
        let e = fit_basis(
            &params,
            &pts[..1],
            &parse_basis("1, N").unwrap(),
            &FitOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("too few"), "{e}");
        assert!(parse_basis("max(N, 1), N").unwrap().len() == 2);
    }
}
