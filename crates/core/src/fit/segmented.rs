//! Segmented single-parameter models (`--modeler segmented`): two models of the default
//! modeler joined at a break, where the measurements step.
//!
//! A block whose data outgrows a cache level changes its cost per element between two
//! sizes: `inc` measured on this machine costs 0.52 ns per array element up to 65,536
//! elements and 0.60 from 98,304 on. No single PMNF hypothesis follows such a step; the
//! best one misses its own points by 8–18%, and a composed prediction cannot be closer
//! to the program than its blocks' models are to the blocks. Extra-P 4 has a segmented
//! modeler for the same reason; this one decides differently:
//!
//! 1. the default modeler ([`super::refined`]) fits all points;
//! 2. if that model is consistent with the measurements — every point within
//!    [`MISS_SIGMAS`] of its own noise, the relative standard error of the point's value
//!    (`CV/√r` for a mean, `1.25·CV/√r` for a median, for the minimum its spread under
//!    resampling the repetitions, [`extreme_variance`]; at least [`NOISE_FLOOR`]) — it is the
//!    answer, unless the cache levels are known (below: there the score of step 3
//!    decides alone);
//! 3. otherwise every split into two runs of at least [`MIN_SEGMENT`] consecutive sizes
//!    is fitted, one model per side, and the split with the smallest
//!    `χ² = Σ (relative residual / noise)²` is compared with the single model by
//!    `χ² + k·ln(n)` (`k` coefficients, one more for the break; Schwarz's penalty): the
//!    segmented model wins only if it is better by that measure.
//!
//! The break lies at the geometric mean of the last size of the first run and the first
//! of the second (where between them the step happens the data cannot say; the
//! arithmetic mean when the first is 0). The model is
//! an [`Expr::Piecewise`]: `piecewise(x, f0, break, f1)`. With several parameters, or
//! too few sizes for two sides, this modeler is the default modeler.
//!
//! **Where the cache levels are known** ([`FitOptions::breaks`]: the sizes at which the
//! data fills each cache level, which `validate` computes from the block's input and the
//! machine's caches), the splits tried are only those whose two sizes straddle part of
//! the range from half such a size to the size itself (a cache holds more than the
//! block's data, so the step can come before the data fills it), with at least
//! [`HINTED_MIN_SEGMENT`] sizes a side instead of [`MIN_SEGMENT`]. A level-1 cache of
//! 48 KiB holds 12,288 `i32`s: on the paper's grid (1,024, 2,048, 4,096, 8,192, 16,384,
//! …) four sizes lie under it, and `inc` steps there from 0.94 to 1.19 ns per element
//! on an Intel Xeon guest. Splitting only there, not wherever the data allows, keeps a
//! piece from bending to follow a few disturbed points: an `inc_warm` slow at 65,536 and
//! 98,304 alone took a free split after 98,304 with a
//! left piece `… + 4·10⁻⁷ · x²·log2(x)` that put `seq(inc, inc)` 27.7% off (4.1% with one
//! model). Near a known cache level the first test is left out and the score decides
//! alone; a block that does not step at a cache (`qsort`) still stays whole, since its
//! single model leaves a split nothing to gain that pays the penalty. The first test
//! reads a point's noise from the spread of all its repetitions, and under the minimum
//! that spread says little about the fastest one: an `inc` of a task pool's `seq` once
//! read 8.7 µs at x = 8,192, the last size in the level-1 cache, on both visits of that
//! size, and 10.7–14.6 µs in eight of nine repetitions; a line 13.9% over that minimum
//! passed the test (there the score, too, keeps the line). Without the test, 559 judged rows of
//! saved paper runs validated again had 497 within target against 496, and six of the
//! seven rows that moved came closer.

use super::{refined, Coefficient, Fit, FitError, FitOptions, FitStats, Modeler, PointStats};
use crate::measure::stats::extreme_variance;
use crate::measure::{Measure, Point, Summary};
use crate::model::Expr;

/// Fewest sizes on each side of a break (Extra-P's segmented modeler uses five, too).
pub const MIN_SEGMENT: usize = 5;
/// Fewest sizes on a side of a break near a hinted size ([`FitOptions::breaks`]). Four:
/// the sizes under a 48 KiB level-1 cache on the paper's grid. With three, a
/// `qsort_par2` split after 4,096 with a left piece that missed its own 2,048 by 15%.
pub const HINTED_MIN_SEGMENT: usize = 4;
/// A point is missed when the model is further from it than this many noise units.
pub const MISS_SIGMAS: f64 = 3.0;
/// Smallest relative noise assumed for a point: differences under 1% between a model
/// and a median do not justify a break, however many repetitions there are.
pub const NOISE_FLOOR: f64 = 0.01;

/// The segmented modeler, built on the default one.
pub struct Segmented {
    pub inner: refined::Refined,
}

impl Segmented {
    pub const DEFAULT: Segmented = Segmented {
        inner: refined::Refined::DEFAULT,
    };
}

