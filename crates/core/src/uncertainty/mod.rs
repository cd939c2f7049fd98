//! Uncertainty of fitted models, carried through a composition by sampling.
//!
//! A model fitted from measurements is an estimate: its coefficients have a covariance
//! ([`crate::fit::FitStats::covariance`]). [`Uncertain::from_fit`] keeps it with a
//! *template* of the model — the same terms with each coefficient a parameter of its own
//! (`qsort·0`, `qsort·1`, ...). Composing templates instead of point models gives a model of
//! the whole program in those parameters; [`Draws`] samples the coefficients of every
//! uncertain component from their multivariate normal distributions (a fixed seed, so
//! that output is reproducible) and [`Draws::interval`] evaluates the composed template at
//! each draw. Sampling, rather than a linear propagation, because a pipeline's `max` is
//! not linear: near a crossover either stage may lead.
//!
//! The coefficients' covariance describes the chosen model's terms only: where the
//! modeler picks the wrong exponents (noise hides a term), an interval from it is tight
//! around the wrong curve. [`Ensemble::bootstrap`] also carries the choice of terms: it
//! refits the same modeler to the points with each point's repetitions resampled, and
//! draws from every refit's coefficients (coverage in `docs/fitting.md`).
//!
//! The intervals are those of the mean time (where the true model lies), not of one
//! run's measurement.

#[cfg(test)]
mod tests;

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

use crate::fit::{Fit, FitOptions, Modeler};
use crate::measure::Point;
use crate::model::{Expr, Pmnf};

/// Draws used for intervals unless told otherwise.
pub const DEFAULT_DRAWS: usize = 2000;
/// The seed of the draws unless told otherwise.
pub const DEFAULT_SEED: u64 = 0x5EED;

/// A component's model with uncertain coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct Uncertain {
    /// The component.
    pub name: String,
    /// The model with each coefficient a parameter named in `coefficients`.
    pub template: Expr,
    /// Parameter names of the coefficients, in the covariance's order.
    pub coefficients: Vec<String>,
    pub mean: Vec<f64>,
    pub covariance: Vec<Vec<f64>>,
}

/// The parameter a component's `j`-th coefficient becomes in its template (a name no user
/// can write).
pub fn coefficient_name(component: &str, j: usize) -> String {
    format!("{component}·{j}")
}

impl Uncertain {
    /// The uncertain model of a PMNF fit with a covariance (`None` for other fits, or
    /// without residual degrees of freedom).
    pub fn from_fit(component: &str, fit: &Fit) -> Option<Uncertain> {
        let p = fit.pmnf()?;
        let cov = fit.stats.covariance.clone()?;
        let terms: Vec<(f64, Expr)> = p
            .terms()
            .map(|(c, m)| (c, Expr::Poly(Pmnf::term(1.0, m.clone()))))
            .collect();
        if terms.len() != cov.len() || terms.is_empty() {
            return None;
        }
        let coefficients: Vec<String> = (0..terms.len())
            .map(|j| coefficient_name(component, j))
            .collect();
        let template = Expr::sum_of(
            terms
                .iter()
                .zip(&coefficients)
                .map(|((_, shape), name)| Expr::mul(Expr::param(name), shape.clone()))
                .collect(),
        );
        Some(Uncertain {
            name: component.to_string(),
            template,
            coefficients,
            mean: terms.iter().map(|(c, _)| *c).collect(),
            covariance: cov,
        })
    }

    /// A model given with relative standard errors per coefficient of its PMNF form
    /// (`relative` of each coefficient's magnitude, uncorrelated).
    pub fn relative(component: &str, model: &Expr, relative: f64) -> Option<Uncertain> {
        let p = model.as_pmnf()?;
        let coefficients: Vec<String> = (0..p.terms().count())
            .map(|j| coefficient_name(component, j))
            .collect();
        let mean: Vec<f64> = p.terms().map(|(c, _)| c).collect();
        let n = mean.len();
        let mut covariance = vec![vec![0.0; n]; n];
        for (j, c) in mean.iter().enumerate() {
            covariance[j][j] = (relative * c).powi(2);
        }
        let template = Expr::sum_of(
            p.terms()
                .zip(&coefficients)
                .map(|((_, m), name)| {
                    Expr::mul(Expr::param(name), Expr::Poly(Pmnf::term(1.0, m.clone())))
                })
                .collect(),
        );
        Some(Uncertain {
            name: component.to_string(),
            template,
            coefficients,
            mean,
            covariance,
        })
    }

    /// The same model as component `component` (its coefficient parameters renamed).
    pub fn renamed(&self, component: &str) -> Uncertain {
        let coefficients: Vec<String> = (0..self.coefficients.len())
            .map(|j| coefficient_name(component, j))
            .collect();
        let mut template = self.template.clone();
        for (old, new) in self.coefficients.iter().zip(&coefficients) {
            template = template.subst(old, &Expr::param(new));
        }
        Uncertain {
            name: component.to_string(),
            template,
            coefficients,
            mean: self.mean.clone(),
            covariance: self.covariance.clone(),
        }
    }

    /// A square root `L` of the covariance (`L·Lᵀ = Σ`): Cholesky's when the matrix is
    /// positive definite, else from its eigenvectors with negative eigenvalues (rounding)
    /// taken as 0.
    fn root(&self) -> DMatrix<f64> {
        let n = self.mean.len();
        let m = DMatrix::from_fn(n, n, |i, j| {
            0.5 * (self.covariance[i][j] + self.covariance[j][i])
        });
        if let Some(c) = m.clone().cholesky() {
            return c.l();
        }
        let e = SymmetricEigen::new(m);
        let d = DMatrix::from_diagonal(&e.eigenvalues.map(|v| v.max(0.0).sqrt()));
        e.eigenvectors * d
    }
}

