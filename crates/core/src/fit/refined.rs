//! perfcompose's own modeler (`--modeler perfcompose`, the default).
//!
//! Same hypothesis space as Extra-P ([`super::space`]), different statistics:
//!
//! * **Relative error.** Times span orders of magnitude and their noise grows with them,
//!   so every fit is weighted least squares with weights `1/y²` — it minimises relative,
//!   not absolute, residuals (Extra-P's unweighted fit lets the largest point decide).
//! * **The repetitions' spread.** The repetitions give an estimate `σ²` of the relative
//!   variance of each point's value, independent of any model (pure error). A model's
//!   weighted residual sum of squares divided by `σ²` is then on an absolute scale, so
//!   models of different sizes compare by `χ² = WRSS/σ² + λ·k` (`k` coefficients,
//!   `λ = z²`): a term is kept only if it explains `z²` times more than noise would. This
//!   guards against over-fitting without holding points out, and it is what lets a
//!   second term in where the data supports it. Without repetitions `σ²` is estimated
//!   from the residuals of the richest candidate instead.
//! * **Several terms.** One parameter may get `c0 + c1·t1 + c2·t2` (found by a forward
//!   step and a swap pass over the space), accepted only under the rule above and with
//!   non-negative term coefficients (costs add up).
//! * **All lines at once.** With several parameters, the exponent of each parameter is
//!   chosen by pooling *every* line of points along it (each line with its own `c0`, `c1`,
//!   which all of Extra-P's combination forms imply), not one averaged line; a parameter
//!   counts as active when the pooled improvement over constants beats the `χ²` quantile
//!   for that many lines. The active terms are then combined into products and sums
//!   (Extra-P's forms plus the full hierarchical ones) fitted on all points, chosen by the
//!   same criterion, and each exponent is re-checked against its runners-up in the chosen
//!   form.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::data::{lines_along, prepare, Prepared, MIN_RELATIVE_SIGMA};
use super::lsq::{affine, constant, lstsq};

/// Weighted RSS of `y ≈ a + b·t` with `a ≥ 0` (see [`Ctx::fit`]).
fn affine_nonnegative_constant(t: &[f64], y: &[f64], w: &[f64]) -> Option<f64> {
    let (a, _, wrss) = affine(t, y, w)?;
    if a >= 0.0 {
        return Some(wrss);
    }
    let (mut sty, mut stt) = (0.0, 0.0);
    for k in 0..t.len() {
        sty += w[k] * t[k] * y[k];
        stt += w[k] * t[k] * t[k];
    }
    let b = sty / stt;
    Some((0..t.len()).map(|k| w[k] * (y[k] - b * t[k]).powi(2)).sum())
}
use super::space::{eval_power, usable_blocks};
use super::{finish_pmnf, Fit, FitError, FitOptions, Modeler};
use crate::measure::Point;
use crate::model::{Monomial, Pmnf, Power};

/// The modeler, with its one tuning knob.
#[derive(Clone, Copy, Debug)]
pub struct Refined {
    /// Significance in standard deviations: a term must reduce `WRSS/σ²` by `z²`.
    pub z: f64,
    /// Runners-up per parameter re-checked in the chosen multi-parameter form.
    pub alternatives: usize,
}

impl Refined {
    pub const DEFAULT: Refined = Refined {
        z: 3.5,
        alternatives: 3,
    };
}

impl Default for Refined {
    fn default() -> Self {
        Refined::DEFAULT
    }
}

