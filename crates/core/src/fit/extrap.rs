//! Extra-P 4.2.5's default modeler, reproduced (`--modeler extrap`).
//!
//! The facts, from Extra-P's `modelers/single_parameter/{basic,abstract_base}.py`,
//! `modelers/multi_parameter/multi_parameter_modeler.py` and `entities/hypotheses.py`:
//!
//! * **One parameter.** Start from the constant model (the mean; if its RSS is exactly 0,
//!   stop there). Every building block `x^i · log2(x)^j` of the [`space`](super::space) (without logs when
//!   any `x < 1`) gives the hypothesis `c0 + c1 · x^i · log2(x)^j`, scored by leave-one-out
//!   cross-validated SMAPE: for each point, fit on the others by unweighted least squares,
//!   zero `c0` when `|c0 / min(y)| < 0.0005` (the "clean constant" step; `|c0| < 0.0005`
//!   when the minimum is 0), and predict the point. The final coefficients are refitted
//!   on all points (without the clean step). A hypothesis is dropped when its term
//!   contributes less than 0.05 % of the measured value at every point. The winner is the
//!   first hypothesis whose LOO SMAPE is strictly lower than the best so far, starting
//!   from the constant model's in-sample SMAPE.
//! * **Several parameters.** For each parameter take the longest lines of points that
//!   differ only in that parameter, average them point by point into one line, and model
//!   it as above. Keep the parameters whose line model is not constant. With none: the
//!   mean. With one: its term with either the line's coefficients or coefficients refitted
//!   on all points, whichever has the lower SMAPE. With several: fit on all points the
//!   combinations `a·b·…` (product), `a + b + …` (sum), and for two parameters `a·b + a`,
//!   `a·b + b`, for three the 21 mixed forms, and keep the lowest in-sample SMAPE among
//!   those whose every term contributes at least 0.05 %.
//!
//! Extra-P's least squares is numpy's `lstsq` (LAPACK `gelsd`) on the *unscaled* columns,
//! which treats singular values at or below `rcond · σ_max` as zero (`rcond` = machine
//! epsilon × the number of points for one parameter; 2⁻⁵³ for several, after Extra-P's
//! retry). On wide-range data this is not a corner case: `x^(5/2) · log2(x)²` at
//! `x = 2^18` is about 10¹⁶, the constant column drops below the threshold, and numpy
//! returns the minimum-norm line through (nearly) the origin. We reproduce that
//! ([`numpy_truncated`], [`numpy_truncated_line`]) wherever numpy would truncate, and use
//! our exact fit elsewhere. Where the columns are exactly dependent (a line of two
//! points, a term that is constant on the data) we skip the hypothesis instead.

// `!(a > b)` is deliberate: a NaN must fail the check.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use std::collections::BTreeMap;

use super::data::{lines_along, prepare, Prepared};
use super::lsq::{
    lstsq, numpy_default_rcond, numpy_truncated, numpy_truncated_line, LAPACK_EPS, RANK_TOLERANCE,
};
use super::space::{eval_power, usable_blocks};
use super::{finish_pmnf, Fit, FitError, FitOptions, Measure, Modeler};
use crate::measure::Point;
use crate::model::{Monomial, Pmnf, Power};

/// Extra-P's minimum term contribution (`minimum_term_contribution`, `epsilon`).
pub const MIN_TERM_CONTRIBUTION: f64 = 0.0005;
/// Extra-P's threshold for zeroing the constant coefficient during cross-validation.
pub const CLEAN_CONSTANT_EPSILON: f64 = 0.0005;
/// Extra-P warns below this many points (and models anyway).
pub const MIN_POINTS: usize = 5;

/// The Extra-P-compatible modeler.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExtraP;

/// A single-parameter model `c0 + c1 · x^i · log2(x)^j` (or a constant).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SingleModel {
    pub c0: f64,
    pub term: Option<(Power, f64)>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Extra-P's SMAPE in percent, over `(actual, predicted)` pairs.
