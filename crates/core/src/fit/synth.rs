//! Seeded synthetic measurements with known true models, for tests and the fitting
//! benchmark.
//!
//! The idea follows Extra-P's `synthetic-data.py` (random PMNF functions, multiplicative
//! uniform noise `value · (1 + U(−1, 1) · noise)` per repetition, coefficients
//! `10^U(−2, 3)`), extended to draw the exponents from the whole hypothesis space and the
//! multi-parameter shapes from the forms Extra-P combines terms into:
//!
//! * 1 parameter: `c0 + c1·t1` (three in four regions) or `c0 + c1·t1 + c2·t2`;
//! * 2 parameters: `a·b`, `a + b`, `a·b + a` or `a·b + b`;
//! * 3 parameters: one of Extra-P's 23 three-parameter forms;
//!
//! where each `t`, `a`, `b`, `c` is a building block `x^i · log2(x)^j` drawn uniformly from
//! [`space::extrap_blocks`](super::space::extrap_blocks) for its parameter
//! ([`TruthShape::Mixed`]); or one term only, `c0 + c1·t` ([`TruthShape::OneTerm`]), the
//! functions Extra-P's own tests use.
//!
//! [`oracle`] says what the noisy data of a region could tell at best: whether the true
//! hypothesis fits better than every other hypothesis with as many terms.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::eval_monomial;
use super::lsq::lstsq;
use super::space::extrap_blocks;
use crate::measure::Point;
use crate::model::{Monomial, Pmnf, Power};

/// Which true models to draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TruthShape {
    /// The mixture described in the module docs (one or two terms for one parameter,
    /// Extra-P's combination forms for several).
    #[default]
    Mixed,
    /// One term, `c0 + c1 · Π_l x_l^(i_l) · log2(x_l)^(j_l)`: exactly what Extra-P's
    /// hypotheses can express (its single-parameter modeler never has more than one term,
    /// and its own tests, `tests/test_basic_modeler.py`, use such functions).
    OneTerm,
}

/// What to generate.
#[derive(Clone, Debug)]
pub struct SynthConfig {
    /// Which true models to draw.
    pub shape: TruthShape,
    pub parameters: Vec<String>,
    /// Measured values per parameter; points are their full grid.
    pub values: Vec<Vec<f64>>,
    pub regions: usize,
    /// Relative noise amplitude (0.02 = ±2 %).
    pub noise: f64,
    pub repetitions: usize,
    pub seed: u64,
}

/// One generated series.
#[derive(Clone, Debug)]
pub struct SynthRegion {
    pub name: String,
    pub truth: Pmnf,
    pub points: Vec<Point>,
}

fn coefficient(rng: &mut ChaCha8Rng) -> f64 {
    10f64.powf(rng.gen_range(-2.0..3.0))
}

fn block(rng: &mut ChaCha8Rng, blocks: &[Power]) -> Power {
    blocks[rng.gen_range(0..blocks.len())]
}

/// Extra-P's multi-parameter forms over `k` parameters (index sets per term).
fn forms(k: usize) -> Vec<Vec<Vec<usize>>> {
    match k {
        1 => vec![vec![vec![0]]],
        2 => vec![
            vec![vec![0, 1]],
            vec![vec![0], vec![1]],
            vec![vec![0, 1], vec![0]],
            vec![vec![0, 1], vec![1]],
        ],
        _ => {
            let m = vec![0, 1, 2];
            let (x, y, z) = (vec![0], vec![1], vec![2]);
            let (xy, yz, xz) = (vec![0, 1], vec![1, 2], vec![0, 2]);
            vec![
                vec![m.clone()],
                vec![x.clone(), y.clone(), z.clone()],
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
            ]
        }
    }
}

/// A random true model over `parameters` (the [`TruthShape::Mixed`] mixture).
pub fn random_truth(rng: &mut ChaCha8Rng, parameters: &[String]) -> Pmnf {
    random_truth_shaped(rng, parameters, TruthShape::Mixed)
}