/// Wilson–Hilferty approximation of the χ² quantile with `k` degrees of freedom at `z`
/// standard deviations above the mean.
fn chi2_quantile(k: f64, z: f64) -> f64 {
    if k <= 1.0 {
        return z * z;
    }
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

/// A candidate model: terms (products of per-parameter powers) with fitted coefficients.
#[derive(Clone, Debug)]
struct Candidate {
    /// Each term: `(parameter index, power)` factors.
    terms: Vec<Vec<(usize, Power)>>,
    /// Constant first, then one per term.
    coef: Vec<f64>,
    wrss: f64,
}

impl Candidate {
    fn size(&self) -> usize {
        self.terms.len() + 1
    }
}

struct Ctx<'a> {
    data: &'a Prepared,
    w: Vec<f64>,
    lambda: f64,
    /// Per parameter: the index of each point's value among the parameter's distinct
    /// values. Term values are computed once per distinct value (5 per parameter on a
    /// 5×5×5 grid, not 125), which is most of what makes this modeler fast.
    index: Vec<Vec<usize>>,
    distinct: Vec<Vec<f64>>,
    powers: RefCell<HashMap<(usize, Power), Rc<Vec<f64>>>>,
}

impl<'a> Ctx<'a> {
    fn new(data: &'a Prepared, lambda: f64, parameters: usize) -> Ctx<'a> {
        let mut index = Vec::with_capacity(parameters);
        let mut distinct = Vec::with_capacity(parameters);
        for l in 0..parameters {
            let mut vals: Vec<f64> = data.column(l).collect();
            vals.sort_by(f64::total_cmp);
            vals.dedup();
            index.push(
                data.column(l)
                    .map(|v| vals.partition_point(|&u| u < v))
                    .collect(),
            );
            distinct.push(vals);
        }
        Ctx {
            data,
            w: data.relative_weights(),
            lambda,
            index,
            distinct,
            powers: RefCell::new(HashMap::new()),
        }
    }

    /// `p` at every distinct value of parameter `l`.
    fn power_values(&self, l: usize, p: Power) -> Rc<Vec<f64>> {
        self.powers
            .borrow_mut()
            .entry((l, p))
            .or_insert_with(|| {
                Rc::new(
                    self.distinct[l]
                        .iter()
                        .map(|&v| eval_power(&p, v))
                        .collect(),
                )
            })
            .clone()
    }

    fn column(&self, term: &[(usize, Power)]) -> Vec<f64> {
        let mut col = vec![1.0; self.data.len()];
        for &(l, p) in term {
            let pv = self.power_values(l, p);
            for (c, &i) in col.iter_mut().zip(&self.index[l]) {
                *c *= pv[i];
            }
        }
        col
    }

    fn fit(&self, terms: Vec<Vec<(usize, Power)>>) -> Option<Candidate> {
        let n = self.data.len();
        if terms.len() + 1 >= n {
            // Keep at least one residual degree of freedom.
            return None;
        }
        let ones = vec![1.0; n];
        let cols: Vec<Vec<f64>> = terms.iter().map(|t| self.column(t)).collect();
        let mut refs: Vec<&[f64]> = vec![&ones];
        refs.extend(cols.iter().map(|c| c.as_slice()));
        let mut s = lstsq(&refs, &self.data.y, Some(&self.w), false).ok()?;
        if s.coef[0] < 0.0 {
            // A cost has no negative constant: the constrained optimum then lies on
            // c0 = 0 (the problem is convex), so refit without the constant column.
            let mut z = lstsq(&refs[1..], &self.data.y, Some(&self.w), false).ok()?;
            z.coef.insert(0, 0.0);
            s = z;
        }
        if terms.len() >= 2 && s.coef[1..].iter().any(|&c| c < 0.0) {
            return None;
        }
        Some(Candidate {
            terms,
            coef: s.coef,
            wrss: s.wrss,
        })
    }

    fn score(&self, c: &Candidate, sigma2: f64) -> f64 {
        c.wrss / sigma2 + self.lambda * c.size() as f64
    }
}

/// Per parameter: the constant's and every block's weighted RSS pooled over the lines
/// along it (each line fitted with its own coefficients), best first.
struct Ranking {
    lines: usize,
    /// Points on those lines.
    points: usize,
    const_wrss: f64,
    ranked: Vec<(Power, f64)>,
}

fn rank_parameter(ctx: &Ctx, l: usize) -> Option<Ranking> {
    let data = ctx.data;
    let lines: Vec<Vec<usize>> = lines_along(data, l)
        .into_iter()
        .filter(|g| g.len() >= 3)
        .collect();
    if lines.is_empty() {
        return None;
    }
    let mut const_wrss = 0.0;
    let per_line: Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> = lines
        .iter()
        .map(|g| {
            let x: Vec<f64> = g.iter().map(|&k| data.coords[k][l]).collect();
            let y: Vec<f64> = g.iter().map(|&k| data.y[k]).collect();
            let w: Vec<f64> = g.iter().map(|&k| ctx.w[k]).collect();
            const_wrss += constant(&y, &w).1;
            (x, y, w)
        })
        .collect();
    let values = lines.iter().flatten().map(|&k| data.coords[k][l]);
    let mut t = Vec::new();
    let mut ranked: Vec<(Power, f64)> = usable_blocks(values)
        .into_iter()
        .filter_map(|p| {
            let pv = ctx.power_values(l, p);
            let mut total = 0.0;
            for (g, (_, y, w)) in lines.iter().zip(&per_line) {
                t.clear();
                t.extend(g.iter().map(|&k| pv[ctx.index[l][k]]));
                total += affine_nonnegative_constant(&t, y, w)?;
            }
            Some((p, total))
        })
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    Some(Ranking {
        lines: lines.len(),
        points: lines.iter().map(Vec::len).sum(),
        const_wrss,
        ranked,
    })
}

/// Sets of index sets over `k` active parameters: which products appear as terms.
fn forms(k: usize) -> Vec<Vec<Vec<usize>>> {
    let subsets: Vec<Vec<usize>> = (1u32..(1 << k))
        .map(|mask| (0..k).filter(|i| mask & (1 << i) != 0).collect())
        .collect();
    let covers = |f: &[&Vec<usize>]| (0..k).all(|i| f.iter().any(|s| s.contains(&i)));
    let max_terms = if k <= 3 { 3 } else { 2 };
    let mut out: Vec<Vec<Vec<usize>>> = Vec::new();
    let m = subsets.len();
    for a in 0..m {
        if covers(&[&subsets[a]]) {
            out.push(vec![subsets[a].clone()]);
        }
        for b in a + 1..m {
            if covers(&[&subsets[a], &subsets[b]]) {
                out.push(vec![subsets[a].clone(), subsets[b].clone()]);
            }
            if max_terms >= 3 {
                for c in b + 1..m {
                    if covers(&[&subsets[a], &subsets[b], &subsets[c]]) {
                        out.push(vec![
                            subsets[a].clone(),
                            subsets[b].clone(),
                            subsets[c].clone(),
                        ]);
                    }
                }
            }
        }
    }
    // The sum of all single-parameter terms, and the full hierarchical model.
    let singles: Vec<Vec<usize>> = (0..k).map(|i| vec![i]).collect();
    if k > max_terms && !out.contains(&singles) {
        out.push(singles);
    }
    if k >= 2 && k <= 3 {
        out.push(subsets.clone());
    }
    out
}

impl Refined {
    fn select(&self, parameters: &[String], data: &Prepared) -> (Pmnf, Vec<f64>, Vec<String>) {
        let mut warnings = Vec::new();
        let ctx = Ctx::new(data, self.z * self.z, parameters.len());
        let n = data.len();
        let (c0, const_wrss) = constant(&data.y, &ctx.w);
        let constant_model = || Pmnf::constant(c0);
        if const_wrss == 0.0 {
            return (constant_model(), ctx.w, warnings);
        }
        if n < 3 {
            warnings.push(format!(
                "only {n} distinct points; a model with a term needs at least 3, constant model used"
            ));
            return (constant_model(), ctx.w, warnings);
        }
        // Per parameter: the pooled ranking of its terms.
        let mut rankings: Vec<Option<Ranking>> = Vec::new();
        for l in 0..parameters.len() {
            let r = rank_parameter(&ctx, l);
            if r.is_none() {
                warnings.push(format!(
                    "parameter `{}` never takes 3 values with the others fixed; treated as having no effect",
                    parameters[l]
                ));
            }
            rankings.push(r);
        }
        // σ²: from the repetitions, else from the per-line residuals of each parameter's
        // best term (the richest model the data was fitted with).
        let sigma2 = match data.rel_var {
            Some((v, _)) => v,
            None => {
                let mut num = 0.0;
                let mut dof = 0usize;
                for r in rankings.iter().flatten() {
                    if let Some((_, wrss)) = r.ranked.first() {
                        num += wrss;
                        // Each line has its own constant and coefficient.
                        dof += r.points.saturating_sub(2 * r.lines);
                    }
                }
                if dof > 0 {
                    (num / dof as f64).max(MIN_RELATIVE_SIGMA * MIN_RELATIVE_SIGMA)
                } else {
                    const_wrss / (n - 1) as f64
                }
            }
        };
        // Active parameters: the pooled improvement beats the χ² quantile.
        let mut active: Vec<(usize, Vec<Power>)> = Vec::new();
        for (l, r) in rankings.iter().enumerate() {
            let Some(r) = r else { continue };
            let Some(&(_, best)) = r.ranked.first() else {
                continue;
            };
            if (r.const_wrss - best) / sigma2 > chi2_quantile(r.lines as f64, self.z) {
                let alts = r
                    .ranked
                    .iter()
                    .take(self.alternatives.max(1))
                    .map(|(p, _)| *p)
                    .collect();
                active.push((l, alts));
            }
        }
        if active.is_empty() {
            return (constant_model(), ctx.w, warnings);
        }
        let choice: Vec<Power> = active.iter().map(|(_, a)| a[0]).collect();
        let build = |form: &[Vec<usize>], choice: &[Power]| -> Vec<Vec<(usize, Power)>> {
            form.iter()
                .map(|t| t.iter().map(|&i| (active[i].0, choice[i])).collect())
                .collect()
        };
        // Fit every form with each parameter's best exponent.
        let mut fitted: Vec<(Candidate, Option<Vec<Vec<usize>>>)> = forms(active.len())
            .into_iter()
            .filter_map(|form| Some((ctx.fit(build(&form, &choice))?, Some(form))))
            .collect();
        // One parameter: a second term where the data supports it.
        if parameters.len() == 1 && active.len() == 1 {
            if let Some(two) = self.second_term(&ctx) {
                fitted.push((two, None));
            }
        }
        // Without repetitions, σ² for choosing among sizes comes from the best residual
        // variance of any candidate (as Mallows' Cp uses the fullest model's).
        let sigma2 = match data.rel_var {
            Some((v, _)) => v,
            None => fitted
                .iter()
                .filter(|(c, _)| n > c.size())
                .map(|(c, _)| c.wrss / (n - c.size()) as f64)
                .fold(sigma2, f64::min)
                .max(MIN_RELATIVE_SIGMA * MIN_RELATIVE_SIGMA),
        };
        let Some((mut cand, form)) = fitted
            .into_iter()
            .min_by(|a, b| ctx.score(&a.0, sigma2).total_cmp(&ctx.score(&b.0, sigma2)))
        else {
            warnings.push("no model could be fitted; constant model used".into());
            return (constant_model(), ctx.w, warnings);
        };
        // Re-check each exponent against its runners-up within the chosen form.
        if let (Some(form), true) = (form, active.len() > 1) {
            let mut choice = choice;
            for i in 0..active.len() {
                for alt in active[i].1.clone().into_iter().skip(1) {
                    let mut trial = choice.clone();
                    trial[i] = alt;
                    if let Some(c) = ctx.fit(build(&form, &trial)) {
                        if c.wrss < cand.wrss {
                            cand = c;
                            choice = trial;
                        }
                    }
                }
            }
        }
        // The constant-only model competes too.
        let const_score = const_wrss / sigma2 + ctx.lambda;
        if const_score <= ctx.score(&cand, sigma2) {
            return (constant_model(), ctx.w, warnings);
        }
        let model = Pmnf::from_terms(
            std::iter::once((cand.coef[0], Monomial::one())).chain(
                cand.terms
                    .iter()
                    .zip(&cand.coef[1..])
                    .map(|(t, &c)| (c, monomial(parameters, t))),
            ),
        );
        (model, ctx.w, warnings)
    }

