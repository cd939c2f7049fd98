//! perfcompose's own modeler (`--modeler perfcompose`, the default).
//!
//! Same hypothesis space as Extra-P ([`super::space`]), different statistics:
//!
//! * **Relative error.** Times span orders of magnitude and their noise grows with them,
//!   so every fit is weighted least squares with weights `1/y²` — it minimises relative,
//!   not absolute, residuals (Extra-P's unweighted fit lets the largest point decide).
//!   Where the repetitions clearly show noise growing more slowly than the value
//!   (`s ∝ mean^β`, [`super::data::Prepared::noise_power`]), the weights are `1/y^(2β)`.
//! * **The repetitions' spread.** The repetitions give an estimate `σ²` of the relative
//!   variance of each point's value, independent of any model (pure error). A model's
//!   weighted residual sum of squares divided by `σ²` is then on an absolute scale, so
//!   models of different sizes compare by `χ² = WRSS/σ² + λ·k` (`k` coefficients,
//!   `λ = z²`, `z` raised to Student's t for the degrees of freedom of `σ²`): a term is
//!   kept only if it explains `z²` times more than noise would. This
//!   guards against over-fitting without holding points out, and it is what lets a
//!   second term in where the data supports it. Without repetitions `σ²` is estimated
//!   from the residuals of the richest candidate instead.
//! * **Several terms.** A parameter acting alone may get `c0 + c1·t1 + c2·t2` (every pair
//!   of blocks, ranked from one Gram matrix), accepted only under the rule above and with
//!   non-negative term coefficients (costs add up).
//! * **All lines at once.** With several parameters, the exponent of each parameter is
//!   chosen by pooling *every* line of points along it (each line with its own `c0`, `c1`,
//!   which all of Extra-P's combination forms imply), not one averaged line; a parameter
//!   counts as active when the pooled improvement over constants beats the `χ²` quantile
//!   for that many lines. The active terms are then combined into products and sums
//!   (Extra-P's forms plus all covering combinations of up to three products), each with
//!   every combination of the parameters' statistically indistinguishable runner-up
//!   exponents; one Gram matrix per combination ranks the forms, the best few are refitted
//!   by QR, and the same criterion picks the model.
//! * **Negative constants** cost one coefficient's worth of evidence (forbidden without
//!   repetitions): a cost rarely has one, but `log2(p/500)` has.
//! * **Ties go to Extra-P.** With one parameter, when Extra-P's hypothesis (computed in
//!   closed form, [`extrap::single_choice_with`]) scores within [`Refined::tie`] (`χ²`
//!   units, 2 by default) of the best, it is taken: between hypotheses the data cannot
//!   tell apart, the one the reference tool prints is the better answer for users who
//!   compare the two, and on synthetic data it costs no recovery.

// `!(a > b)` is deliberate: a NaN must fail the check.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// Index loops mirror the textbook Cholesky solve they implement.
#![allow(clippy::needless_range_loop)]

use std::sync::OnceLock;

use super::data::{lines_along, prepare, Prepared, MIN_RELATIVE_SIGMA};
use super::extrap;
#[cfg(doc)]
use super::lsq::affine;
use super::lsq::{constant, lstsq, RANK_TOLERANCE};
use super::space::{block_index, block_values_at, usable_blocks, BLOCKS};
use super::{finish_pmnf, Fit, FitError, FitOptions, Modeler};
use crate::measure::Point;
use crate::model::{Monomial, Pmnf, Power};

/// A term's values at the points: the parameter's table row itself, or a reordered copy.
enum Values<'a> {
    Shared(&'a [f64]),
    Owned(Vec<f64>),
}

impl AsRef<[f64]> for Values<'_> {
    fn as_ref(&self) -> &[f64] {
        match self {
            Values::Shared(v) => v,
            Values::Owned(v) => v,
        }
    }
}

/// Active parameters up to which all forms and exponent combinations are searched.
const MAX_SEARCHED_PARAMETERS: usize = 4;

/// [`forms`] for 1..=4 active parameters, built once.
fn forms_cached(k: usize) -> &'static [Vec<Vec<usize>>] {
    static FORMS: OnceLock<Vec<Vec<Vec<Vec<usize>>>>> = OnceLock::new();
    &FORMS.get_or_init(|| (0..=MAX_SEARCHED_PARAMETERS).map(forms).collect())[k]
}

