//! Where to measure a fitted component again: the point whose measurement would shrink
//! the variance of the component's value at the argument a prediction needs most.
//!
//! For a least-squares fit with coefficient covariance `C`, one more point `u` measured
//! with variance `σ²(u)` changes the covariance to `C − C·a·aᵀ·C / (σ²(u) + aᵀ·C·a)`
//! (Sherman–Morrison), where `a` holds the model's terms at `u`. The variance of the
//! value at `v` (terms `g`) falls by `(gᵀ·C·a)² / (σ²(u) + aᵀ·C·a)`. `σ²(u)` is taken
//! from the measurements: the median relative spread of a point's repetitions, at the
//! model's value at `u`, over the median number of repetitions. Candidates are the
//! measured values of each parameter, doublings beyond the largest (halvings below the
//! smallest) up to the value needed, and that value itself.

use std::collections::BTreeMap;

use nalgebra::{DMatrix, DVector};
use serde::Serialize;

use super::Uncertain;
use crate::fit::Fit;
use crate::measure::Point;
use crate::model::{Expr, Monomial, Pmnf};

/// Largest number of candidate points tried.
const MAX_CANDIDATES: usize = 4096;

/// What a fitted component's measurements were, for advice on the next one.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    pub parameters: Vec<String>,
    terms: Vec<Monomial>,
    covariance: DMatrix<f64>,
    model: Expr,
    /// Median relative standard deviation of a point's repetitions.
    pub relative_noise: f64,
    /// Median repetitions per point.
    pub repetitions: usize,
    /// The distinct measured values of each parameter, sorted.
    pub measured: Vec<Vec<f64>>,
}

/// A point worth measuring, and the share of the variance at the needed argument it
/// would remove.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasureAt {
    pub point: BTreeMap<String, f64>,
    pub reduction: f64,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

impl Design {
    /// The design of `fit` (whose uncertain model is `u`) over `points`.
    pub fn from_fit(u: &Uncertain, fit: &Fit, points: &[Point]) -> Option<Design> {
        let spreads: Vec<f64> = points
            .iter()
            .filter(|p| p.values.len() >= 2)
            .filter_map(|p| {
                let n = p.values.len() as f64;
                let mean = p.values.iter().sum::<f64>() / n;
                let var = p.values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
                (mean.abs() > 0.0).then(|| var.sqrt() / mean.abs())
            })
            .collect();
        let relative_noise = median(spreads).unwrap_or(0.0);
        let repetitions = median(points.iter().map(|p| p.values.len() as f64).collect())
            .map_or(1, |m| m.round().max(1.0) as usize);
        let measured = (0..fit.parameters.len())
            .map(|i| {
                let mut v: Vec<f64> = points
                    .iter()
                    .filter_map(|p| p.coordinate.get(i).copied())
                    .collect();
                v.sort_by(f64::total_cmp);
                v.dedup();
                v
            })
            .collect();
        let n = u.terms.len();
        Some(Design {
            parameters: fit.parameters.clone(),
            terms: u.terms.clone(),
            covariance: DMatrix::from_fn(n, n, |i, j| u.covariance[i][j]),
            model: u.model(),
            relative_noise,
            repetitions,
            measured,
        })
    }

    fn row(&self, at: &[f64]) -> Option<DVector<f64>> {
        let mut lookup = |name: &str| {
            self.parameters
                .iter()
                .position(|p| p == name)
                .and_then(|i| at.get(i).copied())
        };
        let v: Option<Vec<f64>> = self
            .terms
            .iter()
            .map(|m| Pmnf::term(1.0, m.clone()).eval_with(&mut lookup))
            .collect();
        let v = v?;
        v.iter()
            .all(|x| x.is_finite())
            .then(|| DVector::from_vec(v))
    }

    /// The variance of the model's value at `at` (one value per parameter).
    pub fn variance_at(&self, at: &[f64]) -> Option<f64> {
        let g = self.row(at)?;
        Some((g.transpose() * &self.covariance * &g)[(0, 0)])
    }

    /// Candidate values of parameter `i` for a value `needed`.
    fn candidates(&self, i: usize, needed: f64) -> Vec<f64> {
        let mut c = self.measured[i].clone();
        let (Some(&lo), Some(&hi)) = (c.first(), c.last()) else {
            return vec![needed];
        };
        let mut v = hi;
        while needed > v * 1.000_001 && c.len() < 64 {
            v = (v * 2.0).min(needed);
            c.push(v);
        }
        let mut v = lo;
        while needed < v / 1.000_001 && v > 0.0 && c.len() < 128 {
            v = (v / 2.0).max(needed);
            c.push(v);
        }
        c.sort_by(f64::total_cmp);
        c.dedup();
        c
    }

    /// Up to `count` points whose measurement would shrink the variance of the value at
    /// `needed` (one value per parameter) the most, best first; each with the share of
    /// that variance it removes.
    pub fn measure_at(&self, needed: &[f64], count: usize) -> Vec<MeasureAt> {
        let Some(g) = self.row(needed) else {
            return Vec::new();
        };
        let cg = &self.covariance * &g;
        let total = g.dot(&cg);
        if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Vec::new();
        }
        let per: Vec<Vec<f64>> = (0..self.parameters.len())
            .map(|i| self.candidates(i, needed.get(i).copied().unwrap_or(1.0)))
            .collect();
        let mut scored: Vec<(f64, Vec<f64>)> = Vec::new();
        let mut index = vec![0usize; per.len()];
        for _ in 0..MAX_CANDIDATES {
            let at: Vec<f64> = index.iter().zip(&per).map(|(k, v)| v[*k]).collect();
            if let (Some(a), Ok(value)) = (
                self.row(&at),
                self.model.eval(&crate::model::Pairs(
                    &self
                        .parameters
                        .iter()
                        .map(String::as_str)
                        .zip(at.iter().copied())
                        .collect::<Vec<_>>(),
                )),
            ) {
                let sigma2 = (self.relative_noise * value).powi(2) / self.repetitions as f64;
                let ca = &self.covariance * &a;
                let denom = sigma2 + a.dot(&ca);
                if denom > 0.0 {
                    let r = g.dot(&ca).powi(2) / denom / total;
                    if r.is_finite() {
                        scored.push((r.min(1.0), at));
                    }
                }
            }
            // Next combination.
            let mut d = 0;
            loop {
                if d == index.len() {
                    break;
                }
                index[d] += 1;
                if index[d] < per[d].len() {
                    break;
                }
                index[d] = 0;
                d += 1;
            }
            if d == index.len() {
                break;
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored
            .into_iter()
            .take(count)
            .map(|(r, at)| MeasureAt {
                point: self.parameters.iter().cloned().zip(at).collect(),
                reduction: r,
            })
            .collect()
    }
}
