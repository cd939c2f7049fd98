//! Uncertainty of component models, carried through a composition by sampling.
//!
//! A model fitted from measurements is an estimate: its coefficients have a covariance
//! ([`crate::fit::FitStats::covariance`]). [`Uncertain::from_fit`] keeps it with a
//! *template* of the model — the same terms with each coefficient a parameter of its own
//! (`qsort·0`, `qsort·1`, ...). Composing templates instead of point models gives a model of
//! the whole program in those parameters; [`Draws`] samples the coefficients of every
//! uncertain component (a fixed seed, so that output is reproducible) and the composed
//! template is evaluated at each draw ([`crate::model::Batch`]). Sampling, rather than a
//! linear propagation, because a pipeline's `max` is not linear: near a crossover either
//! stage may lead.
//!
//! The coefficients' covariance describes the chosen model's terms only: where the
//! modeler picks the wrong exponents (noise hides a term), an interval from it is tight
//! around the wrong curve. [`bootstrap`] also carries the choice of terms: it refits the
//! same modeler to the points with each point's repetitions resampled. A component's
//! [`Uncertainty`] is a mixture: one normal distribution per refit, over the union of the
//! terms the refits chose (coverage in `docs/fitting.md`).
//!
//! The intervals are those of the statistic the model was fitted to (by default the
//! minimum of each point's repetitions, [`crate::measure::Measure`]): where the true
//! model lies, not one run's measurement.

mod advice;
mod bootstrap;
#[cfg(test)]
mod tests;

pub use advice::{Design, MeasureAt};
pub use bootstrap::{bootstrap, fitted};

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

use crate::fit::Fit;
use crate::model::{Env, EvalError, Expr, Monomial, Pmnf};

/// Draws used for intervals unless told otherwise.
pub const DEFAULT_DRAWS: usize = 1000;
/// The seed of the draws unless told otherwise.
pub const DEFAULT_SEED: u64 = 0x5EED;
/// Bootstrap refits of a fitted component.
pub const DEFAULT_REPLICATES: usize = 100;

/// A model with normally distributed coefficients: the terms of a PMNF model, each
/// coefficient a parameter of the template.
#[derive(Clone, Debug, PartialEq)]
pub struct Uncertain {
    /// The component.
    pub name: String,
    /// The model's terms (a coefficient each).
    pub terms: Vec<Monomial>,
    /// `Σ coefficients[j] · terms[j]`.
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

fn template_of(terms: &[Monomial], coefficients: &[String]) -> Expr {
    Expr::sum_of(
        terms
            .iter()
            .zip(coefficients)
            .map(|(m, name)| Expr::mul(Expr::param(name), Expr::Poly(Pmnf::term(1.0, m.clone()))))
            .collect(),
    )
}

impl Uncertain {
    /// The PMNF model `model` with the covariance `covariance` of its coefficients (in
    /// the order the model's terms print); `None` when the model is not PMNF or the
    /// sizes differ.
    pub fn new(component: &str, model: &Expr, covariance: Vec<Vec<f64>>) -> Option<Uncertain> {
        let p = model.as_pmnf()?;
        let terms: Vec<Monomial> = p.terms().map(|(_, m)| m.clone()).collect();
        if terms.is_empty()
            || covariance.len() != terms.len()
            || covariance.iter().any(|r| r.len() != terms.len())
        {
            return None;
        }
        let coefficients: Vec<String> = (0..terms.len())
            .map(|j| coefficient_name(component, j))
            .collect();
        Some(Uncertain {
            name: component.to_string(),
            template: template_of(&terms, &coefficients),
            terms,
            coefficients,
            mean: p.terms().map(|(c, _)| c).collect(),
            covariance,
        })
    }

    /// The uncertain model of a PMNF fit with a covariance (`None` for other fits, or
    /// without residual degrees of freedom).
    pub fn from_fit(component: &str, fit: &Fit) -> Option<Uncertain> {
        Uncertain::new(component, &fit.model, fit.stats.covariance.clone()?)
    }