fn smape(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for (a, p) in pairs {
        let s = a.abs() + p.abs();
        if s != 0.0 {
            sum += 2.0 * (p - a).abs() / s;
        }
        n += 1;
    }
    sum / n as f64 * 100.0
}

/// Largest `|term_k / y_k|`, with numpy's semantics for zeros (`x/0 = inf`, `0/0 = NaN`
/// and a NaN anywhere makes the maximum NaN, which never counts as "too small").
fn max_contribution(term: impl Iterator<Item = f64>, y: &[f64]) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for (t, y) in term.zip(y) {
        let c = (t / y).abs();
        if c.is_nan() {
            return f64::NAN;
        }
        max = max.max(c);
    }
    max
}

fn too_small(contribution: f64) -> bool {
    contribution < MIN_TERM_CONTRIBUTION
}

/// Extra-P's single-parameter fit `c0 + c1·t` (numpy's `lstsq(A, y, None)`): numpy's
/// rank-truncated answer where it gives one, else the exact least-squares line; `None`
/// where the columns are dependent (the hypothesis is skipped).
fn extrap_line(t: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = y.len();
    let ones = vec![1.0; n];
    let exact = lstsq(&[&ones, t], y, None, false).ok()?;
    let m = n as f64;
    let s1: f64 = t.iter().sum();
    let tm = s1 / m;
    let truncated = numpy_truncated_line(
        m,
        s1,
        t.iter().map(|v| v * v).sum(),
        t.iter().map(|v| (v - tm) * (v - tm)).sum(),
        y.iter().sum(),
        t.iter().zip(y).map(|(t, y)| t * y).sum(),
        numpy_default_rcond(n, 2),
    );
    Some(truncated.unwrap_or((exact.coef[0], exact.coef[1])))
}

/// Extra-P's multi-parameter fit (numpy's `lstsq` with `rcond=None`, retried with
/// `rcond=-1` when the rank collapsed, so effectively LAPACK's machine precision).
fn extrap_fit(columns: &[&[f64]], y: &[f64]) -> Option<Vec<f64>> {
    let exact = lstsq(columns, y, None, false).ok()?;
    Some(numpy_truncated(columns, y, LAPACK_EPS).unwrap_or(exact.coef))
}

/// Extra-P's basic single-parameter modeler on one line of points.
pub fn single(x: &[f64], y: &[f64]) -> SingleModel {
    let n = y.len();
    let c_mean = mean(y);
    let constant = SingleModel {
        c0: c_mean,
        term: None,
    };
    let constant_rss: f64 = y.iter().map(|v| (v - c_mean) * (v - c_mean)).sum();
    if constant_rss == 0.0 {
        return constant;
    }
    let mut best = constant;
    let mut best_smape = smape(y.iter().map(|&a| (a, c_mean)));
    for block in usable_blocks(x.iter().copied()) {
        let t: Vec<f64> = x.iter().map(|&v| eval_power(&block, v)).collect();
        let mut loo_rss = 0.0;
        let mut loo_smape = 0.0;
        let mut valid = true;
        for k in 0..n {
            let tt: Vec<f64> = (0..n).filter(|&i| i != k).map(|i| t[i]).collect();
            let yt: Vec<f64> = (0..n).filter(|&i| i != k).map(|i| y[i]).collect();
            let Some((mut c0, c1)) = extrap_line(&tt, &yt) else {
                valid = false;
                break;
            };
            let min = yt.iter().copied().fold(f64::INFINITY, f64::min);
            let clean = if min == 0.0 {
                (c0 - min).abs() < CLEAN_CONSTANT_EPSILON
            } else {
                (c0 / min).abs() < CLEAN_CONSTANT_EPSILON
            };
            if clean {
                c0 = 0.0;
            }
            let predicted = c0 + c1 * t[k];
            let d = predicted - y[k];
            loo_rss += d * d;
            let s = y[k].abs() + predicted.abs();
            if s != 0.0 {
                loo_smape += 2.0 * d.abs() / s / n as f64 * 100.0;
            }
        }
        if !valid || !loo_rss.is_finite() {
            continue;
        }
        let Some((c0, c1)) = extrap_line(&t, y) else {
            continue;
        };
        if c1 == 0.0 || too_small(max_contribution(t.iter().map(|v| c1 * v), y)) {
            continue;
        }
        if loo_smape < best_smape {
            best_smape = loo_smape;
            best = SingleModel {
                c0,
                term: Some((block, c1)),
            };
        }
    }
    best
}

