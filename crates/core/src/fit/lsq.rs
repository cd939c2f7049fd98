//! Weighted linear least squares on small dense problems.
//!
//! Every modeler reduces to `min_β Σ_k w_k (y_k − Σ_j A_kj β_j)²` with a handful of
//! columns (1 to ~8) and a few to a few hundred rows. The columns are term values such as
//! `x^3` at `x = 2^30` next to a constant column, so their scales differ by many orders of
//! magnitude: we scale every column to unit length before a Householder QR (nalgebra), which
//! keeps the problem well conditioned where plain normal equations lose digits, and we check
//! the rank ourselves on `R`'s diagonal because QR returns *some* answer for a rank-deficient
//! matrix without saying so.

// `!(a > b)` is deliberate throughout: a NaN must fail the check, which `a <= b` would
// let through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// Index loops mirror the textbook triangular solves they implement.
#![allow(clippy::needless_range_loop)]

use nalgebra::{DMatrix, DVector};

/// Relative size of `R`'s smallest diagonal entry (after column scaling) below which the
/// columns are treated as linearly dependent.
pub const RANK_TOLERANCE: f64 = 1e-10;

/// Why a least-squares problem has no unique solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LstsqError {
    /// Fewer rows than columns.
    Underdetermined,
    /// A column is zero, non-finite, or a combination of the others.
    RankDeficient,
}

/// The solution of one weighted least-squares problem.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Coefficients, one per column.
    pub coef: Vec<f64>,
    /// Weighted residual sum of squares `Σ w_k r_k²`.
    pub wrss: f64,
    /// `(AᵀWA)⁻¹` (unscaled covariance of the coefficients), when requested.
    pub cov: Option<Vec<Vec<f64>>>,
}

/// Solve the weighted problem given column-major `columns` (each of length `y.len()`).
/// `weights` of `None` means all ones. With `want_cov` also returns `(AᵀWA)⁻¹`, from which
/// the caller scales standard errors by its own variance estimate.
pub fn lstsq(
    columns: &[&[f64]],
    y: &[f64],
    weights: Option<&[f64]>,
    want_cov: bool,
) -> Result<Solution, LstsqError> {
    let n = y.len();
    let p = columns.len();
    if p == 0 {
        let wrss = (0..n)
            .map(|k| weights.map_or(1.0, |w| w[k]) * y[k] * y[k])
            .sum();
        return Ok(Solution {
            coef: Vec::new(),
            wrss,
            cov: want_cov.then(Vec::new),
        });
    }
    if n < p {
        return Err(LstsqError::Underdetermined);
    }
    let sqrt_w: Vec<f64> = (0..n)
        .map(|k| weights.map_or(1.0, |w| w[k].sqrt()))
        .collect();
    let mut scale = vec![0.0; p];
    let mut a = DMatrix::<f64>::zeros(n, p);
    for (j, col) in columns.iter().enumerate() {
        let mut norm2 = 0.0;
        for k in 0..n {
            let v = col[k] * sqrt_w[k];
            a[(k, j)] = v;
            norm2 += v * v;
        }
        let norm = norm2.sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(LstsqError::RankDeficient);
        }
        scale[j] = norm;
        for k in 0..n {
            a[(k, j)] /= norm;
        }
    }
    let b = DVector::from_iterator(n, (0..n).map(|k| y[k] * sqrt_w[k]));
    let qr = a.qr();
    let r = qr.r();
    let max_diag = (0..p).map(|i| r[(i, i)].abs()).fold(0.0, f64::max);
    if (0..p).any(|i| !(r[(i, i)].abs() > RANK_TOLERANCE * max_diag)) {
        return Err(LstsqError::RankDeficient);
    }
    let mut qtb = b.clone();
    qr.q_tr_mul(&mut qtb);
    let mut z = vec![0.0; p];
    for i in (0..p).rev() {
        let mut s = qtb[i];
        for j in i + 1..p {
            s -= r[(i, j)] * z[j];
        }
        z[i] = s / r[(i, i)];
    }
    // The residual is what QR leaves below the first p rows of Qᵀb.
    let wrss: f64 = (p..n).map(|k| qtb[k] * qtb[k]).sum();
    let coef: Vec<f64> = (0..p).map(|j| z[j] / scale[j]).collect();
    if coef.iter().any(|c| !c.is_finite()) {
        return Err(LstsqError::RankDeficient);
    }
    let cov = want_cov.then(|| {
        // (AᵀWA)⁻¹ = S⁻¹ R⁻¹ R⁻ᵀ S⁻¹ for the scaled A = Q R, S = diag(scale).
        let mut rinv = vec![vec![0.0; p]; p];
        for c in 0..p {
            for i in (0..=c).rev() {
                let mut s = if i == c { 1.0 } else { 0.0 };
                for j in i + 1..=c {
                    s -= r[(i, j)] * rinv[j][c];
                }
                rinv[i][c] = s / r[(i, i)];
            }
        }
        let mut cov = vec![vec![0.0; p]; p];
        for i in 0..p {
            for j in 0..p {
                let s: f64 = (i.max(j)..p).map(|k| rinv[i][k] * rinv[j][k]).sum();
                cov[i][j] = s / (scale[i] * scale[j]);
            }
        }
        cov
    });
    Ok(Solution { coef, wrss, cov })
}