    /// The value of the template with the mean coefficients: the model itself.
    pub fn model(&self) -> Expr {
        Expr::Poly(Pmnf::from_terms(
            self.mean.iter().copied().zip(self.terms.iter().cloned()),
        ))
    }
}

/// A square root `L` of a covariance (`L·Lᵀ = Σ`): Cholesky's when the matrix is
/// positive definite, else from its eigenvectors with negative eigenvalues (rounding)
/// taken as 0.
fn root(covariance: &[Vec<f64>]) -> DMatrix<f64> {
    let n = covariance.len();
    let m = DMatrix::from_fn(n, n, |i, j| 0.5 * (covariance[i][j] + covariance[j][i]));
    if let Some(c) = m.clone().cholesky() {
        return c.l();
    }
    let e = SymmetricEigen::new(m);
    let d = DMatrix::from_diagonal(&e.eigenvalues.map(|v| v.max(0.0).sqrt()));
    e.eigenvectors * d
}

/// One normal distribution of a mixture.
#[derive(Clone, Debug, PartialEq)]
struct Part {
    mean: Vec<f64>,
    /// `L` with `L·Lᵀ` the covariance.
    root: DMatrix<f64>,
}

/// Where a component's uncertainty comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Bootstrap refits of its measurements.
    Bootstrap,
    /// The covariance of one fit (too few repetitions to resample).
    FitCovariance,
    /// Stated in the components file.
    Stated,
}

/// The uncertainty of one component's model: a template in coefficient parameters, the
/// coefficients that give the component's own model, and their distribution — a
/// mixture of normal distributions with equal weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Uncertainty {
    pub component: String,
    pub template: Expr,
    pub coefficients: Vec<String>,
    /// The coefficients of the component's model (the point prediction).
    pub center: Vec<f64>,
    parts: Vec<Part>,
    pub source: Source,
    /// What a new measurement would add (fitted components).
    pub design: Option<Design>,
}

impl Uncertainty {
    /// One normal distribution.
    pub fn normal(u: &Uncertain, source: Source) -> Uncertainty {
        Uncertainty {
            component: u.name.clone(),
            template: u.template.clone(),
            coefficients: u.coefficients.clone(),
            center: u.mean.clone(),
            parts: vec![Part {
                mean: u.mean.clone(),
                root: root(&u.covariance),
            }],
            source,
            design: None,
        }
    }

    /// The fit `center` and its bootstrap refits `replicates`, over the union of their
    /// terms (a refit's coefficient of a term it did not choose is 0).
    pub fn mixture(center: &Uncertain, replicates: &[Uncertain]) -> Uncertainty {
        let mut terms: Vec<Monomial> = center.terms.clone();
        for r in replicates {
            for t in &r.terms {
                if !terms.contains(t) {
                    terms.push(t.clone());
                }
            }
        }
        let n = terms.len();
        let coefficients: Vec<String> = (0..n).map(|j| coefficient_name(&center.name, j)).collect();
        let embed = |u: &Uncertain| {
            let index: Vec<usize> = u
                .terms
                .iter()
                .map(|t| terms.iter().position(|s| s == t).unwrap_or(0))
                .collect();
            let mut mean = vec![0.0; n];
            for (i, m) in index.iter().zip(&u.mean) {
                mean[*i] = *m;
            }
            let l = root(&u.covariance);
            let mut full = DMatrix::zeros(n, u.terms.len());
            for (r, i) in index.iter().enumerate() {
                for c in 0..u.terms.len() {
                    full[(*i, c)] = l[(r, c)];
                }
            }
            Part { mean, root: full }
        };
        let center_part = embed(center);
        let parts: Vec<Part> = if replicates.is_empty() {
            vec![center_part.clone()]
        } else {
            replicates.iter().map(embed).collect()
        };
        Uncertainty {
            component: center.name.clone(),
            template: template_of(&terms, &coefficients),
            coefficients,
            center: center_part.mean,
            parts,
            source: if replicates.is_empty() {
                Source::FitCovariance
            } else {
                Source::Bootstrap
            },
            design: None,
        }
    }

    /// Any model known to within a relative standard error `relative`: the model times
    /// a factor drawn from N(1, relative²).
    pub fn relative(component: &str, model: &Expr, relative: f64) -> Uncertainty {
        let name = coefficient_name(component, 0);
        Uncertainty {
            component: component.to_string(),
            template: Expr::mul(Expr::param(&name), model.clone()),
            coefficients: vec![name],
            center: vec![1.0],
            parts: vec![Part {
                mean: vec![1.0],
                root: DMatrix::from_element(1, 1, relative.abs()),
            }],
            source: Source::Stated,
            design: None,
        }
    }