/// Which building block [`single`] picks (`None`: the constant model), for callers that
/// need only Extra-P's choice (the default modeler's tie-break): every leave-one-out
/// fold's line follows in closed form from the fit on all points (Sherman–Morrison), so
/// a hypothesis costs `O(n)` instead of `n` QR factorisations. Same rules in the same
/// order; the two can differ only where two hypotheses' scores agree to rounding.
pub fn single_choice(x: &[f64], y: &[f64]) -> Option<Power> {
    let blocks = usable_blocks(x.iter().copied());
    single_choice_with(
        y,
        blocks.into_iter().map(|b| {
            let t: Vec<f64> = x.iter().map(|&v| eval_power(&b, v)).collect();
            (b, t)
        }),
    )
}

/// [`single_choice`] given every usable block with its values at the points, in Extra-P's
/// order (callers that already have the values skip their evaluation).
pub fn single_choice_with<T: AsRef<[f64]>>(
    y: &[f64],
    blocks: impl IntoIterator<Item = (Power, T)>,
) -> Option<Power> {
    let n = y.len();
    if n < 2 {
        return None;
    }
    let c_mean = mean(y);
    let constant_rss: f64 = y.iter().map(|v| (v - c_mean) * (v - c_mean)).sum();
    if constant_rss == 0.0 {
        return None;
    }
    let mut best = None;
    let mut best_smape = smape(y.iter().map(|&a| (a, c_mean)));
    let nf = n as f64;
    // The fit on all points but `k` follows from the fit on all points (Sherman–Morrison
    // on the centred 2×2 normal equations); the smallest value of each fold (for the
    // clean-constant step) is the overall minimum unless `k` holds it.
    let (kmin, ymin) =
        y.iter().enumerate().fold(
            (0, f64::INFINITY),
            |m, (k, &v)| if v < m.1 { (k, v) } else { m },
        );
    let ymin2 = y
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != kmin)
        .fold(f64::INFINITY, |m, (_, &v)| m.min(v));
    for (block, t) in blocks {
        let t = t.as_ref();
        let tm = t.iter().sum::<f64>() / nf;
        let (mut stt, mut sty, mut t2, mut ty) = (0.0, 0.0, 0.0, 0.0);
        for k in 0..n {
            let dt = t[k] - tm;
            stt += dt * dt;
            sty += dt * (y[k] - c_mean);
            t2 += t[k] * t[k];
            ty += t[k] * y[k];
        }
        if !(stt > RANK_TOLERANCE * RANK_TOLERANCE * t2) || !stt.is_finite() {
            continue;
        }
        let b = sty / stt;
        // numpy's rank truncation (see `extrap_line`), from the same sums.
        let (s1, sy) = (nf * tm, nf * c_mean);
        let truncated = |k: Option<usize>| {
            let (m, t_k, y_k) = match k {
                Some(k) => (nf - 1.0, t[k], y[k]),
                None => (nf, 0.0, 0.0),
            };
            let stt = match k {
                Some(_) => stt - nf / (nf - 1.0) * (t_k - tm) * (t_k - tm),
                None => stt,
            };
            numpy_truncated_line(
                m,
                s1 - t_k,
                t2 - t_k * t_k,
                stt,
                sy - y_k,
                ty - t_k * y_k,
                numpy_default_rcond(m as usize, 2),
            )
        };
        let mut loo_rss = 0.0;
        let mut loo_smape = 0.0;
        let mut valid = true;
        for k in 0..n {
            let dt = t[k] - tm;
            let h = 1.0 / nf + dt * dt / stt;
            // Centred sum of squares of the fold: it must keep a spread of `t`.
            let stt_fold = stt - nf / (nf - 1.0) * dt * dt;
            let t2_fold = t2 - t[k] * t[k];
            if !(stt_fold > RANK_TOLERANCE * RANK_TOLERANCE * t2_fold) || !(1.0 - h > 0.0) {
                valid = false;
                break;
            }
            let (mut c0, b_k) = truncated(Some(k)).unwrap_or_else(|| {
                let e = y[k] - (c_mean + b * dt);
                let r = e / (1.0 - h);
                let a_k = c_mean - r / nf;
                let b_k = b - dt / stt * r;
                (a_k - b_k * tm, b_k)
            });
            let min = if k == kmin { ymin2 } else { ymin };
            let clean = if min == 0.0 {
                (c0 - min).abs() < CLEAN_CONSTANT_EPSILON
            } else {
                (c0 / min).abs() < CLEAN_CONSTANT_EPSILON
            };
            if clean {
                c0 = 0.0;
            }
            let predicted = c0 + b_k * t[k];
            let d = predicted - y[k];
            loo_rss += d * d;
            let s = y[k].abs() + predicted.abs();
            if s != 0.0 {
                loo_smape += 2.0 * d.abs() / s / nf * 100.0;
            }
        }
        if !valid || !loo_rss.is_finite() {
            continue;
        }
        let b = truncated(None).map_or(b, |(_, c1)| c1);
        if b == 0.0 || too_small(max_contribution(t.iter().map(|v| b * v), y)) {
            continue;
        }
        if loo_smape < best_smape {
            best_smape = loo_smape;
            best = Some(block);
        }
    }
    best
}

