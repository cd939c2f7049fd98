//! Prediction intervals: the uncertainty of the components carried through the
//! composition by sampling.
//!
//! Every uncertain component's model is replaced by its template (its coefficients
//! become parameters, [`crate::uncertainty`]) and the term is composed as usual — every
//! operator, from a pipeline's `max` to a MapReduce's substitutions and a communication
//! function, applies unchanged. The composed template is compiled once
//! ([`crate::model::Batch`]) and evaluated at each point for every draw of the
//! coefficients, each value below zero taken as 0 (a total is not negative,
//! [`nonnegative`]); the interval is the central `level` share of the values. A component
//! used twice in a term is the same model twice: both places see the same draw. Draws
//! come from a fixed seed, and each component from a stream of its own, so output is
//! reproducible and a design's interval does not change when another design is
//! compared with it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::overhead::Overhead;
use super::{compose, ComposeOptions};
use crate::components::{Component, Components};
use crate::diag::Diagnostic;
use crate::model::{Batch, Env, EvalError, Expr};
use crate::term::Term;
use crate::uncertainty::{
    interval_of, Draws, Interval, MeasureAt, Uncertainty, DEFAULT_DRAWS, DEFAULT_SEED,
};

/// How intervals are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalOptions {
    /// The confidence level of the intervals (0.95).
    pub level: f64,
    pub draws: usize,
    pub seed: u64,
}

impl Default for IntervalOptions {
    fn default() -> Self {
        IntervalOptions {
            level: 0.95,
            draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
        }
    }
}

/// `components` with every uncertain model replaced by its template.
pub fn templated(components: &Components) -> Components {
    components
        .iter()
        .filter_map(|c| {
            let u = c.uncertainty.as_ref()?;
            Some(Component {
                model: u.template.clone(),
                ..c.clone()
            })
        })
        .fold(components.clone(), Components::with)
}

/// The composed model of `term` over the components' templates (with the runtime's
/// overhead when given), in the program's parameters and the components'
/// coefficients.
pub fn composed_template(
    term: &Term,
    templates: &Components,
    opts: ComposeOptions,
    overhead: Option<&Overhead>,
) -> Result<Expr, Diagnostic> {
    let comp = compose(term, templates, opts)?;
    Ok(match overhead {
        Some(o) => o.apply_composed(&comp, term, templates, opts),
        None => comp.model,
    })
}

/// Draws of the coefficients of the uncertain components some models use.
pub struct Sampler {
    /// The uncertain components used, in the draws' order.
    pub components: Vec<Uncertainty>,
    draws: Draws,
    pub options: IntervalOptions,
}

impl Sampler {
    /// Draws for the uncertain components of `components` that `models` (composed
    /// templates) mention; `None` when none does.
    pub fn new(
        models: &[&Expr],
        components: &Components,
        options: IntervalOptions,
    ) -> Option<Sampler> {
        let params: std::collections::BTreeSet<String> =
            models.iter().flat_map(|m| m.params()).collect();
        let used: Vec<Uncertainty> = components
            .iter()
            .filter_map(|c| c.uncertainty.clone())
            .filter(|u| u.coefficients.iter().any(|n| params.contains(n)))
            .collect();
        if used.is_empty() {
            return None;
        }
        let refs: Vec<&Uncertainty> = used.iter().collect();
        let draws = Draws::sample(&refs, options.draws, options.seed);
        Some(Sampler {
            components: used,
            draws,
            options,
        })
    }

    /// Compile `model` for these draws.
    pub fn batch(&self, model: &Expr) -> Batch {
        model.batch(self.draws.names())
    }

    /// The values of `batch` (a program's total) at `point`, one per draw (not finite
    /// where the model is not a finite number in that draw), each negative one taken as
    /// 0 ([`nonnegative`]).
    pub fn values(&self, batch: &Batch, point: &dyn Env) -> Result<Vec<f64>, EvalError> {
        let mut out = Vec::with_capacity(self.draws.count());
        batch.eval(point, &self.draws.columns(), self.draws.count(), &mut out)?;
        nonnegative(&mut out);
        Ok(out)
    }

    /// The interval of `batch` at `point`.
    pub fn interval(&self, batch: &Batch, point: &dyn Env) -> Option<Interval> {
        interval_of(self.values(batch, point).ok()?, self.options.level)
    }

