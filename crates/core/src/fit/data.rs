//! Measurements checked and reduced to what the modelers fit: one value per coordinate
//! (the chosen [`Measure`](crate::measure::Measure) of its repetitions), plus what the repetitions say about noise.

use super::{FitError, FitOptions};
use crate::measure::stats::extreme_variance;
use crate::measure::{Point, Summary};

/// Smallest relative standard deviation of a mean we trust. Exact (noise-free) data would
/// otherwise make every numerical rounding look significant.
pub const MIN_RELATIVE_SIGMA: f64 = 1e-9;

/// Relative weights treat no value as smaller than this fraction of the largest.
pub const WEIGHT_FLOOR: f64 = 1e-12;

/// One series ready for fitting.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Coordinates, one `Vec` per point (in parameter order), distinct.
    pub coords: Vec<Vec<f64>>,
    /// The selected measure per point.
    pub y: Vec<f64>,
    /// The mean of the repetitions per point (Extra-P's multi-parameter line averaging
    /// needs it next to the selected measure).
    pub mean: Vec<f64>,
    /// Coefficient of variation of the repetitions per point (`None` with one repetition
    /// or a zero mean).
    pub cv: Vec<Option<f64>>,
    /// How the noise grows with the value: the standard deviation of the repetitions
    /// is modelled as `s ∝ mean^β`, `β` in [0, 1] estimated from the repetitions
    /// (1, relative noise, when they cannot tell). Weights are `1 / y^(2β)`.
    pub noise_power: f64,
    /// Pooled estimate of the variance of a point's value in weight units,
    /// `s²/(r·mean^(2β))` (the variance of a mean of `r` repetitions is `s²/r`), and its
    /// degrees of freedom; `None` without repetitions.
    pub rel_var: Option<(f64, usize)>,
}

impl Prepared {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Weights `1 / y^(2β)` (`β` = [`Prepared::noise_power`]; relative weights `1/y²`
    /// for relative noise). A zero measurement would get an infinite weight, so values
    /// are floored at the smallest positive one (and at [`WEIGHT_FLOOR`] of the largest,
    /// against a stray near-zero reading). The floor must sit far below the data's range:
    /// costs of several parameters easily span ten orders of magnitude, and a floor
    /// inside that range silently down-weights the smallest values — exactly where
    /// additive terms of the other parameters show.
    pub fn relative_weights(&self) -> Vec<f64> {
        let top = self.y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if top == 0.0 {
            return vec![1.0; self.y.len()];
        }
        let smallest = self
            .y
            .iter()
            .map(|v| v.abs())
            .filter(|&v| v > 0.0)
            .fold(top, f64::min);
        let floor = smallest.max(top * WEIGHT_FLOOR).max(f64::MIN_POSITIVE);
        self.y
            .iter()
            .map(|v| v.abs().max(floor).powf(-2.0 * self.noise_power))
            .collect()
    }

    /// Values of parameter `l` across the points.
    pub fn column(&self, l: usize) -> impl Iterator<Item = f64> + '_ {
        self.coords.iter().map(move |c| c[l])
    }
}

fn describe(coordinate: &[f64]) -> String {
    let parts: Vec<String> = coordinate.iter().map(|v| format!("{v}")).collect();
    format!("({})", parts.join(", "))
}