    /// The best `c0 + c1·t1 + c2·t2` over all pairs of blocks. Exhaustive, but cheap:
    /// every weighted column and the data are projected off the constant once and
    /// normalised; then the RSS of every pair follows from their inner products alone
    /// (Frisch–Waugh–Lovell), `O(blocks²)` after an `O(blocks² · n)` Gram matrix. These
    /// squared-condition numbers only rank the pairs; the few best are refitted by QR,
    /// which also enforces the sign constraints.
    fn second_term(&self, ctx: &Ctx) -> Option<Candidate> {
        let data = ctx.data;
        let n = data.len();
        if n < 5 {
            // Three coefficients need at least two residual degrees of freedom.
            return None;
        }
        let blocks = usable_blocks(data.column(0));
        let sw: Vec<f64> = ctx.w.iter().map(|w| w.sqrt()).collect();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
        let norm = dot(&sw, &sw).sqrt();
        let q0: Vec<f64> = sw.iter().map(|v| v / norm).collect();
        let off_constant = |v: Vec<f64>| -> Vec<f64> {
            let c = dot(&v, &q0);
            v.iter().zip(&q0).map(|(v, q)| v - c * q).collect()
        };
        let r0 = off_constant((0..n).map(|k| sw[k] * data.y[k]).collect());
        let rr0 = dot(&r0, &r0);
        // Columns off the constant, unit length (None when constant on the data).
        let cols: Vec<Option<Vec<f64>>> = blocks
            .iter()
            .map(|b| {
                let pv = ctx.power_values(0, *b);
                let raw: Vec<f64> = (0..n).map(|k| sw[k] * pv[ctx.index[0][k]]).collect();
                let scale = dot(&raw, &raw).sqrt();
                let c = off_constant(raw);
                let len = dot(&c, &c).sqrt();
                (len > 1e-10 * scale).then(|| c.into_iter().map(|v| v / len).collect())
            })
            .collect();
        let m = blocks.len();
        let v: Vec<f64> = cols
            .iter()
            .map(|c| c.as_ref().map_or(0.0, |c| dot(&r0, c)))
            .collect();
        let mut scored: Vec<(f64, usize, usize)> = Vec::with_capacity(m * m / 2);
        for a in 0..m {
            let Some(ca) = &cols[a] else { continue };
            for b in a + 1..m {
                let Some(cb) = &cols[b] else { continue };
                let g = dot(ca, cb);
                let tt = 1.0 - g * g;
                if !(tt > 1e-12) {
                    continue;
                }
                let rt = v[b] - v[a] * g;
                scored.push((rr0 - v[a] * v[a] - rt * rt / tt, a, b));
            }
        }
        scored.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        scored
            .into_iter()
            .take(4)
            .filter_map(|(_, a, b)| ctx.fit(vec![vec![(0, blocks[a])], vec![(0, blocks[b])]]))
            .min_by(|x, y| x.wrss.total_cmp(&y.wrss))
    }
}

fn monomial(parameters: &[String], term: &[(usize, Power)]) -> Monomial {
    let mut m = Monomial::one();
    for (l, p) in term {
        m = m
            .mul(&Monomial::power(&parameters[*l], p.exp, p.log))
            .expect("small exponents");
    }
    m
}

impl Modeler for Refined {
    fn name(&self) -> &'static str {
        "perfcompose"
    }

    fn description(&self) -> &'static str {
        "relative-error weighted fits judged against the repetitions' noise; up to two terms per parameter; exponents from all lines at once (default)"
    }

    fn fit(
        &self,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
    ) -> Result<Fit, FitError> {
        let data = prepare(parameters, points, options.measure)?;
        let (model, w, warnings) = self.select(parameters, &data);
        Ok(finish_pmnf(parameters, &data, model, Some(&w), warnings))
    }
}
