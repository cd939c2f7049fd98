//! Statistics of the repetitions at one point: the `--measure` reductions (mean, median,
//! minimum, maximum) and the spread (standard deviation, coefficient of variation).

use std::fmt;
use std::str::FromStr;

/// How repetitions are reduced to one value per point (`--measure`).
///
/// The default, [`Measure::Minimum`], is the one statistic every command reads unless
/// told otherwise: `fit`, components fitted on load, `report --fit`'s pictures,
/// `measure`'s and `bench`'s tables, `validate` (its suites and `validate -- CMD`) and the
/// overhead `predict` adds. Other work on a shared machine only ever slows a repetition
/// down, so the fastest one depends least on how much of it there was: on synthetic
/// blocks with such slowdowns the default modeler recovers the true exponents from the
/// minimum as often as from the median or more often (far more often under heavy
/// slowdowns and fixed stalls, `examples/statistic_bench.rs`), and the saved
/// validation runs keep 29 of 37 rows within target on it against 17 on the median and
/// 19 on the mean (`docs/fitting.md`, "Which statistic"). Extra-P's modeler
/// (`--modeler extrap`) keeps Extra-P's mean ([`crate::fit::Modeler::default_measure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Measure {
    Mean,
    Median,
    #[default]
    Minimum,
    Maximum,
}

impl Measure {
    pub const ALL: [Measure; 4] = [
        Measure::Mean,
        Measure::Median,
        Measure::Minimum,
        Measure::Maximum,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Measure::Mean => "mean",
            Measure::Median => "median",
            Measure::Minimum => "minimum",
            Measure::Maximum => "maximum",
        }
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Measure {
    type Err = String;

    fn from_str(s: &str) -> Result<Measure, String> {
        match s.to_ascii_lowercase().as_str() {
            "mean" | "average" | "avg" => Ok(Measure::Mean),
            "median" => Ok(Measure::Median),
            "minimum" | "min" => Ok(Measure::Minimum),
            "maximum" | "max" => Ok(Measure::Maximum),
            _ => Err(format!(
                "unknown measure `{s}` (known: mean, median, minimum, maximum)"
            )),
        }
    }
}

/// Statistics of the repetitions at one point.
///
/// `std` is the *population* standard deviation (n in the denominator), as Extra-P
/// stores it in its saved experiments; [`Summary::sample_std`] converts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub minimum: f64,
    pub maximum: f64,
    pub std: f64,
    pub repetitions: usize,
}

impl Summary {
    /// Statistics of `values`; `None` for an empty slice.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = mean(values);
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        Some(Summary {
            mean,
            median: median(values),
            minimum: values.iter().copied().fold(f64::INFINITY, f64::min),
            maximum: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            std: var.sqrt(),
            repetitions: values.len(),
        })
    }

    pub fn get(&self, measure: Measure) -> f64 {
        match measure {
            Measure::Mean => self.mean,
            Measure::Median => self.median,
            Measure::Minimum => self.minimum,
            Measure::Maximum => self.maximum,
        }
    }

    /// Sample standard deviation (n − 1); `None` with fewer than two repetitions.
    pub fn sample_std(&self) -> Option<f64> {
        (self.repetitions >= 2).then(|| {
            let n = self.repetitions as f64;
            self.std * (n / (n - 1.0)).sqrt()
        })
    }

    /// Coefficient of variation: sample standard deviation over the mean; `None` with
    /// fewer than two repetitions or a zero mean.
    pub fn cv(&self) -> Option<f64> {
        let s = self.sample_std()?;
        (self.mean != 0.0).then(|| s / self.mean.abs())
    }
}

/// Mean, computed around the first value so that large equal values do not lose digits.
fn mean(values: &[f64]) -> f64 {
    let shift = values[0];
    shift + values.iter().map(|v| v - shift).sum::<f64>() / values.len() as f64
}

/// Median (the mean of the two middle values for an even count), as numpy computes it;
/// NaN for an empty slice.
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
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `values` summarised as `k` quantiles at the middles of `k` equal steps of probability
/// (the sorted values themselves when there are at most `k`).
pub fn quantiles(values: &[f64], k: usize) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    if v.len() <= k {
        return v;
    }
    (0..k)
        .map(|i| {
            let at = (i as f64 + 0.5) / k as f64 * v.len() as f64 - 0.5;
            let (lo, frac) = (at.floor().max(0.0) as usize, at - at.floor());
            let hi = (lo + 1).min(v.len() - 1);
            v[lo] + frac * (v[hi] - v[lo])
        })
        .collect()
}

/// Two-sided 95% normal quantile, used for the rank interval of the median.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Fewest samples for which the order-statistic interval of the median is informative.
pub const MIN_SAMPLES_FOR_CI: usize = 6;

/// Coefficient of variation of `values` (sample standard deviation over the mean); 0 for
/// fewer than two values or a zero mean.
pub fn cv(values: &[f64]) -> f64 {
    Summary::of(values).and_then(|s| s.cv()).unwrap_or(0.0)
}

/// The variance of an extreme of `values` — the minimum or the maximum — under
/// resampling them with replacement, exactly ([`order_statistic`]): how much a point's
/// fastest (slowest) repetition would move if its repetitions were measured again.
/// `None` for the mean and the median, whose noise the spread of all repetitions
/// tells (`s²/r` for the mean), and with fewer than two values. That spread says little
/// about an extreme: a repetition slowed down far beyond the others widens it a lot
/// and moves the minimum's variance little.
pub fn extreme_variance(values: &[f64], measure: Measure) -> Option<f64> {
    match measure {
        Measure::Minimum | Measure::Maximum => resampled(values, measure).map(|(_, var)| var),
        Measure::Mean | Measure::Median => None,
    }
}