/// Statistics of several points listed at the same coordinate: exact from the pooled
/// repetitions when all have them, else combined from their summaries (weighted mean,
/// extreme minimum and maximum, pooled spread; the median is approximated by the
/// weighted mean of the medians).
fn combine(parts: &[&Point]) -> Option<Summary> {
    if let [one] = parts {
        if !one.values.is_empty() {
            return Summary::of(&one.values);
        }
    }
    if parts.iter().all(|p| !p.values.is_empty()) {
        let all: Vec<f64> = parts
            .iter()
            .flat_map(|p| p.values.iter().copied())
            .collect();
        return Summary::of(&all);
    }
    let sums: Vec<Summary> = parts.iter().filter_map(|p| p.summary()).collect();
    if sums.len() == 1 {
        return Some(sums[0]);
    }
    let n: f64 = sums.iter().map(|s| s.repetitions.max(1) as f64).sum();
    if sums.is_empty() || n == 0.0 {
        return None;
    }
    let w = |s: &Summary| s.repetitions.max(1) as f64 / n;
    let mean: f64 = sums.iter().map(|s| w(s) * s.mean).sum();
    let var: f64 = sums
        .iter()
        .map(|s| w(s) * (s.std * s.std + (s.mean - mean) * (s.mean - mean)))
        .sum();
    Some(Summary {
        mean,
        median: sums.iter().map(|s| w(s) * s.median).sum(),
        minimum: sums.iter().map(|s| s.minimum).fold(f64::INFINITY, f64::min),
        maximum: sums
            .iter()
            .map(|s| s.maximum)
            .fold(f64::NEG_INFINITY, f64::max),
        std: var.sqrt(),
        repetitions: sums.iter().map(|s| s.repetitions).sum(),
    })
}

/// Check the points and reduce them. Errors name the offending coordinate. Points that
/// carry only statistics (Extra-P's saved experiments) work as well as points with
/// their repetitions.
pub fn prepare(
    parameters: &[String],
    points: &[Point],
    options: &FitOptions,
) -> Result<Prepared, FitError> {
    let measure = options.measure.unwrap_or_default();
    if points.is_empty() {
        return Err(FitError::NoPoints);
    }
    for p in points {
        if p.coordinate.len() != parameters.len() {
            return Err(FitError::Dimension {
                coordinate: describe(&p.coordinate),
                got: p.coordinate.len(),
                expected: parameters.len(),
            });
        }
        for (name, &v) in parameters.iter().zip(&p.coordinate) {
            if !v.is_finite() || v < 0.0 {
                return Err(FitError::BadCoordinate {
                    parameter: name.clone(),
                    value: v,
                });
            }
        }
        // The summary's values are checked only for points without repetitions.
        let stats = if p.values.is_empty() {
            p.summary()
        } else {
            None
        };
        let checked = p.values.iter().copied().chain(
            stats
                .filter(|_| p.values.is_empty())
                .map(|s| [s.mean, s.median, s.minimum, s.maximum])
                .into_iter()
                .flatten(),
        );
        for v in checked {
            if !v.is_finite() {
                return Err(FitError::NonFinite {
                    coordinate: describe(&p.coordinate),
                    value: v,
                });
            }
            if v < 0.0 && !options.allow_negative {
                return Err(FitError::Negative {
                    coordinate: describe(&p.coordinate),
                    value: v,
                });
            }
        }
    }
    // Merge repeated coordinates (a file may list a point twice); keep first-seen order,
    // which Extra-P's line selection depends on. Points sorted by coordinate (bit
    // patterns, `-0` as `0`), equal ones in index order, give the groups without a map
    // keyed by coordinate vectors (one allocation per point).
    let d = parameters.len();
    let keys: Vec<u64> = points
        .iter()
        .flat_map(|p| p.coordinate.iter().map(|v| (v + 0.0).to_bits()))
        .collect();
    let key = |k: usize| &keys[k * d..(k + 1) * d];
    let mut sorted: Vec<usize> = (0..points.len()).collect();
    sorted.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut groups: Vec<Vec<&Point>> = Vec::new();
    let mut first: Vec<usize> = Vec::new();
    for (i, &k) in sorted.iter().enumerate() {
        if i == 0 || key(sorted[i - 1]) != key(k) {
            groups.push(Vec::new());
            first.push(k);
        }
        groups
            .last_mut()
            .expect("a group was started")
            .push(&points[k]);
    }
    let mut by_first: Vec<usize> = (0..groups.len()).collect();
    by_first.sort_by_key(|&g| first[g]);
    let mut coords = Vec::with_capacity(groups.len());
    let mut y = Vec::with_capacity(groups.len());
    let mut mean = Vec::with_capacity(groups.len());
    let mut cv = Vec::with_capacity(groups.len());
    // (repetitions, mean, sample variance) per point with at least two repetitions.
    let mut spread: Vec<(f64, f64, f64)> = Vec::new();
    for g in by_first {
        let parts = &groups[g];
        let coordinate = parts[0].coordinate.clone();
        let Some(stats) = combine(parts) else {
            return Err(FitError::EmptyPoint {
                coordinate: describe(&coordinate),
            });
        };
        // The spread of the point's value: `s²/r` from all its repetitions, except for
        // an extreme (the minimum, the maximum), whose own variance under resampling
        // the repetitions it is (a repetition slowed far down by other work widens `s²`
        // a lot, the minimum's variance little), kept as `r` times it beside the value,
        // in the mean's form.
        let repetitions: Vec<f64> = parts
            .iter()
            .flat_map(|p| p.values.iter().copied())
            .collect();
        let own = parts
            .iter()
            .all(|p| !p.values.is_empty())
            .then(|| extreme_variance(&repetitions, measure))
            .flatten();
        match own {
            Some(var) => {
                let value = stats.get(measure);
                if value != 0.0 {
                    let r = repetitions.len() as f64;
                    spread.push((r, value.abs(), var * r));
                }
            }
            None => {
                if let Some(sd) = stats.sample_std() {
                    if stats.mean != 0.0 {
                        spread.push((stats.repetitions as f64, stats.mean.abs(), sd * sd));
                    }
                }
            }
        }
        y.push(stats.get(measure));
        mean.push(stats.mean);
        cv.push(stats.cv());
        coords.push(coordinate);
    }
    let noise_power = noise_power(&spread);
    let rel_var = (!spread.is_empty()).then(|| {
        let (mut sum, mut dof) = (0.0, 0.0);
        for &(r, m, var) in &spread {
            sum += var / r / m.powf(2.0 * noise_power) * (r - 1.0);
            dof += r - 1.0;
        }
        (
            (sum / dof).max(MIN_RELATIVE_SIGMA * MIN_RELATIVE_SIGMA),
            dof as usize,
        )
    });
    Ok(Prepared {
        coords,
        y,
        mean,
        cv,
        noise_power,
        rel_var,
    })
}