/// Sampled coefficients of several uncertain components: draw `k` binds every
/// coefficient parameter.
#[derive(Clone, Debug)]
pub struct Draws {
    names: Vec<String>,
    /// `values[k][i]`: the `i`-th name's value in draw `k`.
    values: Vec<Vec<f64>>,
}

/// A two-sided interval at a confidence level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

impl Draws {
    /// `draws` samples of every component's coefficients, from `seed`.
    pub fn sample(components: &[Uncertain], draws: usize, seed: u64) -> Draws {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let roots: Vec<DMatrix<f64>> = components.iter().map(Uncertain::root).collect();
        let names = components
            .iter()
            .flat_map(|c| c.coefficients.iter().cloned())
            .collect();
        let values = (0..draws)
            .map(|_| {
                let mut row = Vec::new();
                for (c, l) in components.iter().zip(&roots) {
                    let z = DVector::from_fn(c.mean.len(), |_, _| StandardNormal.sample(&mut rng));
                    let dev = l * z;
                    row.extend(c.mean.iter().zip(dev.iter()).map(|(m, d)| m + d));
                }
                row
            })
            .collect();
        Draws { names, values }
    }

    /// The value of `model` at `point` in each draw (`None` where it cannot be evaluated).
    fn each(&self, model: &Expr, point: &[(&str, f64)]) -> Vec<Option<f64>> {
        self.values
            .iter()
            .map(|row| {
                let mut env: Vec<(&str, f64)> = point.to_vec();
                env.extend(
                    self.names
                        .iter()
                        .map(String::as_str)
                        .zip(row.iter().copied()),
                );
                model.eval_at(&env).ok().filter(|v| v.is_finite())
            })
            .collect()
    }

    /// The values of `model` (a composition of templates) at `point`, one per draw
    /// (draws where it cannot be evaluated left out).
    pub fn values(&self, model: &Expr, point: &[(&str, f64)]) -> Vec<f64> {
        self.each(model, point).into_iter().flatten().collect()
    }

    /// The central interval of `level` of `model` at `point`: the `(1 − level)/2` and
    /// `(1 + level)/2` quantiles of its values over the draws.
    pub fn interval(&self, model: &Expr, point: &[(&str, f64)], level: f64) -> Option<Interval> {
        interval_of(self.values(model, point), level)
    }

    /// The share of draws in which `first` is smaller than `second` at `point` (over
    /// the draws where both can be evaluated).
    pub fn probability_smaller(
        &self,
        first: &Expr,
        second: &Expr,
        point: &[(&str, f64)],
    ) -> Option<f64> {
        let pairs: Vec<(f64, f64)> = self
            .each(first, point)
            .into_iter()
            .zip(self.each(second, point))
            .filter_map(|(a, b)| Some((a?, b?)))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        Some(pairs.iter().filter(|(a, b)| a < b).count() as f64 / pairs.len() as f64)
    }
}

/// A fitted model's bootstrap replicates: refits of the same modeler to the points with
/// each point's repetitions drawn again with replacement, each with its coefficients'
/// covariance.
#[derive(Clone, Debug)]
pub struct Ensemble {
    pub name: String,
    pub replicates: Vec<Uncertain>,
}

impl Ensemble {
    /// `replicates` refits of `modeler` to `points` resampled from `seed` (refits that
    /// fail or have no covariance are left out; `None` when none is left).
    pub fn bootstrap(
        name: &str,
        modeler: &dyn Modeler,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
        replicates: usize,
        seed: u64,
    ) -> Option<Ensemble> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let replicates: Vec<Uncertain> = (0..replicates)
            .filter_map(|_| {
                let resampled: Vec<Point> = points
                    .iter()
                    .map(|p| {
                        let n = p.values.len();
                        let values = (0..n).map(|_| p.values[rng.gen_range(0..n)]).collect();
                        Point::new(p.coordinate.clone(), values)
                    })
                    .collect();
                let fit = modeler.fit(parameters, &resampled, options).ok()?;
                Uncertain::from_fit(name, &fit)
            })
            .collect();
        (!replicates.is_empty()).then(|| Ensemble {
            name: name.to_string(),
            replicates,
        })
    }

    /// Values of the model at `point`: `per_replicate` coefficient draws of every
    /// replicate, from `seed`.
    pub fn values(&self, point: &[(&str, f64)], per_replicate: usize, seed: u64) -> Vec<f64> {
        self.replicates
            .iter()
            .enumerate()
            .flat_map(|(k, u)| {
                Draws::sample(
                    std::slice::from_ref(u),
                    per_replicate,
                    seed.wrapping_add(k as u64),
                )
                .values(&u.template, point)
            })
            .collect()
    }
}

/// The central interval of `level` of `values` (`None` with fewer than two).
pub fn interval_of(mut values: Vec<f64>, level: f64) -> Option<Interval> {
    if values.len() < 2 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let h = p * (values.len() - 1) as f64;
        let (i, f) = (h.floor() as usize, h.fract());
        values[i] + f * (values[(i + 1).min(values.len() - 1)] - values[i])
    };
    Some(Interval {
        level,
        low: q((1.0 - level) / 2.0),
        high: q((1.0 + level) / 2.0),
    })
}