/// A runner-up exponent is re-checked in the combined model when its pooled line RSS is
/// within this many `z²` of the best one's.
const ALTERNATIVE_MARGIN: f64 = 2.0;

/// Pairs of blocks ranked best by the Gram shortcut and refitted exactly (one parameter).
const PAIRS_REFITTED: usize = 4;

/// Multi-parameter candidates (form × exponents) ranked best by the Gram shortcut and
/// refitted exactly.
const REFINED_FORMS: usize = 6;

/// The modeler, with its tuning knobs.
#[derive(Clone, Copy, Debug)]
pub struct Refined {
    /// Significance in standard deviations: a term must reduce `WRSS/σ²` by `z²`.
    pub z: f64,
    /// Runners-up per parameter re-checked in the chosen multi-parameter form.
    pub alternatives: usize,
    /// Single-parameter data: Extra-P's hypothesis is taken when its score is within
    /// this much (in `χ²` units) of the best (0: never).
    pub tie: f64,
}

impl Refined {
    pub const DEFAULT: Refined = Refined {
        z: 3.5,
        alternatives: 3,
        tie: 2.0,
    };
}

impl Default for Refined {
    fn default() -> Self {
        Refined::DEFAULT
    }
}

/// The Student-t quantile with `dof` degrees of freedom at the normal quantile `z`
/// (Cornish–Fisher expansion; exact enough for the tail used here, and `z` itself for
/// many degrees of freedom).
fn student_t(z: f64, dof: usize) -> f64 {
    if dof == 0 {
        return z;
    }
    let n = dof as f64;
    let z3 = z * z * z;
    let z5 = z3 * z * z;
    z + (z3 + z) / (4.0 * n) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * n * n)
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
    /// Added to `wrss` when scoring: the price of a negative constant.
    penalty: f64,
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
    /// Per parameter: every building block at each distinct value, block-major
    /// (`[block · distinct + value]`). Every block is needed anyway (each parameter's
    /// lines are ranked over all of them), so the table is filled once, up front, and
    /// a term's values are a slice of it: no hashing, no allocation per lookup.
    tables: Vec<Vec<f64>>,
    distinct: Vec<Vec<f64>>,
    /// What a negative constant costs, in weighted-RSS units: `λ·σ²` with repetitions,
    /// infinite (forbidden) without.
    neg_cost: f64,
}

/// Every building block at each of `values`, block-major (see [`Ctx::tables`]).
fn block_table(values: &[f64]) -> Vec<f64> {
    let nd = values.len();
    let mut table = vec![0.0; BLOCKS * nd];
    let mut at = [0.0; BLOCKS];
    for (i, &v) in values.iter().enumerate() {
        block_values_at(v, &mut at);
        for (b, &x) in at.iter().enumerate() {
            table[b * nd + i] = x;
        }
    }
    table
}

impl<'a> Ctx<'a> {
    fn new(data: &'a Prepared, lambda: f64, parameters: usize) -> Ctx<'a> {
        let mut index = Vec::with_capacity(parameters);
        let mut tables = Vec::with_capacity(parameters);
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
            tables.push(block_table(&vals));
            distinct.push(vals);
        }
        Ctx {
            data,
            w: data.relative_weights(),
            lambda,
            index,
            tables,
            distinct,
            neg_cost: data.rel_var.map_or(f64::INFINITY, |(v, _)| lambda * v),
        }
    }

    /// `p` (one of the building blocks) at every distinct value of parameter `l`.
    fn power_values(&self, l: usize, p: Power) -> &[f64] {
        let b = block_index(&p).expect("the modeler's terms are building blocks");
        let table = &self.tables[l];
        let nd = table.len() / BLOCKS;
        &table[b * nd..(b + 1) * nd]
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
        let s = lstsq(&refs, &self.data.y, Some(&self.w), false).ok()?;
        let mut penalty = 0.0;
        let s = if s.coef[0] < 0.0 {
            // Costs rarely have a negative constant: the constrained optimum lies on
            // c0 = 0 (the problem is convex), so refit without the constant column, and
            // keep the negative constant only if it is worth `neg_cost` (a coefficient's
            // worth of evidence; infinite without repetitions to judge by).
            let mut z = lstsq(&refs[1..], &self.data.y, Some(&self.w), false).ok()?;
            z.coef.insert(0, 0.0);
            if z.wrss <= s.wrss + self.neg_cost {
                z
            } else {
                penalty = self.neg_cost;
                s
            }
        } else {
            s
        };
        if terms.len() >= 2 && s.coef[1..].iter().any(|&c| c < 0.0) {
            return None;
        }
        Some(Candidate {
            terms,
            coef: s.coef,
            wrss: s.wrss,
            penalty,
        })
    }