/// A random true model over `parameters` of the given shape.
pub fn random_truth_shaped(rng: &mut ChaCha8Rng, parameters: &[String], shape: TruthShape) -> Pmnf {
    let blocks = extrap_blocks();
    let mut terms = vec![(coefficient(rng), Monomial::one())];
    if shape == TruthShape::OneTerm {
        let m = parameters.iter().fold(Monomial::one(), |m, p| {
            let b = block(rng, &blocks);
            m.mul(&Monomial::power(p, b.exp, b.log))
                .expect("small exponents")
        });
        terms.push((coefficient(rng), m));
        return Pmnf::from_terms(terms);
    }
    if parameters.len() == 1 {
        let a = block(rng, &blocks);
        terms.push((
            coefficient(rng),
            Monomial::power(&parameters[0], a.exp, a.log),
        ));
        if rng.gen_range(0..4) == 0 {
            let mut b = block(rng, &blocks);
            while b == a {
                b = block(rng, &blocks);
            }
            terms.push((
                coefficient(rng),
                Monomial::power(&parameters[0], b.exp, b.log),
            ));
        }
    } else {
        let per: Vec<Monomial> = parameters
            .iter()
            .map(|p| {
                let b = block(rng, &blocks);
                Monomial::power(p, b.exp, b.log)
            })
            .collect();
        let all = forms(parameters.len().min(3));
        let form = &all[rng.gen_range(0..all.len())];
        for t in form {
            let m = t.iter().fold(Monomial::one(), |m, &i| {
                m.mul(&per[i]).expect("small exponents")
            });
            terms.push((coefficient(rng), m));
        }
    }
    Pmnf::from_terms(terms)
}

/// Evaluate a PMNF at a coordinate in `parameters` order.
pub fn eval(model: &Pmnf, parameters: &[String], coordinate: &[f64]) -> f64 {
    model
        .terms()
        .map(|(c, m)| c * eval_monomial(m, parameters, coordinate))
        .sum()
}

fn grid(values: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new()];
    for vs in values {
        out = out
            .into_iter()
            .flat_map(|c| {
                vs.iter().map(move |&v| {
                    let mut c = c.clone();
                    c.push(v);
                    c
                })
            })
            .collect();
    }
    out
}

/// Generate the regions of `config`.
pub fn generate(config: &SynthConfig) -> Vec<SynthRegion> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let coords = grid(&config.values);
    (0..config.regions)
        .map(|r| {
            let truth = random_truth_shaped(&mut rng, &config.parameters, config.shape);
            let points = coords
                .iter()
                .map(|c| {
                    let f = eval(&truth, &config.parameters, c);
                    let values = (0..config.repetitions)
                        .map(|_| f * (1.0 + rng.gen_range(-1.0..1.0) * config.noise))
                        .collect();
                    Point::new(c.clone(), values)
                })
                .collect();
            SynthRegion {
                name: format!("r{r:04}"),
                truth,
                points,
            }
        })
        .collect()
}