/// numpy's default `rcond` for `numpy.linalg.lstsq(A, b, None)`: machine epsilon times
/// the larger dimension of `A`.
pub fn numpy_default_rcond(rows: usize, cols: usize) -> f64 {
    f64::EPSILON * rows.max(cols) as f64
}

/// LAPACK's relative machine precision (`dlamch('E')`, 2⁻⁵³): the threshold `gelsd` uses
/// when numpy passes `rcond = -1`.
pub const LAPACK_EPS: f64 = f64::EPSILON / 2.0;

/// What `numpy.linalg.lstsq(A, y, rcond)` (LAPACK's `gelsd`) answers when it treats the
/// unweighted, *unscaled* `A` as rank deficient: singular values at or below
/// `rcond · σ_max` count as zero and the minimum-norm solution of the rest is returned.
/// `None` when every singular value is above that (the full-rank solution, which
/// [`lstsq`] computes more accurately, is then the answer).
///
/// Extra-P fits this way, so on wide-range data — a column such as `x^(5/2) · log2(x)²`
/// at `x = 2^18`, about 10¹⁶, beside the constant column — its constant coefficient
/// silently becomes ~0 and the hypothesis is a line through the origin. The
/// Extra-P-compatible modeler must do the same to pick what Extra-P picks.
pub fn numpy_truncated(columns: &[&[f64]], y: &[f64], rcond: f64) -> Option<Vec<f64>> {
    let n = y.len();
    let p = columns.len();
    if p == 0
        || n == 0
        || columns
            .iter()
            .flat_map(|c| c.iter())
            .any(|v| !v.is_finite())
    {
        return None;
    }
    let a = DMatrix::from_fn(n, p, |k, j| columns[j][k]);
    let svd = a.svd(true, true);
    let (u, v_t) = (svd.u.as_ref()?, svd.v_t.as_ref()?);
    let sigma = &svd.singular_values;
    let max = sigma.iter().copied().fold(0.0, f64::max);
    if !(max > 0.0) || sigma.iter().all(|&s| s > rcond * max) {
        return None;
    }
    let b = DVector::from_column_slice(y);
    let mut x = vec![0.0; p];
    for (i, &s) in sigma.iter().enumerate() {
        if !(s > rcond * max) {
            continue;
        }
        let ub = u.column(i).dot(&b) / s;
        for (j, xj) in x.iter_mut().enumerate() {
            *xj += v_t[(i, j)] * ub;
        }
    }
    Some(x)
}

