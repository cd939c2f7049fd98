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
//! [`space::extrap_blocks`](super::space::extrap_blocks) for its parameter.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::eval_monomial;
use super::space::extrap_blocks;
use crate::measure::Point;
use crate::model::{Monomial, Pmnf, Power};

/// What to generate.
#[derive(Clone, Debug)]
pub struct SynthConfig {
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

/// A random true model over `parameters`.
pub fn random_truth(rng: &mut ChaCha8Rng, parameters: &[String]) -> Pmnf {
    let blocks = extrap_blocks();
    let mut terms = vec![(coefficient(rng), Monomial::one())];
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
            let truth = random_truth(&mut rng, &config.parameters);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(params: &[&str]) -> SynthConfig {
        SynthConfig {
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
}