    fn score(&self, c: &Candidate, sigma2: f64) -> f64 {
        (c.wrss + c.penalty) / sigma2 + self.lambda * c.size() as f64
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
    let lines: Vec<Line> = lines_along(data, l)
        .into_iter()
        .filter(|g| g.len() >= 3)
        .map(|g| Line::new(ctx, l, &g))
        .collect();
    if lines.is_empty() {
        return None;
    }
    let const_wrss = lines.iter().map(|g| g.const_wrss).sum();
    let values = lines
        .iter()
        .flat_map(|g| g.at.iter())
        .map(|&i| ctx.distinct[l][i]);
    let mut t = Vec::new();
    let mut ranked: Vec<(Power, f64)> = usable_blocks(values)
        .into_iter()
        .filter_map(|p| {
            let pv = ctx.power_values(l, p);
            let mut total = 0.0;
            for g in &lines {
                t.clear();
                t.extend(g.at.iter().map(|&i| pv[i]));
                total += g.affine_nonnegative_constant(&t, ctx.neg_cost)?;
            }
            Some((p, total))
        })
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    Some(Ranking {
        lines: lines.len(),
        points: lines.iter().map(|g| g.at.len()).sum(),
        const_wrss,
        ranked,
    })
}

/// One line of points along a parameter, with everything about its `y` and weights
/// that the affine fit `y ≈ a + b·t` needs, computed once: every building block is
/// fitted to every line (42 fits per line), and only `t` changes between them.
struct Line {
    /// Each point's index among the parameter's distinct values (its table column).
    at: Vec<usize>,
    y: Vec<f64>,
    w: Vec<f64>,
    /// `Σw`, the weighted mean of `y`, each `y − ȳ`, and `Σ w (y − ȳ)²`: the `y` half
    /// of [`affine`], with the same operations in the same order, so the fits are the
    /// same to the bit.
    sw: f64,
    ym: f64,
    dy: Vec<f64>,
    syy: f64,
    /// The weighted RSS of the line's constant.
    const_wrss: f64,
}

impl Line {
    fn new(ctx: &Ctx, l: usize, points: &[usize]) -> Line {
        let y: Vec<f64> = points.iter().map(|&k| ctx.data.y[k]).collect();
        let w: Vec<f64> = points.iter().map(|&k| ctx.w[k]).collect();
        let (mut sw, mut sy) = (0.0, 0.0);
        for k in 0..y.len() {
            sw += w[k];
            sy += w[k] * y[k];
        }
        let ym = sy / sw;
        let dy: Vec<f64> = y.iter().map(|&v| v - ym).collect();
        let mut syy = 0.0;
        for k in 0..y.len() {
            syy += w[k] * dy[k] * dy[k];
        }
        Line {
            at: points.iter().map(|&k| ctx.index[l][k]).collect(),
            const_wrss: constant(&y, &w).1,
            y,
            w,
            sw,
            ym,
            dy,
            syy,
        }
    }

    /// [`affine`]'s weighted RSS of `y ≈ a + b·t` on this line, where a negative
    /// constant `a` costs `neg_cost` (see [`Ctx::fit`]): the better of paying it and the
    /// line through the origin.
    fn affine_nonnegative_constant(&self, t: &[f64], neg_cost: f64) -> Option<f64> {
        let (w, y) = (&self.w, &self.y);
        let n = t.len();
        if !(self.sw > 0.0) {
            return None;
        }
        let mut st = 0.0;
        for k in 0..n {
            st += w[k] * t[k];
        }
        let tm = st / self.sw;
        let (mut stt, mut sty, mut t2) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let dt = t[k] - tm;
            stt += w[k] * dt * dt;
            sty += w[k] * dt * self.dy[k];
            t2 += w[k] * t[k] * t[k];
        }
        if !(stt > RANK_TOLERANCE * RANK_TOLERANCE * t2) || !stt.is_finite() {
            return None;
        }
        let b = sty / stt;
        let a = self.ym - b * tm;
        let wrss = (self.syy - b * sty).max(0.0);
        if a >= 0.0 {
            return Some(wrss);
        }
        let (mut sty, mut stt) = (0.0, 0.0);
        for k in 0..n {
            sty += w[k] * t[k] * y[k];
            stt += w[k] * t[k] * t[k];
        }
        let b = sty / stt;
        let through_origin: f64 = (0..n).map(|k| w[k] * (y[k] - b * t[k]).powi(2)).sum();
        Some(through_origin.min(wrss + neg_cost))
    }
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
    if (2..=3).contains(&k) {
        out.push(subsets.clone());
    }
    out
}