/// [`numpy_truncated`] for the line `y ≈ c0 + c1·t` (columns `1` and `t`) from its sums,
/// in closed form: `m` points, `s1 = Σt`, `s2 = Σt²`, `stt = Σ(t − t̄)²`, `sy = Σy`,
/// `sty = Σt·y`. The eigenvalues of `AᵀA` give the singular values exactly
/// (`λ₂ = det/λ₁` with `det = m·stt` keeps the small one accurate); the minimum-norm
/// rank-one solution is `v₁ (v₁ᵀ Aᵀy) / λ₁`. Returns `(c0, c1)` when numpy would
/// truncate, `None` otherwise.
pub fn numpy_truncated_line(
    m: f64,
    s1: f64,
    s2: f64,
    stt: f64,
    sy: f64,
    sty: f64,
    rcond: f64,
) -> Option<(f64, f64)> {
    let half = (s2 - m) / 2.0;
    let l1 = (m + s2) / 2.0 + (half * half + s1 * s1).sqrt();
    if !(l1 > 0.0) || !l1.is_finite() {
        return None;
    }
    let l2 = (m * stt).max(0.0) / l1;
    // σ₂/σ₁ = sqrt(λ₂/λ₁) ≤ rcond.
    if l2 > rcond * rcond * l1 {
        return None;
    }
    let (v0, v1) = (s1, l1 - m);
    let norm = v0.hypot(v1);
    if !(norm > 0.0) {
        return None;
    }
    let (v0, v1) = (v0 / norm, v1 / norm);
    let k = (v0 * sy + v1 * sty) / l1;
    Some((v0 * k, v1 * k))
}

/// Weighted affine fit `y ≈ a + b·t` in closed form on weighted-centred data; the hot
/// loop of the hypothesis searches (thousands of these per region). Centring first keeps
/// it accurate where the uncentred normal equations would not be; the rank test mirrors
/// [`lstsq`]'s. Returns `(a, b, wrss)`.
pub fn affine(t: &[f64], y: &[f64], w: &[f64]) -> Option<(f64, f64, f64)> {
    let n = y.len();
    let (mut sw, mut st, mut sy) = (0.0, 0.0, 0.0);
    for k in 0..n {
        sw += w[k];
        st += w[k] * t[k];
        sy += w[k] * y[k];
    }
    if !(sw > 0.0) {
        return None;
    }
    let (tm, ym) = (st / sw, sy / sw);
    let (mut stt, mut sty, mut syy, mut t2) = (0.0, 0.0, 0.0, 0.0);
    for k in 0..n {
        let dt = t[k] - tm;
        let dy = y[k] - ym;
        stt += w[k] * dt * dt;
        sty += w[k] * dt * dy;
        syy += w[k] * dy * dy;
        t2 += w[k] * t[k] * t[k];
    }
    if !(stt > RANK_TOLERANCE * RANK_TOLERANCE * t2) || !stt.is_finite() {
        return None;
    }
    let b = sty / stt;
    let a = ym - b * tm;
    let wrss = (syy - b * sty).max(0.0);
    Some((a, b, wrss))
}