/// The largest measured coordinate (every parameter at its maximum).
pub fn largest(values: &[Vec<f64>]) -> Vec<f64> {
    values
        .iter()
        .map(|v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        .collect()
}

/// True when every non-constant term of `truth` contributes at least `factor` times the
/// noise amplitude at `at` (the benchmark's "identifiable region", factor 5).
pub fn identifiable(
    truth: &Pmnf,
    parameters: &[String],
    at: &[f64],
    noise: f64,
    factor: f64,
) -> bool {
    let total = eval(truth, parameters, at);
    truth
        .terms()
        .filter(|(_, m)| !m.is_constant())
        .all(|(c, m)| (c * eval_monomial(m, parameters, at)).abs() >= factor * noise * total.abs())
}

/// True when both models have the same non-constant monomials (exact exponents),
/// whatever their coefficients and constants.
pub fn same_exponents(a: &Pmnf, b: &Pmnf) -> bool {
    let set = |p: &Pmnf| -> Vec<Monomial> {
        let mut v: Vec<Monomial> = p
            .terms()
            .filter(|(_, m)| !m.is_constant())
            .map(|(_, m)| m.clone())
            .collect();
        v.sort();
        v
    };
    set(a) == set(b)
}

/// What the data of one region can tell at best: the weighted residual sum of squares of
/// the true hypothesis (its terms, coefficients refitted to the noisy data) against the
/// best-fitting *rival* hypothesis with the same number of terms.
///
/// An oracle that knows how many terms the truth has and that every coefficient is
/// positive, and picks the best-fitting such hypothesis of that size (maximum likelihood
/// under Gaussian relative noise), recovers the truth exactly when no rival fits at least
/// as well. When one does, no method that selects by
/// fit can recover that region ("oracle-impossible"): the data do not tell the truth apart.
#[derive(Clone, Debug)]
pub struct Oracle {
    /// Weighted RSS (weights `1/ȳ²`, ȳ the mean of the repetitions) of the true terms
    /// with positive coefficients (infinite when no such fit exists).
    pub truth_wrss: f64,
    /// The best rival of the same size and its weighted RSS, if any could be fitted.
    pub rival: Option<(Pmnf, f64)>,
    /// Whether the rivals were searched exhaustively (1 and 2 parameters) or only around
    /// the truth (3 parameters: one parameter's exponent changed at a time, the other
    /// forms with the truth's exponents, and the `extra` models given).
    pub exhaustive: bool,
}

impl Oracle {
    /// True when the truth fits strictly better than every rival of its size.
    pub fn distinguishable(&self) -> bool {
        self.rival
            .as_ref()
            .is_none_or(|(_, wrss)| *wrss > self.truth_wrss)
    }
}

/// Per parameter its block (if it appears), and per term its parameters' indices.
type TruthShapeParts = (Vec<Option<Power>>, Vec<Vec<usize>>);

/// Per parameter, the truth's building block (synthetic truths use one block per
/// parameter, shared by every term it appears in), and the truth's form (the parameter
/// indices of each non-constant term).
fn decompose(truth: &Pmnf, parameters: &[String]) -> Option<TruthShapeParts> {
    let mut blocks: Vec<Option<Power>> = vec![None; parameters.len()];
    let mut form = Vec::new();
    for (_, m) in truth.terms().filter(|(_, m)| !m.is_constant()) {
        let mut set = Vec::new();
        for (name, pw) in m.factors() {
            let l = parameters.iter().position(|p| p == name)?;
            // One parameter may have several blocks (its terms are searched
            // exhaustively); several parameters share one block each.
            if parameters.len() > 1 && blocks[l].is_some_and(|b| b != *pw) {
                return None;
            }
            blocks[l] = Some(*pw);
            set.push(l);
        }
        set.sort_unstable();
        form.push(set);
    }
    Some((blocks, form))
}

fn build(parameters: &[String], form: &[Vec<usize>], blocks: &[Power]) -> Vec<Monomial> {
    form.iter()
        .map(|t| {
            t.iter().fold(Monomial::one(), |m, &l| {
                m.mul(&Monomial::power(
                    &parameters[l],
                    blocks[l].exp,
                    blocks[l].log,
                ))
                .expect("small exponents")
            })
        })
        .collect()
}

/// The weighted fit of `c0 + Σ c_k · m_k`: its coefficients and WRSS. With `prior` the
/// fit respects what the generator draws — every coefficient positive: a negative
/// constant is refitted at `c0 = 0` (the constrained optimum of a convex problem lies on
/// that face), and a negative term coefficient makes the hypothesis `None` (it would be
/// a smaller hypothesis). `None` also when the columns are dependent.
fn weighted_fit(
    terms: &[Monomial],
    parameters: &[String],
    points: &[Point],
    y: &[f64],
    w: &[f64],
    prior: bool,
) -> Option<(Vec<f64>, f64)> {
    let ones = vec![1.0; points.len()];
    let cols: Vec<Vec<f64>> = terms
        .iter()
        .map(|m| {
            points
                .iter()
                .map(|p| eval_monomial(m, parameters, &p.coordinate))
                .collect()
        })
        .collect();
    let mut refs: Vec<&[f64]> = vec![&ones];
    refs.extend(cols.iter().map(Vec::as_slice));
    let mut s = lstsq(&refs, y, Some(w), false).ok()?;
    if prior && s.coef[0] < 0.0 {
        s = lstsq(&refs[1..], y, Some(w), false).ok()?;
        s.coef.insert(0, 0.0);
    }
    if prior && s.coef[1..].iter().any(|&c| c <= 0.0) {
        return None;
    }
    Some((s.coef, s.wrss))
}

/// Means of the repetitions and relative weights `1/ȳ²`.
fn means_and_weights(points: &[Point]) -> (Vec<f64>, Vec<f64>) {
    let y: Vec<f64> = points
        .iter()
        .map(|p| p.values.iter().sum::<f64>() / p.values.len().max(1) as f64)
        .collect();
    let w = y
        .iter()
        .map(|v| 1.0 / (v * v).max(f64::MIN_POSITIVE))
        .collect();
    (y, w)
}

/// The weighted RSS (weights `1/ȳ²`) of `model`'s hypothesis — its non-constant terms,
/// coefficients refitted freely to the means of the repetitions.
pub fn hypothesis_wrss(model: &Pmnf, parameters: &[String], points: &[Point]) -> Option<f64> {
    let (y, w) = means_and_weights(points);
    let terms: Vec<Monomial> = model
        .terms()
        .filter(|(_, m)| !m.is_constant())
        .map(|(_, m)| m.clone())
        .collect();
    weighted_fit(&terms, parameters, points, &y, &w, false).map(|(_, wrss)| wrss)
}

/// The pooled relative variance of a point's mean, from the repetitions' spread
/// (`s²/(r·ȳ²)` pooled over points with their degrees of freedom); the unit in which
/// differences of weighted RSS are χ² values.
pub fn mean_relative_variance(points: &[Point]) -> Option<f64> {
    let (mut sum, mut dof) = (0.0, 0.0);
    for p in points {
        let r = p.values.len() as f64;
        if r < 2.0 {
            continue;
        }
        let m = p.values.iter().sum::<f64>() / r;
        let ss: f64 = p.values.iter().map(|v| (v - m) * (v - m)).sum();
        sum += ss / (r * m * m);
        dof += r - 1.0;
    }
    (dof > 0.0).then(|| sum / dof)
}

/// The oracle of one region (see [`Oracle`]); `extra` models (e.g. what the modelers
/// chose) are added to the rivals when they have the truth's number of terms. `None`
/// for a constant truth or one not made by [`random_truth`].
pub fn oracle(
    truth: &Pmnf,
    parameters: &[String],
    points: &[Point],
    extra: &[&Pmnf],
) -> Option<Oracle> {
    let (truth_blocks, form) = decompose(truth, parameters)?;
    if form.is_empty() || points.iter().any(|p| p.values.is_empty()) {
        return None;
    }
    let (y, w) = means_and_weights(points);
    let truth_terms: Vec<Monomial> = truth
        .terms()
        .filter(|(_, m)| !m.is_constant())
        .map(|(_, m)| m.clone())
        .collect();
    // The truth and its rivals alike keep every coefficient positive, as the generator
    // does; a truth whose best such fit does not exist (a true term fitted negative)
    // cannot be told apart.
    let truth_wrss = weighted_fit(&truth_terms, parameters, points, &y, &w, true)
        .map_or(f64::INFINITY, |(_, wrss)| wrss);
    let k = form.len();
    let all = extrap_blocks();
    let mut rivals: Vec<Vec<Monomial>> = Vec::new();
    let exhaustive = parameters.len() <= 2;
    match parameters.len() {
        1 => {
            let single = |b: &Power| Monomial::power(&parameters[0], b.exp, b.log);
            if k == 1 {
                rivals.extend(all.iter().map(|b| vec![single(b)]));
            } else {
                for (i, a) in all.iter().enumerate() {
                    for b in &all[i + 1..] {
                        rivals.push(vec![single(a), single(b)]);
                    }
                }
            }
        }
        2 => {
            for f in forms(2).iter().filter(|f| f.len() == k) {
                for a in &all {
                    for b in &all {
                        rivals.push(build(parameters, f, &[*a, *b]));
                    }
                }
            }
        }
        _ => {
            let base: Vec<Power> = truth_blocks.iter().map(|b| b.unwrap_or(all[0])).collect();
            for l in 0..parameters.len() {
                for b in &all {
                    let mut v = base.clone();
                    v[l] = *b;
                    rivals.push(build(parameters, &form, &v));
                }
            }
            for f in forms(parameters.len().min(3))
                .iter()
                .filter(|f| f.len() == k)
            {
                rivals.push(build(parameters, f, &base));
            }
        }
    }
    for e in extra {
        let terms: Vec<Monomial> = e
            .terms()
            .filter(|(_, m)| !m.is_constant())
            .map(|(_, m)| m.clone())
            .collect();
        if terms.len() == k {
            rivals.push(terms);
        }
    }
    let key = |t: &[Monomial]| {
        let mut v = t.to_vec();
        v.sort();
        v
    };
    let truth_key = key(&truth_terms);
    let mut best: Option<(Pmnf, f64)> = None;
    for r in rivals {
        if key(&r) == truth_key {
            continue;
        }
        if let Some((coef, wrss)) = weighted_fit(&r, parameters, points, &y, &w, true) {
            if best.as_ref().is_none_or(|(_, b)| wrss < *b) {
                let model = Pmnf::from_terms(
                    std::iter::once((coef[0], Monomial::one()))
                        .chain(coef[1..].iter().copied().zip(r)),
                );
                best = Some((model, wrss));
            }
        }
    }
    Some(Oracle {
        truth_wrss,
        rival: best,
        exhaustive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Q;

    fn config(params: &[&str]) -> SynthConfig {
        SynthConfig {
            shape: TruthShape::Mixed,
            parameters: params.iter().map(|s| s.to_string()).collect(),
            values: params
                .iter()
                .map(|_| vec![4.0, 8.0, 16.0, 32.0, 64.0])
                .collect(),
            regions: 20,
            noise: 0.02,
            repetitions: 5,
            seed: 7,
        }
    }

    #[test]
    fn generation_is_seeded_and_noise_is_bounded() {
        let c = config(&["x", "y"]);
        let a = generate(&c);
        let b = generate(&c);
        assert_eq!(a.len(), 20);
        for (ra, rb) in a.iter().zip(&b) {
            assert_eq!(ra.truth, rb.truth);
            assert_eq!(ra.points, rb.points);
            assert_eq!(ra.points.len(), 25);
            for p in &ra.points {
                let f = eval(&ra.truth, &c.parameters, &p.coordinate);
                for v in &p.values {
                    assert!((v / f - 1.0).abs() <= c.noise);
                }
            }
        }
    }

    #[test]
    fn identifiability_and_exponent_comparison() {
        let p = vec!["x".to_string()];
        let x = Monomial::param("x");
        let small = Pmnf::from_terms([(500.0, Monomial::one()), (0.1, x.clone())]);
        assert!(!identifiable(&small, &p, &[64.0], 0.02, 5.0));
        let big = Pmnf::from_terms([(5.0, Monomial::one()), (2.0, x.clone())]);
        assert!(identifiable(&big, &p, &[64.0], 0.02, 5.0));
        assert!(same_exponents(&small, &Pmnf::term(7.0, x)));
        assert!(!same_exponents(&small, &Pmnf::constant(1.0)));
    }

    fn exact_points(model: &Pmnf, p: &[String], xs: &[f64]) -> Vec<Point> {
        xs.iter()
            .map(|&x| {
                let f = eval(model, p, &[x]);
                // Two repetitions ±0.1 %: a pooled variance to divide by.
                Point::new(vec![x], vec![f * 0.999, f * 1.001])
            })
            .collect()
    }

    #[test]
    fn oracle_tells_whether_the_truth_fits_best_among_its_size() {
        let p = vec!["x".to_string()];
        let xs = [4.0, 8.0, 16.0, 32.0, 64.0];
        let sqrt = Monomial::power("x", Q::new(1, 2), Q::from_integer(0));
        let linear = Monomial::param("x");
        let truth = Pmnf::from_terms([(3.0, Monomial::one()), (2.0, sqrt.clone())]);
        // Data that follow the truth: it fits exactly, every rival worse.
        let o = oracle(&truth, &p, &exact_points(&truth, &p, &xs), &[]).unwrap();
        assert!(o.exhaustive && o.distinguishable());
        assert!(o.truth_wrss < 1e-20);
        assert!(o.rival.as_ref().unwrap().1 > 0.0);
        // Data that follow another hypothesis of the same size: that rival wins.
        let other = Pmnf::from_terms([(3.0, Monomial::one()), (2.0, linear.clone())]);
        let o = oracle(&truth, &p, &exact_points(&other, &p, &xs), &[]).unwrap();
        assert!(!o.distinguishable());
        assert!(same_exponents(&o.rival.unwrap().0, &other));
        // Two-term truths compete with every pair; the measures agree with a free fit.
        let two = Pmnf::from_terms([(3.0, Monomial::one()), (2.0, sqrt), (0.5, linear)]);
        let pts = exact_points(&two, &p, &xs);
        let o = oracle(&two, &p, &pts, &[]).unwrap();
        assert!(o.distinguishable());
        assert!(hypothesis_wrss(&two, &p, &pts).unwrap() < 1e-20);
        // Sample variance (0.001·f)² · 2 / (2 − 1); the mean of two values has half of it.
        let v = mean_relative_variance(&pts).unwrap();
        assert!((v - 1e-6).abs() < 1e-12, "{v}");
        // A constant truth has no oracle.
        assert!(oracle(&Pmnf::constant(1.0), &p, &pts, &[]).is_none());
    }

    #[test]
    fn one_term_truths_have_one_term() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for params in [
            vec!["x".to_string()],
            vec!["x".to_string(), "y".to_string()],
        ] {
            for _ in 0..50 {
                let t = random_truth_shaped(&mut rng, &params, TruthShape::OneTerm);
                let terms: Vec<_> = t.terms().filter(|(_, m)| !m.is_constant()).collect();
                assert_eq!(terms.len(), 1);
                assert_eq!(terms[0].1.factors().count(), params.len());
            }
        }
    }
}