/// Extra-P's `find_best_measurement_points`: per parameter, the longest lines along it,
/// averaged point by point into one line `(x, y)`.
fn best_line(data: &Prepared, l: usize, measure: Measure) -> (Vec<f64>, Vec<f64>) {
    let lines = lines_along(data, l);
    let longest = lines.iter().map(Vec::len).max().unwrap_or(0);
    let candidates: Vec<&Vec<usize>> = lines.iter().filter(|g| g.len() == longest).collect();
    // Regroup the candidate lines' points by their value of parameter l, in order of
    // first appearance (points within a line in file order, as Extra-P iterates them).
    let mut order: Vec<u64> = Vec::new();
    let mut groups: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for line in &candidates {
        let mut in_file_order = (*line).clone();
        in_file_order.sort_unstable();
        for k in in_file_order {
            let key = data.coords[k][l].to_bits();
            groups
                .entry(key)
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(k);
        }
    }
    let partial = |k: usize| -> Vec<u64> {
        data.coords[k]
            .iter()
            .enumerate()
            .filter(|(m, _)| *m != l)
            .map(|(_, v)| v.to_bits())
            .collect()
    };
    // Keep only points whose other coordinates occur in the first group.
    let common: Vec<Vec<u64>> = order
        .first()
        .map(|k| groups[k].iter().map(|&i| partial(i)).collect())
        .unwrap_or_default();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for (g, key) in order.iter().enumerate() {
        let ms: Vec<usize> = groups[key]
            .iter()
            .copied()
            .filter(|&i| g == 0 || common.contains(&partial(i)))
            .collect();
        if ms.is_empty() {
            continue;
        }
        let value = if ms.len() == 1 {
            data.y[ms[0]]
        } else {
            let v = ms.iter().map(|&i| data.y[i]).sum::<f64>() / ms.len() as f64;
            match measure {
                Measure::Mean | Measure::Median => v,
                // Extra-P rescales a combined point's minimum/maximum by the average
                // ratio to the mean; reproduced for fidelity.
                Measure::Minimum | Measure::Maximum if v == 0.0 => v,
                Measure::Minimum | Measure::Maximum => {
                    let ratios: Vec<f64> = ms
                        .iter()
                        .map(|&i| data.y[i] / data.mean[i])
                        .filter(|r| !r.is_nan())
                        .collect();
                    if ratios.is_empty() {
                        f64::NAN
                    } else {
                        mean(&ratios) * v
                    }
                }
            }
        };
        xs.push(f64::from_bits(*key));
        ys.push(value);
    }
    (xs, ys)
}

