//! Which statistic of a point's repetitions recovers a block's true model most often:
//! the mean, the median or the minimum, under the noise of a quiet machine and of a
//! shared one (the measurement behind the default statistic, `docs/fitting.md`).
//!
//! ```sh
//! cargo run -p perfcompose-core --release --example statistic_bench -- [--regions 400] [--seed 5]
//! ```
//!
//! Seeded regions of one parameter, x = 4..64 (5 points), true models drawn as
//! `fit_bench` draws them ([`perfcompose_core::fit::synth`]); each repetition is the true
//! value `f` times a noise factor:
//!
//! * `uniform ±3%`: `1 + U(−1, 1)·0.03`, Extra-P's synthetic noise (symmetric);
//! * `shared`: `1 + N(0, 0.02)` jitter, and with probability 0.2 a slowdown by
//!   `1 + Exp(mean 0.5)` (other work on the machine only slows a repetition down);
//! * `shared, heavy`: the same with probability 0.4 and `1 + Exp(mean 1)`;
//! * `stalls`: the jitter, and with probability 0.3 a stall of `Exp(mean 0.3·f(64))`
//!   added: a fixed cost, so it weighs most on the small sizes (a block of the issue
//!   that made the mean fit `188441 + 0.716·x^(4/3)·log2(x)` for `152·x`).
//!
//! with 5 repetitions a point, or (`reps 5–40`) a count drawn per point from 5..=40, as
//! `perfcompose measure` stops when the median's interval is narrow enough. Each region
//! is fitted by the default modeler on each statistic; a row gives the share of regions
//! whose fitted exponents are the truth's, and the median relative error of the model at
//! 4× the largest point against the undisturbed truth `f`.

use perfcompose_core::fit::synth::{self, TruthShape};
use perfcompose_core::fit::{modeler, FitOptions, Measure, DEFAULT_MODELER};
use perfcompose_core::measure::Point;
use perfcompose_core::model::Pmnf;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

#[derive(Clone, Copy)]
enum Noise {
    Uniform,
    Shared { p: f64, slowdown: f64 },
    Stalls,
}

struct Case {
    name: &'static str,
    noise: Noise,
    /// Repetitions per point: a fixed count, or drawn from `lo..=hi` per point.
    reps: (usize, usize),
}

const CASES: &[Case] = &[
    Case {
        name: "uniform ±3%, 5 reps",
        noise: Noise::Uniform,
        reps: (5, 5),
    },
    Case {
        name: "uniform ±3%, reps 5–40",
        noise: Noise::Uniform,
        reps: (5, 40),
    },
    Case {
        name: "shared, 5 reps",
        noise: Noise::Shared {
            p: 0.2,
            slowdown: 0.5,
        },
        reps: (5, 5),
    },
    Case {
        name: "shared, reps 5–40",
        noise: Noise::Shared {
            p: 0.2,
            slowdown: 0.5,
        },
        reps: (5, 40),
    },
    Case {
        name: "shared, heavy, 5 reps",
        noise: Noise::Shared {
            p: 0.4,
            slowdown: 1.0,
        },
        reps: (5, 5),
    },
    Case {
        name: "stalls, 5 reps",
        noise: Noise::Stalls,
        reps: (5, 5),
    },
];

/// The regions of `case`: their true models and noisy points.
fn regions(case: &Case, xs: &[f64], n: usize, seed: u64) -> Vec<(Pmnf, Vec<Point>)> {
    let parameters = vec!["x".to_string()];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let jitter: Normal<f64> = Normal::new(0.0, 0.02).expect("a normal distribution");
    (0..n)
        .map(|_| {
            let truth = synth::random_truth_shaped(&mut rng, &parameters, TruthShape::Mixed);
            let top = synth::eval(&truth, &parameters, &[xs[xs.len() - 1]]);
            let points = xs
                .iter()
                .map(|&x| {
                    let f = synth::eval(&truth, &parameters, &[x]);
                    let reps = rng.gen_range(case.reps.0..=case.reps.1);
                    let values = (0..reps)
                        .map(|_| match case.noise {
                            Noise::Uniform => f * (1.0 + rng.gen_range(-1.0..1.0) * 0.03),
                            Noise::Shared { p, slowdown } => {
                                let slow = if rng.gen_bool(p) {
                                    1.0 + Exp::new(1.0 / slowdown).expect("a rate").sample(&mut rng)
                                } else {
                                    1.0
                                };
                                f * (1.0 + jitter.sample(&mut rng)).max(0.5f64) * slow
                            }
                            Noise::Stalls => {
                                let stall = if rng.gen_bool(0.3) {
                                    Exp::new(1.0 / (0.3 * top))
                                        .expect("a rate")
                                        .sample(&mut rng)
                                } else {
                                    0.0
                                };
                                f * (1.0 + jitter.sample(&mut rng)).max(0.5f64) + stall
                            }
                        })
                        .collect();
                    Point::new(vec![x], values)
                })
                .collect();
            (truth, points)
        })
        .collect()
}

fn main() {
    let n = arg("--regions", 400.0) as usize;
    let seed = arg("--seed", 5.0) as u64;
    let xs: Vec<f64> = (0..5).map(|k| 4.0 * 2f64.powi(k)).collect();
    let parameters = vec!["x".to_string()];
    let m = modeler(DEFAULT_MODELER).expect("the default modeler");
    let stats = [Measure::Mean, Measure::Median, Measure::Minimum];
    println!(
        "regions {n}, seed {seed}, x = 4..64, default modeler; exponents recovered / median |error| at x = 256 against the undisturbed truth"
    );
    println!("| noise | mean | median | minimum |");
    println!("|---|---|---|---|");
    for (k, case) in CASES.iter().enumerate() {
        let data = regions(case, &xs, n, seed.wrapping_add(k as u64));
        let cells: Vec<String> = stats
            .iter()
            .map(|&measure| {
                let opts = FitOptions {
                    measure: Some(measure),
                    ..FitOptions::default()
                };
                let mut hit = 0;
                let mut errors = Vec::new();
                for (truth, points) in &data {
                    let Ok(fit) = m.fit(&parameters, points, &opts) else {
                        continue;
                    };
                    let Some(p) = fit.model.as_pmnf() else {
                        continue;
                    };
                    hit += usize::from(synth::same_exponents(truth, p));
                    let t = synth::eval(truth, &parameters, &[256.0]);
                    let f = synth::eval(p, &parameters, &[256.0]);
                    errors.push(((f - t) / t).abs());
                }
                format!(
                    "{:.1}% / {:.1}%",
                    100.0 * hit as f64 / data.len() as f64,
                    100.0 * median(errors)
                )
            })
            .collect();
        println!("| {} | {} |", case.name, cells.join(" | "));
    }
}
