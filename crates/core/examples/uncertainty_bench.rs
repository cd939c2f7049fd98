//! Coverage of perfcompose's prediction intervals on synthetic measurements with known
//! truth (the target of issue #54: nominal 95% intervals contain the truth at 4× the
//! largest measured point in 90–98% of the regions).
//!
//! ```sh
//! cargo run -p perfcompose-core --release --example uncertainty_bench -- [--regions 400] [--seed 11] [--noise 0.03] [--replicates 100] [--parameters 1] [--measure minimum]
//! ```
//!
//! Seeded regions of one parameter on the 5-point grid x = 4..64 (or of two, x and y, on
//! the 5×5 grid; 5 repetitions, ±noise,
//! the pattern-composition paper's mixture of true models, as `fit_bench` draws them) are fitted by the default
//! modeler. Two ways to an interval: the fit's coefficient covariance alone, and what
//! `perfcompose predict` uses (`--replicates` bootstrap refits to resampled repetitions,
//! [`perfcompose_core::uncertainty::fitted`]). Each region becomes a component; terms of
//! one, two and three of them are composed and sampled the way `predict` does it
//! ([`perfcompose_core::compose::interval`]), and the bench reports the share of
//! compositions whose 95% interval at x = 256 contains the true value (of the statistic
//! fitted, `--measure`, the default one unless given: the true model for the mean and
//! the median, the expected fastest of the repetitions for the minimum), the median
//! relative half-width of the intervals, and how many intervals reach below zero.

use perfcompose_core::components::{Component, ComponentSource, Components};
use perfcompose_core::compose::interval::{composed_template, templated, IntervalOptions, Sampler};
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::fit::synth::{self, SynthConfig, TruthShape};
use perfcompose_core::fit::{modeler, FitOptions, Measure, DEFAULT_MODELER};
use perfcompose_core::model::{Expr, Pmnf};
use perfcompose_core::term::parse_term;
use perfcompose_core::uncertainty::{fitted, Source, Uncertain, Uncertainty};

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

/// Hits, relative half-widths and low ends below zero of intervals.
#[derive(Default)]
struct Tally {
    hit: usize,
    n: usize,
    widths: Vec<f64>,
    below_zero: usize,
}

impl Tally {
    fn add(&mut self, low: f64, high: f64, truth: f64) {
        self.n += 1;
        self.hit += usize::from(low <= truth && truth <= high);
        self.widths.push((high - low) / 2.0 / truth.abs());
        self.below_zero += usize::from(low < 0.0);
    }
}

/// The compositions scored, with how their true value follows from the blocks'.
const TERMS: &[(&str, usize)] = &[
    ("a", 1),
    ("seq(a, b)", 2),
    ("pipe(a, b)", 2),
    ("pipe(tpool(2, a), seq(b, c))", 3),
];

fn truth_of(term: &str, t: &[f64]) -> f64 {
    match term {
        "a" => t[0],
        "seq(a, b)" => t[0] + t[1],
        "pipe(a, b)" => t[0].max(t[1]),
        _ => (t[0] / 2.0).max(t[1] + t[2]),
    }
}

/// The 95% interval of `term` at x from components a, b, c (their uncertainties
/// `u`), as `predict` computes it.
fn interval(term: &str, u: &[Uncertainty], seed: u64, at: &[(String, f64)]) -> Option<(f64, f64)> {
    let names = ["a", "b", "c"];
    let components = u
        .iter()
        .zip(names)
        .fold(Components::default(), |c, (u, n)| {
            let renamed = u.renamed(n);
            let model = Expr::Poly(Pmnf::zero());
            c.with(Component {
                uncertainty: Some(renamed),
                ..Component::exact(n, model, ComponentSource::BuiltIn)
            })
        });
    let t = parse_term("<bench>", term).ok()?;
    let m = composed_template(&t, &templated(&components), ComposeOptions::default(), None).ok()?;
    let options = IntervalOptions {
        seed,
        ..IntervalOptions::default()
    };
    let s = Sampler::new(&[&m], &components, options)?;
    let i = s.interval(&s.batch(&m), &at.to_vec())?;
    Some((i.low, i.high))
}