/// Points with repetitions needed to estimate how noise grows with the value.
const NOISE_POWER_MIN_POINTS: usize = 4;
/// ... and the spread of their log-means (natural log) needed: below it the values are
/// too alike for the slope to mean anything.
const NOISE_POWER_MIN_LOG_SPREAD: f64 = 1.0;

/// `β` of `s ∝ mean^β`: half the slope of `ln s²` against `ln mean` (least squares over
/// the points with repetitions), clamped to [0, 1] (between absolute and relative
/// noise); 1 when the points cannot tell.
fn noise_power(spread: &[(f64, f64, f64)]) -> f64 {
    let pts: Vec<(f64, f64)> = spread
        .iter()
        .filter(|(_, m, var)| *m > 0.0 && *var > 0.0)
        .map(|&(_, m, var)| (m.ln(), var.ln()))
        .collect();
    if pts.len() < NOISE_POWER_MIN_POINTS {
        return 1.0;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let mz = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxz: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - mz)).sum();
    let (lo, hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    if hi - lo < NOISE_POWER_MIN_LOG_SPREAD || sxx <= 0.0 {
        return 1.0;
    }
    let slope = sxz / sxx;
    let a = mz - slope * mx;
    let resid: f64 = pts.iter().map(|p| (p.1 - a - slope * p.0).powi(2)).sum();
    let se = (resid / (n - 2.0) / sxx).sqrt() / 2.0;
    let beta = slope / 2.0;
    // Relative noise unless the repetitions clearly say otherwise: an estimate from a
    // handful of points is itself noisy, and a wrong β costs more than it saves.
    if (beta - 1.0).abs() < NOISE_POWER_EVIDENCE * se {
        1.0
    } else {
        beta.clamp(0.0, 1.0)
    }
}

