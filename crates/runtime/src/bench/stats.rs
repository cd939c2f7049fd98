//! Summary statistics of repeated measurements: median, coefficient of variation, and a
//! distribution-free confidence interval of the median (from order statistics, so no
//! normality is assumed — timing distributions are skewed by interference).

/// Two-sided 95% normal quantile, used for the rank interval of the median.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Fewest samples for which the order-statistic interval of the median is informative.
pub const MIN_SAMPLES_FOR_CI: usize = 6;

/// The median of `values` (NaN for none).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Arithmetic mean.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Coefficient of variation: sample standard deviation / mean (0 for fewer than 2).
pub fn cv(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let m = mean(values);
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() - 1) as f64;
    if m == 0.0 {
        0.0
    } else {
        var.sqrt() / m.abs()
    }
}

/// A 95% confidence interval of the median: the order statistics at ranks
/// `n/2 ∓ z·√n/2` (normal approximation of the binomial; conservative, rounded outward).
/// `None` below [`MIN_SAMPLES_FOR_CI`] samples.
pub fn median_ci(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < MIN_SAMPLES_FOR_CI {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let half = Z95 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half).floor().max(1.0) as usize) - 1;
    let hi = ((n as f64 / 2.0 + half).ceil() as usize + 1).min(n) - 1;
    Some((v[lo], v[hi]))
}

/// Half-width of the median's confidence interval relative to the median; `None` when
/// the interval is not available yet.
pub fn relative_ci_half_width(values: &[f64]) -> Option<f64> {
    let (lo, hi) = median_ci(values)?;
    let m = median(values);
    (m > 0.0).then(|| (hi - lo) / (2.0 * m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact arithmetic on small integers: compare with a tight tolerance.
    const TOL: f64 = 1e-12;

    #[test]
    fn median_and_cv() {
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < TOL);
        assert!((median(&[4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < TOL);
        assert!(cv(&[5.0, 5.0, 5.0]).abs() < TOL);
        // sd of [1,2,3] is 1, mean 2
        assert!((cv(&[1.0, 2.0, 3.0]) - 0.5).abs() < TOL);
    }

    #[test]
    fn median_ci_brackets_the_median_and_narrows() {
        let wide: Vec<f64> = (0..10).map(f64::from).collect();
        let (lo, hi) = median_ci(&wide).unwrap();
        assert!(lo <= median(&wide) && median(&wide) <= hi);
        let narrow: Vec<f64> = (0..1000)
            .map(|i| 100.0 + f64::from(i % 10) * 0.01)
            .collect();
        assert!(relative_ci_half_width(&narrow).unwrap() < 0.001);
        assert!(median_ci(&[1.0, 2.0]).is_none());
    }
}