    /// The same uncertainty as component `component`'s (its coefficient parameters
    /// renamed).
    pub fn renamed(&self, component: &str) -> Uncertainty {
        let coefficients: Vec<String> = (0..self.coefficients.len())
            .map(|j| coefficient_name(component, j))
            .collect();
        let bindings: Vec<(&str, Expr)> = self
            .coefficients
            .iter()
            .zip(&coefficients)
            .map(|(old, new)| (old.as_str(), Expr::param(new)))
            .collect();
        Uncertainty {
            component: component.to_string(),
            template: self.template.subst_all(&bindings),
            coefficients,
            ..self.clone()
        }
    }

    /// The uncertainty of the model times `factor` (a model converted to another unit):
    /// the template is scaled, the coefficients and their distribution stay as they are.
    pub fn scaled(&self, factor: f64) -> Uncertainty {
        Uncertainty {
            template: Expr::mul(Expr::constant(factor), self.template.clone()),
            ..self.clone()
        }
    }

    /// Bootstrap refits in the mixture (1 for a single normal distribution).
    pub fn replicates(&self) -> usize {
        self.parts.len()
    }

    /// `count` draws of the coefficients, from `seed`: draw `k` comes from part `k mod
    /// parts`, so that every refit is drawn equally often.
    fn sample(&self, count: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ name_hash(&self.component));
        let n = self.coefficients.len();
        let mut columns = vec![Vec::with_capacity(count); n];
        for k in 0..count {
            let part = &self.parts[k % self.parts.len()];
            let z = DVector::from_fn(part.root.ncols(), |_, _| StandardNormal.sample(&mut rng));
            let dev = &part.root * z;
            for (j, col) in columns.iter_mut().enumerate() {
                col.push(part.mean[j] + dev[j]);
            }
        }
        columns
    }
}

/// FNV-1a of a component's name: each component draws from a stream of its own, so that
/// its draws do not change when other components join the composition.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Sampled coefficients of several uncertain components: column `i` holds the `i`-th
/// coefficient parameter's value in every draw.
#[derive(Clone, Debug)]
pub struct Draws {
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
    count: usize,
}

/// A two-sided interval at a confidence level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

impl Draws {
    /// `count` draws of every component's coefficients, from `seed`.
    pub fn sample(components: &[&Uncertainty], count: usize, seed: u64) -> Draws {
        Draws::sample_only(components, None, count, seed)
    }

    /// [`Draws::sample`] with only component `only` drawn (when given), every other at
    /// its center: the spread one component causes alone.
    pub fn sample_only(
        components: &[&Uncertainty],
        only: Option<usize>,
        count: usize,
        seed: u64,
    ) -> Draws {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for (i, c) in components.iter().enumerate() {
            names.extend(c.coefficients.iter().cloned());
            if only.is_none_or(|o| o == i) {
                columns.extend(c.sample(count, seed));
            } else {
                columns.extend(c.center.iter().map(|v| vec![*v; count]));
            }
        }
        Draws {
            names,
            columns,
            count,
        }
    }

    /// The coefficient parameters, in column order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// The columns, for [`crate::model::Batch::eval`].
    pub fn columns(&self) -> Vec<&[f64]> {
        self.columns.iter().map(Vec::as_slice).collect()
    }

    /// The values of `model` (a composition of templates) at `point`, one per draw (draws
    /// where it is not a finite number left out).
    pub fn values(&self, model: &Expr, point: &dyn Env) -> Result<Vec<f64>, EvalError> {
        let mut out = Vec::with_capacity(self.count);
        model
            .batch(&self.names)
            .eval(point, &self.columns(), self.count, &mut out)?;
        out.retain(|v| v.is_finite());
        Ok(out)
    }
}

/// The share of pairs `(a[k], b[k])` in which `a[k] < b[k]`, over the draws where both
/// are finite numbers (`None` when there is none).
pub fn probability_smaller(a: &[f64], b: &[f64]) -> Option<f64> {
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|(x, y)| (*x, *y))
        .collect();
    (!pairs.is_empty())
        .then(|| pairs.iter().filter(|(x, y)| x < y).count() as f64 / pairs.len() as f64)
}

/// The central interval of `level` of the finite `values` (draws where a model is not a
/// finite number are left out; `None` with fewer than two left).
pub fn interval_of(mut values: Vec<f64>, level: f64) -> Option<Interval> {
    values.retain(|v| v.is_finite());
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