impl Refined {
    fn select(&self, parameters: &[String], data: &Prepared) -> (Pmnf, Vec<f64>, Vec<String>) {
        let mut warnings = Vec::new();
        // With σ² estimated from few repetitions, a term must clear a higher bar: the
        // normal quantile `z` becomes Student's t quantile for the pure-error degrees of
        // freedom.
        let z = data
            .rel_var
            .map_or(self.z, |(_, dof)| student_t(self.z, dof));
        let ctx = Ctx::new(data, z * z, parameters.len());
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
        for (l, name) in parameters.iter().enumerate() {
            let r = rank_parameter(&ctx, l);
            if r.is_none() {
                warnings.push(format!(
                    "parameter `{name}` never takes 3 values with the others fixed; treated as having no effect"
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
            if (r.const_wrss - best) / sigma2 > chi2_quantile(r.lines as f64, z) {
                // Runners-up that the lines cannot tell from the best.
                let alts = r
                    .ranked
                    .iter()
                    .take(self.alternatives.max(1))
                    .take_while(|(_, w)| (w - best) / sigma2 <= ALTERNATIVE_MARGIN * ctx.lambda)
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
        let mut fitted: Vec<Candidate> = Vec::new();
        if active.len() == 1 {
            if let Some(c) = ctx.fit(build(&[vec![0]], &choice)) {
                fitted.push(c);
            }
            // One parameter that matters: a second term where the data supports it.
            if let Some(two) = self.second_term(&ctx, active[0].0) {
                fitted.push(two);
            }
        } else if active.len() > MAX_SEARCHED_PARAMETERS {
            // Beyond four active parameters the combinations explode; fall back to
            // Extra-P's two forms (the product and the sum) with the best exponents.
            let k = active.len();
            for form in [
                vec![(0..k).collect()],
                (0..k).map(|i| vec![i]).collect::<Vec<_>>(),
            ] {
                if let Some(c) = ctx.fit(build(&form, &choice)) {
                    fitted.push(c);
                }
            }
        } else {
            // Every form with every combination of each parameter's runners-up (its
            // best exponent along the lines is not always its best inside a product or
            // a sum), ranked cheaply from one Gram matrix per combination; the best few
            // are refitted by QR.
            let k = if active.len() <= 3 {
                self.alternatives.max(1)
            } else {
                2
            };
            let mut combos: Vec<Vec<Power>> = vec![Vec::new()];
            for (_, alts) in &active {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        alts.iter().take(k).map(move |a| {
                            let mut c = c.clone();
                            c.push(*a);
                            c
                        })
                    })
                    .collect();
            }
            let all_forms = forms_cached(active.len());
            let sigma2_rank = sigma2;
            let mut ranked: Vec<(f64, usize, usize)> = Vec::new();
            for (ci, combo) in combos.iter().enumerate() {
                let gram = Gram::new(&ctx, &active, combo);
                for (fi, form) in all_forms.iter().enumerate() {
                    if let Some(wrss) = gram.wrss(form, data.len(), ctx.neg_cost) {
                        let score = wrss / sigma2_rank + ctx.lambda * (form.len() + 1) as f64;
                        ranked.push((score, ci, fi));
                    }
                }
            }
            if ranked.len() > REFINED_FORMS {
                ranked.select_nth_unstable_by(REFINED_FORMS, |a, b| a.0.total_cmp(&b.0));
                ranked.truncate(REFINED_FORMS);
            }
            for &(_, ci, fi) in &ranked {
                if let Some(c) = ctx.fit(build(&all_forms[fi], &combos[ci])) {
                    fitted.push(c);
                }
            }
        }
        // Without repetitions, σ² for choosing among sizes comes from the best residual
        // variance of any candidate (as Mallows' Cp uses the fullest model's).
        let sigma2 = match data.rel_var {
            Some((v, _)) => v,
            None => fitted
                .iter()
                .filter(|c| n > c.size())
                .map(|c| c.wrss / (n - c.size()) as f64)
                .fold(sigma2, f64::min)
                .max(MIN_RELATIVE_SIGMA * MIN_RELATIVE_SIGMA),
        };
        let Some(mut cand) = fitted
            .into_iter()
            .min_by(|a, b| ctx.score(a, sigma2).total_cmp(&ctx.score(b, sigma2)))
        else {
            warnings.push("no model could be fitted; constant model used".into());
            return (constant_model(), ctx.w, warnings);
        };
        // The constant-only model competes too.
        let const_score = const_wrss / sigma2 + ctx.lambda;
        let mut constant_wins = const_score <= ctx.score(&cand, sigma2);
        // Where the evidence is a tie, Extra-P's choice: users compare the two tools, and
        // between hypotheses the data cannot tell apart, the one the reference tool
        // prints is the better answer. Single-parameter data only: there Extra-P's choice
        // costs a few microseconds ([`extrap::single_choice`]).
        if self.tie > 0.0 && parameters.len() == 1 {
            let best = const_score.min(ctx.score(&cand, sigma2));
            // Points in increasing order (the usual case) read the cached values as is.
            let sorted = ctx.index[0].iter().enumerate().all(|(k, &i)| k == i);
            let blocks = usable_blocks(data.column(0)).into_iter().map(|p| {
                let pv = ctx.power_values(0, p);
                let t = if sorted {
                    Values::Shared(pv)
                } else {
                    Values::Owned(ctx.index[0].iter().map(|&i| pv[i]).collect())
                };
                (p, t)
            });
            let current = (cand.terms.len() == 1).then(|| cand.terms[0][0].1);
            match extrap::single_choice_with(&data.y, blocks) {
                None => constant_wins |= const_score <= best + self.tie,
                Some(p) if !constant_wins && current == Some(p) => {}
                Some(p) => {
                    if let Some(c) = ctx.fit(vec![vec![(0, p)]]) {
                        if ctx.score(&c, sigma2) <= best + self.tie {
                            cand = c;
                            constant_wins = false;
                        }
                    }
                }
            }
        }
        if constant_wins {
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
    fn second_term(&self, ctx: &Ctx, l: usize) -> Option<Candidate> {
        let data = ctx.data;
        let n = data.len();
        if n < 5 {
            // Three coefficients need at least two residual degrees of freedom.
            return None;
        }
        let blocks = usable_blocks(data.column(l));
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
        // Columns off the constant, unit length (None when constant on the data), all in
        // one buffer (one allocation, not two per block).
        let mut buf = vec![0.0; blocks.len() * n];
        let mut usable = vec![false; blocks.len()];
        for (j, b) in blocks.iter().enumerate() {
            let pv = ctx.power_values(l, *b);
            let c = &mut buf[j * n..(j + 1) * n];
            for k in 0..n {
                c[k] = sw[k] * pv[ctx.index[l][k]];
            }
            let scale = dot(c, c).sqrt();
            let along = dot(c, &q0);
            for (v, q) in c.iter_mut().zip(&q0) {
                *v -= along * q;
            }
            let len = dot(c, c).sqrt();
            if len > 1e-10 * scale {
                c.iter_mut().for_each(|v| *v /= len);
                usable[j] = true;
            }
        }
        let cols: Vec<Option<&[f64]>> = buf
            .chunks_exact(n)
            .zip(&usable)
            .map(|(c, &u)| u.then_some(c))
            .collect();
        let m = blocks.len();
        let v: Vec<f64> = cols
            .iter()
            .map(|c| c.map_or(0.0, |c| dot(&r0, c)))
            .collect();
        // Only the best few pairs are refitted, so only they are kept: a sorted array of
        // PAIRS_REFITTED entries that a new pair enters when it beats the last (sorting all
        // 861 pairs was more than half of a one-parameter fit).
        let mut best: Vec<(f64, usize, usize)> = Vec::with_capacity(PAIRS_REFITTED + 1);
        for a in 0..m {
            let Some(ca) = cols[a] else { continue };
            for b in a + 1..m {
                let Some(cb) = cols[b] else { continue };
                let g = dot(ca, cb);
                let tt = 1.0 - g * g;
                if !(tt > 1e-12) {
                    continue;
                }
                let rt = v[b] - v[a] * g;
                let score = rr0 - v[a] * v[a] - rt * rt / tt;
                if best.len() == PAIRS_REFITTED
                    && !score.total_cmp(&best[PAIRS_REFITTED - 1].0).is_lt()
                {
                    continue;
                }
                // After every entry with a score at most this one's: ties keep the
                // earlier pair first.
                let at = best.partition_point(|e| e.0.total_cmp(&score).is_le());
                best.insert(at, (score, a, b));
                best.truncate(PAIRS_REFITTED);
            }
        }
        best.into_iter()
            .filter_map(|(_, a, b)| ctx.fit(vec![vec![(l, blocks[a])], vec![(l, blocks[b])]]))
            .min_by(|x, y| x.wrss.total_cmp(&y.wrss))
    }
}

/// The weighted, unit-length columns of every product of the active parameters' terms
/// (one per non-empty subset, plus the constant) and their Gram matrix, so that any form
/// — a set of those products — is scored by a tiny normal-equation solve.
struct Gram {
    cols: Vec<Vec<f64>>,
    g: Vec<Vec<f64>>,
    yw: Vec<f64>,
    /// `colsᵀ·yw` and `ywᵀ·yw`.
    rhs: Vec<f64>,
    yy: f64,
}

impl Gram {
    fn new(ctx: &Ctx, active: &[(usize, Vec<Power>)], choice: &[Power]) -> Gram {
        let k = active.len();
        let n = ctx.data.len();
        let sw: Vec<f64> = ctx.w.iter().map(|w| w.sqrt()).collect();
        let yw: Vec<f64> = (0..n).map(|i| sw[i] * ctx.data.y[i]).collect();
        // Column 0: the constant; column `mask`: the product over the set bits.
        let mut cols: Vec<Vec<f64>> = Vec::with_capacity(1 << k);
        for mask in 0usize..(1 << k) {
            let term: Vec<(usize, Power)> = (0..k)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| (active[i].0, choice[i]))
                .collect();
            let raw = ctx.column(&term);
            let mut c: Vec<f64> = raw.iter().zip(&sw).map(|(v, s)| v * s).collect();
            let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
            if norm > 0.0 && norm.is_finite() {
                c.iter_mut().for_each(|v| *v /= norm);
            }
            cols.push(c);
        }
        let m = cols.len();
        let mut g = vec![vec![0.0; m]; m];
        for a in 0..m {
            for b in a..m {
                let d: f64 = cols[a].iter().zip(&cols[b]).map(|(x, y)| x * y).sum();
                g[a][b] = d;
                g[b][a] = d;
            }
        }
        let rhs = cols
            .iter()
            .map(|c| c.iter().zip(&yw).map(|(x, y)| x * y).sum())
            .collect();
        let yy = yw.iter().map(|y| y * y).sum();
        Gram {
            cols,
            g,
            yw,
            rhs,
            yy,
        }
    }

    /// Weighted RSS of a form (constant plus the given products), with the constant
    /// constrained to be non-negative and term coefficients to be non-negative when
    /// there are several; `None` when the columns are (nearly) dependent or a sign
    /// constraint fails. Thousands of these per region, so everything lives in
    /// fixed-size arrays on the stack.
    fn wrss(&self, form: &[Vec<usize>], n: usize, neg_cost: f64) -> Option<f64> {
        if form.len() + 1 >= n {
            return None;
        }
        let p = form.len() + 1;
        let mut idx = [0usize; MAX_GRAM];
        for (i, t) in form.iter().enumerate() {
            idx[i + 1] = t.iter().map(|i| 1usize << i).sum::<usize>();
        }
        let idx = &idx[..p];
        let mut beta = [0.0; MAX_GRAM];
        let mut explained = self.solve(idx, &mut beta)?;
        let mut penalty = 0.0;
        if beta[0] < 0.0 {
            let mut b = [0.0; MAX_GRAM];
            match self.solve(&idx[1..], &mut b) {
                Some(e) if self.yy - e <= self.yy - explained + neg_cost => {
                    beta[0] = 0.0;
                    beta[1..p].copy_from_slice(&b[..p - 1]);
                    explained = e;
                }
                _ if neg_cost.is_finite() => penalty = neg_cost,
                _ => return None,
            }
        }
        let beta = &beta[..p];
        if form.len() >= 2 && beta[1..].iter().any(|&c| c < 0.0) {
            return None;
        }
        let fast = self.yy - explained;
        if fast > EXACT_FIT * self.yy {
            return Some(fast + penalty);
        }
        // A (nearly) exact fit: the difference above is all rounding, sum the residuals.
        let mut wrss = 0.0;
        for (i, y) in self.yw.iter().enumerate() {
            let p: f64 = idx
                .iter()
                .zip(beta)
                .map(|(&c, b)| b * self.cols[c][i])
                .sum();
            wrss += (y - p) * (y - p);
        }
        Some(wrss + penalty)
    }

    /// Least squares on the columns `idx` by Cholesky of their Gram matrix: the
    /// coefficients (into `beta[..idx.len()]`) and the explained sum of squares
    /// `|L⁻¹Aᵀy|²`.
    fn solve(&self, idx: &[usize], beta: &mut [f64; MAX_GRAM]) -> Option<f64> {
        let p = idx.len();
        let mut l = [[0.0; MAX_GRAM]; MAX_GRAM];
        for a in 0..p {
            for b in 0..=a {
                let mut s = self.g[idx[a]][idx[b]];
                for c in 0..b {
                    s -= l[a][c] * l[b][c];
                }
                if a == b {
                    if !(s > GRAM_PIVOT) {
                        return None;
                    }
                    l[a][a] = s.sqrt();
                } else {
                    l[a][b] = s / l[b][b];
                }
            }
        }
        let mut z = [0.0; MAX_GRAM];
        for a in 0..p {
            let mut s = self.rhs[idx[a]];
            for c in 0..a {
                s -= l[a][c] * z[c];
            }
            z[a] = s / l[a][a];
        }
        for a in (0..p).rev() {
            let mut s = z[a];
            for c in a + 1..p {
                s -= l[c][a] * beta[c];
            }
            beta[a] = s / l[a][a];
        }
        Some(z[..p].iter().map(|z| z * z).sum())
    }
}

/// Columns of a [`Gram`]: the constant and one product per non-empty subset of the
/// searched parameters.
const MAX_GRAM: usize = 1 << MAX_SEARCHED_PARAMETERS;

/// Below this fraction of `yᵀWy` a residual is recomputed point by point.
const EXACT_FIT: f64 = 1e-8;

/// Smallest Cholesky pivot of unit-length columns treated as independent (a squared
/// sine of the angle to the span of the others).
const GRAM_PIVOT: f64 = 1e-12;

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
        "relative-error weighted fits judged against the repetitions' noise; a second term where the data supports it; multi-parameter exponents from all lines at once; Extra-P's choice where the evidence is a tie"
    }

    fn fit(
        &self,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
    ) -> Result<Fit, FitError> {
        let data = prepare(parameters, points, options)?;
        let (model, w, warnings) = self.select(parameters, &data);
        Ok(finish_pmnf(parameters, &data, model, Some(&w), warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::super::lsq::affine;
    use super::*;

    /// The plain form of [`Line::affine_nonnegative_constant`], the reference it must
    /// match bit for bit.
    fn reference(t: &[f64], y: &[f64], w: &[f64], neg_cost: f64) -> Option<f64> {
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
        let through_origin: f64 = (0..t.len()).map(|k| w[k] * (y[k] - b * t[k]).powi(2)).sum();
        Some(through_origin.min(wrss + neg_cost))
    }

    #[test]
    fn line_fits_are_the_plain_affine_fits_bit_for_bit() {
        let x = [4.0, 8.0, 16.0, 32.0, 64.0];
        let points: Vec<Point> = x
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                // Noisy, and steeply falling at the end, so that some blocks' lines
                // have a negative constant.
                let f = 50.0 + 3.0 * v - 0.02 * v * v + [0.3, -0.2, 0.1, 0.4, -0.3][i];
                Point::new(vec![v], vec![f * 0.99, f, f * 1.01])
            })
            .collect();
        let data = prepare(&["x".to_string()], &points, &FitOptions::default()).unwrap();
        let ctx = Ctx::new(&data, 12.25, 1);
        let line = Line::new(&ctx, 0, &[0, 1, 2, 3, 4]);
        let mut negative = 0;
        for p in usable_blocks(x) {
            let t = ctx.power_values(0, p);
            for cost in [0.0, 1e-3, f64::INFINITY] {
                let got = line.affine_nonnegative_constant(t, cost);
                let want = reference(t, &data.y, &ctx.w, cost);
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{p:?}");
            }
            negative += usize::from(affine(t, &data.y, &ctx.w).is_some_and(|f| f.0 < 0.0));
        }
        assert!(negative > 0, "the negative-constant branch is exercised");
    }
}