/// The forms Extra-P combines `k` non-constant single-parameter terms into, as lists of
/// terms, each term a list of indices into the kept terms (in Extra-P's order).
fn forms(k: usize) -> Vec<Vec<Vec<usize>>> {
    let all: Vec<usize> = (0..k).collect();
    let mut out = vec![vec![all.clone()], (0..k).map(|i| vec![i]).collect()];
    if k == 2 {
        out.push(vec![vec![0], all.clone()]);
        out.push(vec![vec![1], all.clone()]);
    } else if k == 3 {
        let (x, y, z) = (vec![0], vec![1], vec![2]);
        let (xy, yz, xz) = (vec![0, 1], vec![1, 2], vec![0, 2]);
        let m = all.clone();
        for f in [
            vec![m.clone(), x.clone()],
            vec![m.clone(), y.clone()],
            vec![m.clone(), z.clone()],
            vec![m.clone(), xy.clone()],
            vec![m.clone(), yz.clone()],
            vec![m.clone(), xz.clone()],
            vec![m.clone(), xy.clone(), z.clone()],
            vec![m.clone(), yz.clone(), x.clone()],
            vec![m.clone(), xz.clone(), y.clone()],
            vec![m.clone(), x.clone(), y.clone()],
            vec![m.clone(), x.clone(), z.clone()],
            vec![m.clone(), y.clone(), z.clone()],
            vec![xy.clone(), z.clone()],
            vec![xy.clone(), z.clone(), y.clone()],
            vec![xy.clone(), z.clone(), x.clone()],
            vec![xz.clone(), y.clone()],
            vec![xz.clone(), y.clone(), x.clone()],
            vec![xz.clone(), y.clone(), z.clone()],
            vec![yz.clone(), x.clone()],
            vec![yz.clone(), x.clone(), y.clone()],
            vec![yz, x, z],
        ] {
            out.push(f);
        }
    }
    out
}