/// What the statistic of `r` repetitions `f·(1 + U(−1, 1)·noise)` estimates, over `f`:
/// the truth for the mean and the median of this symmetric noise; for the minimum, the
/// expected smallest of `r` draws, `1 − noise·(r − 1)/(r + 1)` (the maximum likewise).
fn statistic_factor(measure: Measure, noise: f64, r: usize) -> f64 {
    let edge = noise * (r as f64 - 1.0) / (r as f64 + 1.0);
    match measure {
        Measure::Mean | Measure::Median => 1.0,
        Measure::Minimum => 1.0 - edge,
        Measure::Maximum => 1.0 + edge,
    }
}

fn main() {
    let regions = arg("--regions", 400.0) as usize;
    let seed = arg("--seed", 11.0) as u64;
    let noise = arg("--noise", 0.03);
    let replicates = arg("--replicates", 100.0) as usize;
    let dims = arg("--parameters", 1.0).clamp(1.0, 2.0) as usize;
    let x = 256.0;
    let parameters: Vec<String> = ["x", "y"][..dims].iter().map(|s| s.to_string()).collect();
    let at: Vec<(String, f64)> = parameters.iter().map(|p| (p.clone(), x)).collect();
    let config = SynthConfig {
        shape: TruthShape::Mixed,
        parameters: parameters.clone(),
        values: vec![(0..5).map(|k| 4.0 * 2f64.powi(k)).collect(); dims],
        regions,
        noise,
        repetitions: 5,
        seed,
    };
    let m = modeler(DEFAULT_MODELER).expect("the default modeler");
    let measure: Measure = std::env::args()
        .skip_while(|a| a != "--measure")
        .nth(1)
        .map_or_else(Measure::default, |m| m.parse().expect("a statistic"));
    let opts = FitOptions {
        measure: Some(measure),
        ..FitOptions::default()
    };
    let truth_factor = statistic_factor(measure, noise, config.repetitions);
    // Per region: the truth at x, the covariance-only uncertainty, the bootstrap's.
    let fitted: Vec<(f64, Uncertainty, Uncertainty)> = synth::generate(&config)
        .into_iter()
        .enumerate()
        .filter_map(|(k, r)| {
            let fit = m.fit(&config.parameters, &r.points, &opts).ok()?;
            let cov = Uncertainty::normal(&Uncertain::from_fit("c", &fit)?, Source::FitCovariance);
            let boot = fitted("c", &fit, m, &r.points, &opts, replicates, seed ^ k as u64)?;
            Some((
                truth_factor * synth::eval(&r.truth, &config.parameters, &vec![x; dims]),
                cov,
                boot,
            ))
        })
        .collect();
    println!(
        "regions {regions}, seed {seed}, noise ±{:.0}%, {dims} parameter(s), fitted on the {measure}, {replicates} bootstrap refits, 95% intervals at {} = {x} (4× the largest measured)",
        noise * 100.0,
        parameters.join(" = ")
    );
    println!("| composition | covariance only | median half-width | bootstrap (predict) | median half-width | low end < 0 (covariance / bootstrap) |");
    println!("|---|---|---|---|---|---|");
    for (term, n) in TERMS {
        let mut t: [Tally; 2] = Default::default();
        for group in fitted.chunks_exact(*n) {
            let truths: Vec<f64> = group.iter().map(|g| g.0).collect();
            let truth = truth_of(term, &truths);
            for (j, tally) in t.iter_mut().enumerate() {
                let u: Vec<Uncertainty> = group
                    .iter()
                    .map(|g| if j == 0 { g.1.clone() } else { g.2.clone() })
                    .collect();
                if let Some((low, high)) = interval(term, &u, seed, &at) {
                    tally.add(low, high, truth);
                }
            }
        }
        let pct = |t: &Tally| {
            format!(
                "{} of {} ({:.1}%)",
                t.hit,
                t.n,
                100.0 * t.hit as f64 / t.n.max(1) as f64
            )
        };
        println!(
            "| {term} | {} | {:.1}% | {} | {:.1}% | {} / {} |",
            pct(&t[0]),
            100.0 * median(t[0].widths.clone()),
            pct(&t[1]),
            100.0 * median(t[1].widths.clone()),
            t[0].below_zero,
            t[1].below_zero
        );
    }
}