    /// The same draws with only component `i` drawn, the others at their own models.
    pub fn only(&self, i: usize) -> Sampler {
        let refs: Vec<&Uncertainty> = self.components.iter().collect();
        Sampler {
            components: self.components.clone(),
            draws: Draws::sample_only(&refs, Some(i), self.options.draws, self.options.seed),
            options: self.options,
        }
    }
}

/// Every draw of a total below zero taken as 0, its mass kept there.
///
/// A composed term is the total of a time (or bytes, flops): never negative, though its
/// parts may be — a fitted constant or overhead term below zero, or a stated model
/// drawn far from its center. The draws stay those of the components (each drawn from
/// its own distribution, negative coefficients and all); only the program's total is
/// truncated. `max(0, ·)` is monotone, so a quantile of the truncated draws is the
/// quantile of the raw draws truncated (to within the interpolation between the two
/// draws around it): an interval's low end below zero becomes 0, every interval above
/// zero is unchanged, and a truth above zero lies in the truncated interval when it
/// lay in the raw one — coverage holds. Drawing the blocks from nonnegative
/// distributions (a log scale) instead would move the intervals that are above zero
/// too, and cannot serve a model whose terms may be negative. Values that are not
/// finite stay as they are (left out by [`crate::uncertainty::interval_of`]).
pub fn nonnegative(values: &mut [f64]) {
    for v in values.iter_mut().filter(|v| **v < 0.0 && v.is_finite()) {
        *v = 0.0;
    }
}

/// Intervals of `batch` at every point (in parallel over the points: the evaluation is
/// the cost of intervals on big terms).
pub fn intervals<P: Env + Sync>(
    sampler: &Sampler,
    batch: &Batch,
    points: &[P],
) -> Vec<Option<Interval>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, points.len().max(1));
    let chunk = points.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = points
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|p| sampler.interval(batch, p))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Which component's uncertainty makes the program's interval wide, and where to
/// measure it again (`predict --advise`).
#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    pub component: String,
    /// Its share of the program's variance when it alone is drawn (shares sum to 1).
    pub share: f64,
    /// Where measuring it again would shrink its variance at the argument it is
    /// evaluated at the most (fitted components), best first.
    pub measure_at: Vec<BTreeMap<String, f64>>,
    /// The share of that variance each `measure_at` point would remove.
    pub reduction: Vec<f64>,
    /// The grid point the shares are computed at.
    pub at: BTreeMap<String, f64>,
}

/// Points to suggest per component.
const MEASURE_AT: usize = 3;

/// The advice at `point` for the program `batch`: each uncertain component's share of
/// the variance (its variance drawn alone over the sum of those), and for fitted
/// components the best points to measure, aimed at the argument `needed` gives.
pub fn advise(
    sampler: &Sampler,
    model: &Expr,
    point: &[(String, f64)],
    needed: &dyn Fn(&str) -> Option<Vec<f64>>,
) -> Vec<Advice> {
    let variance = |v: Vec<f64>| {
        let v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
        if v.len() < 2 {
            return 0.0;
        }
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
    };
    let vars: Vec<f64> = (0..sampler.components.len())
        .map(|i| {
            let only = sampler.only(i);
            let b = only.batch(model);
            only.values(&b, &point.to_vec()).map_or(0.0, variance)
        })
        .collect();
    let total: f64 = vars.iter().sum();
    let at: BTreeMap<String, f64> = point.iter().cloned().collect();
    let mut out: Vec<Advice> = sampler
        .components
        .iter()
        .zip(&vars)
        .map(|(u, v)| {
            let best: Vec<MeasureAt> = match (&u.design, needed(&u.component)) {
                (Some(d), Some(arg)) => d.measure_at(&arg, MEASURE_AT),
                _ => Vec::new(),
            };
            Advice {
                component: u.component.clone(),
                share: if total > 0.0 { v / total } else { 0.0 },
                reduction: best.iter().map(|m| m.reduction).collect(),
                measure_at: best.into_iter().map(|m| m.point).collect(),
                at: at.clone(),
            }
        })
        .collect();
    out.sort_by(|a, b| b.share.total_cmp(&a.share));
    out
}