/// Extra-P's multi-parameter modeler; returns the model and warnings.
fn multi(parameters: &[String], data: &Prepared, measure: Measure) -> (Pmnf, Vec<String>) {
    let mut warnings = Vec::new();
    let n = data.len();
    // Per parameter, the line model; keep the non-constant ones.
    let mut kept: Vec<(usize, Power, SingleModel)> = Vec::new();
    for (l, name) in parameters.iter().enumerate() {
        let (xs, ys) = best_line(data, l, measure);
        if xs.len() < MIN_POINTS {
            warnings.push(format!(
                "only {} points along `{name}`; Extra-P wants at least {MIN_POINTS}",
                xs.len()
            ));
        }
        let m = single(&xs, &ys);
        if let Some((p, _)) = m.term {
            kept.push((l, p, m));
        }
    }
    let y = &data.y;
    let mean_y = mean(y);
    let monomial_of = |terms: &[usize]| -> Monomial {
        let mut m = Monomial::one();
        for &t in terms {
            let (l, p, _) = &kept[t];
            m = m
                .mul(&Monomial::power(&parameters[*l], p.exp, p.log))
                .expect("small exponents");
        }
        m
    };
    let column = |terms: &[usize]| -> Vec<f64> {
        data.coords
            .iter()
            .map(|c| {
                terms
                    .iter()
                    .map(|&t| eval_power(&kept[t].1, c[kept[t].0]))
                    .product()
            })
            .collect()
    };
    let ones = vec![1.0; n];
    match kept.len() {
        0 => (Pmnf::constant(mean_y), warnings),
        1 => {
            let (_, _, sp) = kept[0];
            let t = column(&[0]);
            let c1 = sp.term.map_or(0.0, |(_, c)| c);
            let reuse = smape((0..n).map(|i| (y[i], sp.c0 + c1 * t[i])));
            let m = monomial_of(&[0]);
            let mut model = Pmnf::from_terms([(sp.c0, Monomial::one()), (c1, m.clone())]);
            if let Some(c) = extrap_fit(&[&ones, &t], y) {
                let refit = smape((0..n).map(|i| (y[i], c[0] + c[1] * t[i])));
                if refit < reuse {
                    model = Pmnf::from_terms([(c[0], Monomial::one()), (c[1], m)]);
                }
            }
            (model, warnings)
        }
        k => {
            let mut best: Option<(f64, Pmnf)> = None;
            for (i, form) in forms(k).iter().enumerate() {
                let cols: Vec<Vec<f64>> = form.iter().map(|t| column(t)).collect();
                let mut refs: Vec<&[f64]> = vec![&ones];
                refs.extend(cols.iter().map(|c| c.as_slice()));
                let Some(coef) = extrap_fit(&refs, y) else {
                    continue;
                };
                let predicted: Vec<f64> = (0..n)
                    .map(|p| {
                        coef[0]
                            + (0..cols.len())
                                .map(|j| coef[j + 1] * cols[j][p])
                                .sum::<f64>()
                    })
                    .collect();
                let e = smape((0..n).map(|p| (y[p], predicted[p])));
                let model = Pmnf::from_terms(
                    std::iter::once((coef[0], Monomial::one())).chain(
                        form.iter()
                            .enumerate()
                            .map(|(j, t)| (coef[j + 1], monomial_of(t))),
                    ),
                );
                // The product form is the starting point, unchecked (as in Extra-P).
                if i == 0 || best.is_none() {
                    if best.is_none() {
                        best = Some((e, model.clone()));
                    }
                    if i == 0 {
                        continue;
                    }
                }
                let contributes = (0..cols.len()).all(|j| {
                    let c = coef[j + 1];
                    c != 0.0 && !too_small(max_contribution(cols[j].iter().map(|v| c * v), y))
                });
                if contributes && best.as_ref().is_some_and(|(b, _)| e < *b) {
                    best = Some((e, model));
                }
            }
            match best {
                Some((_, m)) => (m, warnings),
                None => {
                    warnings.push("no combination could be fitted; constant model".into());
                    (Pmnf::constant(mean_y), warnings)
                }
            }
        }
    }
}

impl Modeler for ExtraP {
    fn name(&self) -> &'static str {
        "extrap"
    }

    fn description(&self) -> &'static str {
        "Extra-P 4.2.5's default modeler: one term from 42 hypotheses by leave-one-out SMAPE; multi-parameter by line models and their sums/products"
    }

    /// Extra-P models the mean of the repetitions; so does this modeler unless told
    /// otherwise, so that it reproduces Extra-P's models.
    fn default_measure(&self) -> Measure {
        Measure::Mean
    }

    fn fit(
        &self,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
    ) -> Result<Fit, FitError> {
        let measure = options.measure_for(self);
        let options = &FitOptions {
            measure: Some(measure),
            ..options.clone()
        };
        let data = prepare(parameters, points, options)?;
        if parameters.is_empty() {
            let m = Pmnf::constant(mean(&data.y));
            return Ok(finish_pmnf(parameters, &data, m, None, Vec::new()));
        }
        let (model, warnings) = if parameters.len() == 1 {
            let mut w = Vec::new();
            if data.len() < MIN_POINTS {
                w.push(format!(
                    "only {} points; Extra-P wants at least {MIN_POINTS}",
                    data.len()
                ));
            }
            let x: Vec<f64> = data.column(0).collect();
            let m = single(&x, &data.y);
            let mut terms = vec![(m.c0, Monomial::one())];
            if let Some((p, c)) = m.term {
                terms.push((c, Monomial::power(&parameters[0], p.exp, p.log)));
            }
            (Pmnf::from_terms(terms), w)
        } else {
            multi(parameters, &data, measure)
        };
        Ok(finish_pmnf(parameters, &data, model, None, warnings))
    }
}