/// Weighted mean of `y` and the weighted residual sum of squares around it.
pub fn constant(y: &[f64], w: &[f64]) -> (f64, f64) {
    let sw: f64 = w.iter().sum();
    let m = y.iter().zip(w).map(|(y, w)| y * w).sum::<f64>() / sw;
    let rss = y.iter().zip(w).map(|(y, w)| w * (y - m) * (y - m)).sum();
    (m, rss)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coefficients recovered from exact data agree to this relative error.
    const EXACT_TOL: f64 = 1e-9;

    #[test]
    fn wide_range_polynomial_is_recovered() {
        let x: Vec<f64> = (0..8).map(|k| 2f64.powi(4 * k)).collect();
        let ones = vec![1.0; x.len()];
        let x2: Vec<f64> = x.iter().map(|x| x * x).collect();
        let y: Vec<f64> = x.iter().map(|x| 3.0 + 0.5 * x + 1e-7 * x * x).collect();
        // Relative weights: with plain ones the constant would drown in values near 1e10.
        let w: Vec<f64> = y.iter().map(|y| 1.0 / (y * y)).collect();
        let s = lstsq(&[&ones, &x, &x2], &y, Some(&w), true).unwrap();
        for (got, want) in s.coef.iter().zip([3.0, 0.5, 1e-7]) {
            assert!((got - want).abs() <= EXACT_TOL * want, "{got} vs {want}");
        }
    }

    #[test]
    fn dependent_columns_are_reported() {
        let a = [1.0, 2.0, 3.0];
        let b = [2.0, 4.0, 6.0];
        assert_eq!(
            lstsq(&[&a, &b], &[1.0, 2.0, 3.0], None, false).unwrap_err(),
            LstsqError::RankDeficient
        );
        assert_eq!(
            lstsq(&[&a, &b], &[1.0], None, false).unwrap_err(),
            LstsqError::Underdetermined
        );
    }

    #[test]
    fn numpy_truncation_matches_numpy_on_wide_range_columns() {
        // numpy 1.26.4 (OpenBLAS), `numpy.linalg.lstsq(A, b, None)` with A = [1, t],
        // t = x^(5/2)·log2(x)², x = 2^10..2^18, b = 3e9 + t: rank 1, σ₂/σ₁ = 2.39e-16,
        // solution [1.01529132e-16, 1.00000030].
        let x: Vec<f64> = (10..=18).map(|k| 2f64.powi(k)).collect();
        let t: Vec<f64> = x.iter().map(|x| x.powf(2.5) * x.log2().powi(2)).collect();
        let y: Vec<f64> = t.iter().map(|t| 3e9 + t).collect();
        let ones = vec![1.0; x.len()];
        let rcond = numpy_default_rcond(x.len(), 2);
        let full = numpy_truncated(&[&ones, &t], &y, rcond).expect("truncated");
        let m = x.len() as f64;
        let s1: f64 = t.iter().sum();
        let tm = s1 / m;
        let line = numpy_truncated_line(
            m,
            s1,
            t.iter().map(|t| t * t).sum(),
            t.iter().map(|t| (t - tm) * (t - tm)).sum(),
            y.iter().sum(),
            t.iter().zip(&y).map(|(t, y)| t * y).sum(),
            rcond,
        )
        .expect("truncated");
        // numpy's answer to its printed digits; the SVD path to rounding of the tiny constant.
        const NUMPY_DIGITS: f64 = 1e-8;
        assert!((line.1 - 1.00000030).abs() < NUMPY_DIGITS, "{line:?}");
        assert!(
            (line.0 - 1.01529132e-16).abs() < NUMPY_DIGITS * 1e-16,
            "{line:?}"
        );
        assert!((full[1] - 1.00000030).abs() < NUMPY_DIGITS, "{full:?}");
        assert!(full[0].abs() < 1e-14, "{full:?}");
        // x^2·log2(x)² on the same points: σ₂/σ₁ = 1.19e-13, full rank for numpy.
        let t2: Vec<f64> = x.iter().map(|x| x * x * x.log2().powi(2)).collect();
        assert!(numpy_truncated(&[&ones, &t2], &y, rcond).is_none());
        // A well-scaled problem is never truncated.
        assert!(numpy_truncated(&[&ones, &x], &y, LAPACK_EPS).is_none());
    }

    #[test]
    fn covariance_matches_textbook_line_fit() {
        // For y = a + b t with unit weights, var(b) = σ² / Σ(t - t̄)².
        let t = [1.0, 2.0, 3.0, 4.0];
        let ones = [1.0; 4];
        let s = lstsq(&[&ones, &t], &[1.0, 3.0, 2.0, 5.0], None, true).unwrap();
        let cov = s.cov.unwrap();
        assert!((cov[1][1] - 1.0 / 5.0).abs() < EXACT_TOL);
        let (a, b, wrss) = affine(&t, &[1.0, 3.0, 2.0, 5.0], &ones).unwrap();
        assert!((a - s.coef[0]).abs() < EXACT_TOL && (b - s.coef[1]).abs() < EXACT_TOL);
        assert!((wrss - s.wrss).abs() < EXACT_TOL);
    }
}