/// One distinct size: its coordinate and the points measured there.
struct Size<'a> {
    x: f64,
    points: Vec<&'a Point>,
    /// Relative noise of the size's value (see the module docs).
    noise: f64,
}

fn sizes_of<'a>(points: &'a [Point], measure: Measure) -> Vec<Size<'a>> {
    let mut sorted: Vec<&Point> = points.iter().collect();
    sorted.sort_by(|a, b| a.coordinate[0].total_cmp(&b.coordinate[0]));
    let mut out: Vec<Size<'a>> = Vec::new();
    for p in sorted {
        match out.last_mut() {
            Some(s) if s.x == p.coordinate[0] => s.points.push(p),
            _ => out.push(Size {
                x: p.coordinate[0],
                points: vec![p],
                noise: 0.0,
            }),
        }
    }
    for s in &mut out {
        let values: Vec<f64> = s
            .points
            .iter()
            .flat_map(|p| p.values.iter().copied())
            .collect();
        // An extreme's own spread under resampling; else from the CV of all the
        // repetitions (the median's standard error is about 1.25 times the mean's).
        let noise = match extreme_variance(&values, measure) {
            Some(var) => {
                let value = Summary::of(&values).map_or(0.0, |v| v.get(measure));
                if value != 0.0 {
                    var.sqrt() / value.abs()
                } else {
                    0.0
                }
            }
            None => {
                let r = values.len() as f64;
                let cv = Summary::of(&values).and_then(|v| v.cv()).unwrap_or(0.0);
                let factor = if measure == Measure::Median {
                    1.25
                } else {
                    1.0
                };
                factor * cv / r.sqrt()
            }
        };
        s.noise = noise.max(NOISE_FLOOR);
    }
    out
}

/// `Σ (relative residual / noise)²` of a fit over `sizes` (its points in the same order),
/// and whether some point is missed by more than [`MISS_SIGMAS`].
fn chi2(fit: &Fit, sizes: &[Size<'_>]) -> (f64, bool) {
    let mut chi2 = 0.0;
    let mut missed = false;
    for p in &fit.points {
        let Some(s) = sizes.iter().find(|s| s.x == p.coordinate[0]) else {
            continue;
        };
        let r = if p.value != 0.0 {
            (p.predicted - p.value) / p.value
        } else {
            0.0
        };
        let z = r / s.noise;
        chi2 += z * z;
        missed |= z.abs() > MISS_SIGMAS;
    }
    (chi2, missed)
}

fn owned(sizes: &[Size<'_>]) -> Vec<Point> {
    sizes
        .iter()
        .flat_map(|s| s.points.iter().map(|p| (*p).clone()))
        .collect()
}

impl Modeler for Segmented {
    fn name(&self) -> &'static str {
        "segmented"
    }

    fn description(&self) -> &'static str {
        "the default modeler, or (one parameter, 10 sizes or more) two of its models joined at a break where the measurements step (a cache level) and no single model follows them"
    }

    fn fit(
        &self,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
    ) -> Result<Fit, FitError> {
        let whole = self.inner.fit(parameters, points, options)?;
        if parameters.len() != 1 {
            return Ok(whole);
        }
        let sizes = sizes_of(points, options.measure_for(self));
        let n = sizes.len();
        // Whether a hint expects a step between the sizes around split `s`: somewhere
        // from half the hinted size to the size itself.
        let hint = |s: usize| -> bool {
            let (a, b) = (sizes[s - 1].x, sizes[s].x);
            options
                .breaks
                .iter()
                .any(|&h| h.is_finite() && h > 0.0 && a < h && b > h / 2.0)
        };
        // The splits tried: with hints, those near one with HINTED_MIN_SEGMENT sizes a
        // side; without, every one with MIN_SEGMENT.
        let hinted = !options.breaks.is_empty();
        let splits: Vec<usize> = (1..n)
            .filter(|&s| {
                let short = s.min(n - s);
                if hinted {
                    short >= HINTED_MIN_SEGMENT && hint(s)
                } else {
                    short >= MIN_SEGMENT
                }
            })
            .collect();
        if splits.is_empty() {
            return Ok(whole);
        }
        let (chi_whole, missed) = chi2(&whole, &sizes);
        if !missed && !hinted {
            return Ok(whole);
        }
        let penalty = (n as f64).ln();
        let k_whole = whole.stats.coefficients.len() as f64;
        let mut best: Option<(f64, usize, Fit, Fit)> = None;
        for split in splits {
            let (lo, hi) = sizes.split_at(split);
            let (Ok(left), Ok(right)) = (
                self.inner.fit(parameters, &owned(lo), options),
                self.inner.fit(parameters, &owned(hi), options),
            ) else {
                continue;
            };
            if hinted && steps_down(&left, &right, &sizes, split, &parameters[0]) {
                continue;
            }
            let score = chi2(&left, lo).0
                + chi2(&right, hi).0
                + penalty
                    * (left.stats.coefficients.len() + right.stats.coefficients.len() + 1) as f64;
            if best.as_ref().is_none_or(|b| score < b.0) {
                best = Some((score, split, left, right));
            }
        }
        let Some((score, split, left, right)) = best else {
            return Ok(whole);
        };
        if score >= chi_whole + penalty * k_whole {
            return Ok(whole);
        }
        let at = break_at(&sizes, split);
        let model = Expr::piecewise(
            Expr::param(&parameters[0]),
            vec![at],
            vec![left.model.clone(), right.model.clone()],
        )
        .unwrap_or_else(|| whole.model.clone());
        if !matches!(model, Expr::Piecewise { .. }) {
            return Ok(whole);
        }
        Ok(joined(parameters, model, at, left, right, whole.warnings))
    }
}