/// How far the statistic `measure` of `values` resampled with replacement lies from
/// the statistic of `values` itself, on average (the exact bootstrap bias; 0 for the
/// mean; `None` with fewer than two values). The resampled minimum is never below the
/// minimum: refits to resampled repetitions lie above the fit unless this is taken off.
pub fn resampled_bias(values: &[f64], measure: Measure) -> Option<f64> {
    if measure == Measure::Mean {
        return (values.len() >= 2).then_some(0.0);
    }
    let (mean, _) = resampled(values, measure)?;
    Some(mean - Summary::of(values)?.get(measure))
}

/// The mean and the variance of the statistic `measure` (not the mean) of `values`
/// resampled with replacement, exactly ([`order_statistic`]); the median of an even
/// count is the average of its two middle order statistics (mean exact, variance the
/// larger of theirs).
fn resampled(values: &[f64], measure: Measure) -> Option<(f64, f64)> {
    let r = values.len();
    if r < 2 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match measure {
        Measure::Minimum => Some(order_statistic(&v, 1)),
        Measure::Maximum => Some(order_statistic(&v, r)),
        Measure::Median | Measure::Mean if r % 2 == 1 => Some(order_statistic(&v, r.div_ceil(2))),
        Measure::Median | Measure::Mean => {
            let (a, b) = (order_statistic(&v, r / 2), order_statistic(&v, r / 2 + 1));
            Some(((a.0 + b.0) / 2.0, a.1.max(b.1)))
        }
    }
}

/// The mean and the variance of the `k`-th smallest of `sorted` resampled with
/// replacement: it is at most the `j`-th value with probability `P(Bin(r, j/r) ≥ k)`.
fn order_statistic(v: &[f64], k: usize) -> (f64, f64) {
    let r = v.len();
    // P(Bin(r, q) ≥ k), summed from the top term down.
    let at_least = |q: f64| -> f64 {
        if q >= 1.0 {
            return 1.0;
        }
        let mut term = q.powi(r as i32);
        let mut sum = 0.0;
        for i in (k..=r).rev() {
            sum += term;
            // C(r, i−1) q^(i−1) (1−q)^(r−i+1) from C(r, i) q^i (1−q)^(r−i).
            term *= i as f64 / (r - i + 1) as f64 * (1.0 - q) / q;
        }
        sum.min(1.0)
    };
    let shift = v[0];
    let (mut m1, mut m2, mut below) = (0.0, 0.0, 0.0);
    for (j, x) in v.iter().enumerate() {
        let cdf = at_least((j + 1) as f64 / r as f64);
        let p = (cdf - below).max(0.0);
        below = cdf;
        let d = x - shift;
        m1 += p * d;
        m2 += p * d * d;
    }
    (shift + m1, (m2 - m1 * m1).max(0.0))
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

    /// Tolerance for statistics computed two ways in floating point.
    const TOL: f64 = 1e-12;

    #[test]
    fn reductions_of_a_small_sample() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.minimum, 1.0);
        assert_eq!(s.maximum, 4.0);
        assert_eq!(s.repetitions, 4);
        // population variance 1.25; sample variance 5/3
        assert!((s.std - 1.25f64.sqrt()).abs() < TOL);
        assert!((s.sample_std().unwrap() - (5.0f64 / 3.0).sqrt()).abs() < TOL);
        assert!((s.cv().unwrap() - (5.0f64 / 3.0).sqrt() / 2.5).abs() < TOL);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    }

    #[test]
    fn spread_is_undefined_for_one_repetition_or_zero_mean() {
        assert_eq!(Summary::of(&[5.0]).unwrap().cv(), None);
        assert_eq!(Summary::of(&[-1.0, 1.0]).unwrap().cv(), None);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn equal_large_values_have_exactly_zero_spread() {
        let s = Summary::of(&[1e15 + 1.0; 7]).unwrap();
        assert_eq!(s.mean, 1e15 + 1.0);
        assert_eq!(s.std, 0.0);
        assert_eq!(s.cv(), Some(0.0));
    }

    #[test]
    fn measure_names_parse_back() {
        for m in Measure::ALL {
            assert_eq!(m.name().parse::<Measure>().unwrap(), m);
        }
        assert!("mode".parse::<Measure>().unwrap_err().contains("known"));
    }

    const CI_TOL: f64 = 1e-12;

    #[test]
    fn quantiles_sit_at_the_middles_of_equal_steps_of_probability() {
        let v: Vec<f64> = (0..100).rev().map(f64::from).collect();
        // 4 quantiles of 0..=99: at 12.5%, 37.5%, 62.5%, 87.5%.
        assert_eq!(quantiles(&v, 4), [12.0, 37.0, 62.0, 87.0]);
        assert_eq!(quantiles(&[3.0, 1.0, f64::NAN], 4), [1.0, 3.0]);
        assert!(quantiles(&[], 4).is_empty());
        // Interpolated between neighbours.
        assert_eq!(quantiles(&[0.0, 1.0, 2.0, 3.0], 2), [0.5, 2.5]);
    }

    #[test]
    fn median_and_cv_of_repetitions() {
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < CI_TOL);
        assert!((median(&[4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < CI_TOL);
        assert!(cv(&[5.0, 5.0, 5.0]).abs() < CI_TOL);
        // sd of [1,2,3] is 1, mean 2
        assert!((cv(&[1.0, 2.0, 3.0]) - 0.5).abs() < CI_TOL);
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