/// Standard errors by which `β` must differ from 1 before it is used.
const NOISE_POWER_EVIDENCE: f64 = 3.0;

/// Groups of point indices that differ only in parameter `l` (a "line" along `l`),
/// each sorted by the value of `l`, in order of first appearance.
pub fn lines_along(data: &Prepared, l: usize) -> Vec<Vec<usize>> {
    // Points sorted by their other coordinates (bit patterns, as the key of equality),
    // equal keys in index order: each run is one line. Sorting indices by keys laid out
    // in one flat buffer costs a fraction of a map keyed by coordinate vectors, which
    // allocated one key per point (a tenth of a three-parameter fit).
    let d = data.coords.first().map_or(0, Vec::len).saturating_sub(1);
    let keys: Vec<u64> = data
        .coords
        .iter()
        .flat_map(|c| {
            c.iter()
                .enumerate()
                .filter(|(m, _)| *m != l)
                .map(|(_, v)| v.to_bits())
        })
        .collect();
    let key = |k: usize| &keys[k * d..(k + 1) * d];
    let mut order: Vec<usize> = (0..data.len()).collect();
    order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, &k) in order.iter().enumerate() {
        if i == 0 || key(order[i - 1]) != key(k) {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("a group was started").push(k);
    }
    // In order of first appearance: each group's first index is its smallest.
    groups.sort_by_key(|g| g[0]);
    for g in &mut groups {
        g.sort_by(|&a, &b| data.coords[a][l].total_cmp(&data.coords[b][l]));
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Measure;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn relative_weights_follow_the_values_across_many_orders_of_magnitude() {
        // Costs of several parameters span ten orders of magnitude and more; each point
        // keeps its own relative weight (a floor inside the range would drown the
        // smallest values, where additive terms of other parameters show).
        let pts: Vec<Point> = [1e-3, 1.0, 1e9, 0.0]
            .iter()
            .enumerate()
            .map(|(k, &v)| Point::new(vec![k as f64], vec![v]))
            .collect();
        let d = prepare(&names(&["x"]), &pts, &FitOptions::default()).unwrap();
        let w = d.relative_weights();
        for (w, v) in w.iter().zip([1e-3f64, 1.0, 1e9]) {
            assert!((w * v * v - 1.0).abs() < 1e-12, "{w} for {v}");
        }
        // A zero gets the weight of the smallest positive value, not an infinite one.
        assert_eq!(w[3], w[0]);
    }

    #[test]
    fn repeated_coordinates_merge_and_noise_is_pooled() {
        let pts = vec![
            Point::new(vec![1.0], vec![9.0, 11.0]),
            Point::new(vec![2.0], vec![20.0]),
            Point::new(vec![1.0], vec![10.0]),
        ];
        let mean = FitOptions {
            measure: Some(Measure::Mean),
            ..FitOptions::default()
        };
        let d = prepare(&names(&["x"]), &pts, &mean).unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(d.y, vec![10.0, 20.0]);
        let (v, dof) = d.rel_var.unwrap();
        assert_eq!(dof, 2);
        // s² = 1, r = 3, m = 10: relative variance of the mean 1/3/100.
        assert!((v - 1.0 / 300.0).abs() < 1e-15);
        assert_eq!(d.cv[1], None);
        // The default statistic, the minimum, and its own spread: resampled, the
        // smallest of 9, 10, 11 is 9 with probability 19/27, 10 with 7/27, 11 with 1/27.
        let d = prepare(&names(&["x"]), &pts, &FitOptions::default()).unwrap();
        assert_eq!(d.y, vec![9.0, 20.0]);
        let (p9, p10, p11) = (19.0 / 27.0, 7.0 / 27.0, 1.0 / 27.0);
        let m = 9.0 * p9 + 10.0 * p10 + 11.0 * p11;
        let var = 81.0 * p9 + 100.0 * p10 + 121.0 * p11 - m * m;
        let (v, dof) = d.rel_var.unwrap();
        assert_eq!(dof, 2);
        assert!((v - var / 81.0).abs() < 1e-12, "{v} against {}", var / 81.0);
    }

    #[test]
    fn a_stalled_repetition_widens_the_mean_not_the_minimum() {
        // Five repetitions of 100 ± 1, one of them stalled to 300.
        let values = [99.0, 100.0, 101.0, 100.5, 300.0];
        let s = Summary::of(&values).unwrap().sample_std().unwrap();
        let mean = s * s / 5.0;
        let min = extreme_variance(&values, Measure::Minimum).unwrap();
        assert!(mean > 1000.0, "{mean}");
        // 13: 12.8 of it is the one resample in 3125 of five stalled repetitions.
        assert!(min < 20.0, "{min}");
        assert_eq!(extreme_variance(&values, Measure::Median), None);
        assert_eq!(extreme_variance(&[5.0], Measure::Minimum), None);
        assert_eq!(extreme_variance(&[5.0, 5.0], Measure::Minimum), Some(0.0));
    }

    #[test]
    fn bad_values_are_errors() {
        let p = names(&["x"]);
        for (pts, want) in [
            (vec![Point::new(vec![1.0], vec![f64::NAN])], "not a finite"),
            (vec![Point::new(vec![1.0], vec![-1.0])], "negative"),
            (vec![Point::new(vec![-1.0], vec![1.0])], "parameter"),
            (vec![Point::new(vec![1.0, 2.0], vec![1.0])], "coordinate"),
            (vec![Point::new(vec![1.0], vec![])], "no values"),
            (vec![], "no points"),
        ] {
            let e = prepare(&p, &pts, &FitOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{e}");
        }
    }

    #[test]
    fn lines_group_by_the_other_coordinates() {
        let pts: Vec<Point> = [(1.0, 1.0), (2.0, 1.0), (1.0, 2.0), (3.0, 1.0)]
            .iter()
            .map(|&(x, y)| Point::new(vec![x, y], vec![1.0]))
            .collect();
        let d = prepare(&names(&["x", "y"]), &pts, &FitOptions::default()).unwrap();
        assert_eq!(lines_along(&d, 0), vec![vec![0, 1, 3], vec![2]]);
        assert_eq!(lines_along(&d, 1), vec![vec![0, 2], vec![1], vec![3]]);
    }
}

#[cfg(test)]
mod noise_tests {
    use super::*;

    /// Deterministic "noise": repetitions at ±d around the mean.
    fn points(scale: impl Fn(f64) -> f64) -> Vec<Point> {
        [1.0, 10.0, 100.0, 1e3, 1e4, 1e5]
            .iter()
            .enumerate()
            .map(|(i, &m)| {
                // Vary the spread a little so the regression has residuals.
                let d = scale(m) * (1.0 + 0.1 * (i % 2) as f64);
                Point::new(vec![i as f64 + 1.0], vec![m - d, m, m + d])
            })
            .collect()
    }

    #[test]
    fn noise_power_tells_absolute_from_relative_noise() {
        let p = vec!["x".to_string()];
        let relative = prepare(&p, &points(|m| 0.02 * m), &FitOptions::default()).unwrap();
        assert_eq!(relative.noise_power, 1.0);
        let absolute = prepare(&p, &points(|_| 0.5), &FitOptions::default()).unwrap();
        assert!(absolute.noise_power < 0.1, "{}", absolute.noise_power);
        // The pooled variance is then in absolute units: about d² / 3 per point.
        let (v, _) = absolute.rel_var.unwrap();
        assert!(v > 0.01 && v < 1.0, "{v}");
    }
}
