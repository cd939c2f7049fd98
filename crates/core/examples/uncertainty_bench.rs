//! Coverage of perfcompose's prediction intervals on synthetic measurements with known
//! truth (the target of issue #54: nominal 95% intervals contain the truth at 4× the
//! largest measured point in 90–98% of the regions).
//!
//! ```sh
//! cargo run -p perfcompose-core --release --example uncertainty_bench -- [--regions 400] [--seed 11] [--noise 0.03] [--replicates 100]
//! ```
//!
//! Seeded regions of one parameter on the 5-point grid x = 4..64 (5 repetitions, ±noise,
//! seed 000's mixture of true models, as `fit_bench` draws them) are fitted by the default
//! modeler. Two ways to an interval: the fit's coefficient covariance alone, and the
//! bootstrap ensemble (`--replicates` refits to resampled repetitions, 10 coefficient
//! draws each). For a component alone and for `seq` (sum) and `pipe` (maximum) of two
//! regions' components, the share of regions whose 95% interval at x = 256 contains the
//! true value, and the median relative half-width of the intervals.

use perfcompose_core::fit::synth::{self, SynthConfig, TruthShape};
use perfcompose_core::fit::{modeler, FitOptions, DEFAULT_MODELER};
use perfcompose_core::uncertainty::{interval_of, Draws, Ensemble, Uncertain};

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

/// Hits and relative half-widths of intervals.
#[derive(Default)]
struct Tally {
    hit: usize,
    n: usize,
    widths: Vec<f64>,
}

impl Tally {
    fn add(&mut self, values: Vec<f64>, truth: f64) {
        let Some(i) = interval_of(values, 0.95) else {
            return;
        };
        self.n += 1;
        self.hit += usize::from(i.low <= truth && truth <= i.high);
        self.widths.push((i.high - i.low) / 2.0 / truth.abs());
    }
}

fn main() {
    let regions = arg("--regions", 400.0) as usize;
    let seed = arg("--seed", 11.0) as u64;
    let noise = arg("--noise", 0.03);
    let replicates = arg("--replicates", 100.0) as usize;
    let x = 256.0;
    let at = [("x", x)];
    let config = SynthConfig {
        shape: TruthShape::Mixed,
        parameters: vec!["x".into()],
        values: vec![(0..5).map(|k| 4.0 * 2f64.powi(k)).collect()],
        regions,
        noise,
        repetitions: 5,
        seed,
    };
    let m = modeler(DEFAULT_MODELER).expect("the default modeler");
    let opts = FitOptions::default();
    // Per region: the truth at x, the covariance-only draws, the ensemble's draws.
    let fitted: Vec<(f64, Vec<f64>, Vec<f64>)> = synth::generate(&config)
        .into_iter()
        .enumerate()
        .filter_map(|(k, r)| {
            let fit = m.fit(&config.parameters, &r.points, &opts).ok()?;
            let u = Uncertain::from_fit("c", &fit)?;
            let e = Ensemble::bootstrap(
                "c",
                m,
                &config.parameters,
                &r.points,
                &opts,
                replicates,
                seed ^ k as u64,
            )?;
            let truth = synth::eval(&r.truth, &config.parameters, &[x]);
            let cov = Draws::sample(std::slice::from_ref(&u), 1000, seed).values(&u.template, &at);
            Some((truth, cov, e.values(&at, 10, seed)))
        })
        .collect();
    let mut t: [[Tally; 2]; 3] = Default::default();
    for (truth, cov, boot) in &fitted {
        t[0][0].add(cov.clone(), *truth);
        t[0][1].add(boot.clone(), *truth);
    }
    for w in fitted.chunks_exact(2) {
        let (ta, tb) = (w[0].0, w[1].0);
        for (j, (a, b)) in [(&w[0].1, &w[1].1), (&w[0].2, &w[1].2)]
            .into_iter()
            .enumerate()
        {
            let sum = a.iter().zip(b).map(|(p, q)| p + q).collect();
            let max = a.iter().zip(b).map(|(p, q)| p.max(*q)).collect();
            t[1][j].add(sum, ta + tb);
            t[2][j].add(max, ta.max(tb));
        }
    }
    println!(
        "regions {regions}, seed {seed}, noise ±{:.0}%, {replicates} bootstrap refits, 95% intervals at x = {x} (4× the largest measured)",
        noise * 100.0
    );
    println!(
        "| what | covariance only | median half-width | bootstrap ensemble | median half-width |"
    );
    println!("|---|---|---|---|---|");
    for (name, row) in ["component", "seq of two", "pipe of two"].iter().zip(t) {
        let [c, b] = row;
        let pct = |t: &Tally| {
            format!(
                "{} of {} ({:.1}%)",
                t.hit,
                t.n,
                100.0 * t.hit as f64 / t.n.max(1) as f64
            )
        };
        println!(
            "| {name} | {} | {:.1}% | {} | {:.1}% |",
            pct(&c),
            100.0 * median(c.widths.clone()),
            pct(&b),
            100.0 * median(b.widths.clone())
        );
    }
}