/// Where a split before `sizes[split]` breaks: the geometric mean of the sizes on either
/// side (the arithmetic mean when the first is 0).
fn break_at(sizes: &[Size<'_>], split: usize) -> f64 {
    let (a, b) = (sizes[split - 1].x, sizes[split].x);
    if a > 0.0 {
        (a * b).sqrt()
    } else {
        0.5 * (a + b)
    }
}

/// Whether the right piece of a split at `split` starts lower than the left one ends, at
/// the break, by more than the noise of the two sizes around it. Data that outgrows a
/// cache can only get slower, so a split near a cache size whose pieces step down is
/// not that cache's step: it follows points disturbed on one side. Run U's `inc_warm`
/// (slow at 65,536 and 98,304 alone) split at its 1 MiB level-2 cache with a left piece
/// that bent up to those two points and a right one below them, and moved two task
/// pools of `inc` out of target (9.6 → 15.8%, 8.3 → 12.3%).
fn steps_down(left: &Fit, right: &Fit, sizes: &[Size<'_>], split: usize, name: &str) -> bool {
    let at = break_at(sizes, split);
    let (Ok(l), Ok(r)) = (
        left.model.eval_at(&[(name, at)]),
        right.model.eval_at(&[(name, at)]),
    ) else {
        return false;
    };
    let tol = sizes[split - 1].noise.max(sizes[split].noise);
    l > 0.0 && r < l * (1.0 - tol)
}

/// The segmented fit's statistics over all points: the two sides' points and
/// coefficients (labelled with their range), RSS and SMAPE over all points, R² and
/// adjusted R² with the coefficients of both sides and the break counted.
fn joined(
    parameters: &[String],
    model: Expr,
    at: f64,
    left: Fit,
    right: Fit,
    mut warnings: Vec<String>,
) -> Fit {
    let points: Vec<PointStats> = left.points.iter().chain(&right.points).cloned().collect();
    let label = |c: &Coefficient, side: &str| Coefficient {
        term: format!(
            "{} ({} {side} {})",
            c.term,
            parameters[0],
            crate::model::format_number(at)
        ),
        value: c.value,
        std_error: c.std_error,
    };
    let coefficients: Vec<Coefficient> = left
        .stats
        .coefficients
        .iter()
        .map(|c| label(c, "<"))
        .chain(right.stats.coefficients.iter().map(|c| label(c, "≥")))
        .collect();
    let n = points.len();
    let k = coefficients.len() + 1;
    let rss: f64 = points.iter().map(|p| (p.predicted - p.value).powi(2)).sum();
    let smape = points
        .iter()
        .map(|p| {
            let s = p.value.abs() + p.predicted.abs();
            if s == 0.0 {
                0.0
            } else {
                2.0 * (p.predicted - p.value).abs() / s
            }
        })
        .sum::<f64>()
        / n as f64
        * 100.0;
    let mean = points.iter().map(|p| p.value).sum::<f64>() / n as f64;
    let tss: f64 = points.iter().map(|p| (p.value - mean).powi(2)).sum();
    let r2 = if tss > 0.0 { 1.0 - rss / tss } else { 1.0 };
    let ar2 = if n > k && tss > 0.0 {
        1.0 - (rss / (n - k) as f64) / (tss / (n - 1) as f64)
    } else {
        f64::NAN
    };
    warnings.extend(left.warnings);
    warnings.extend(right.warnings);
    Fit {
        parameters: parameters.to_vec(),
        model,
        stats: FitStats {
            rss,
            smape,
            r2,
            ar2,
            covariance: block_diagonal(&left.stats.covariance, &right.stats.covariance),
            coefficients,
            points: n,
        },
        points,
        warnings,
    }
}

/// The covariance of two pieces fitted apart, when both have one.
fn block_diagonal(a: &Option<Vec<Vec<f64>>>, b: &Option<Vec<Vec<f64>>>) -> Option<Vec<Vec<f64>>> {
    let (a, b) = (a.as_ref()?, b.as_ref()?);
    let n = a.len() + b.len();
    let mut m = vec![vec![0.0; n]; n];
    for (i, row) in a.iter().enumerate() {
        m[i][..row.len()].copy_from_slice(row);
    }
    for (i, row) in b.iter().enumerate() {
        m[a.len() + i][a.len()..a.len() + row.len()].copy_from_slice(row);
    }
    Some(m)
}
