//! Coverage of perfcompose's prediction intervals on synthetic measurements with known
//! truth (the target of issue #54: nominal 95% intervals contain the truth at 4× the
//! largest measured point in 90–98% of the regions).
//!
//! ```sh
//! cargo run -p perfcompose-core --release --example uncertainty_bench -- [--regions 400] [--seed 11] [--noise 0.03]
//! ```
//!
//! Seeded regions of one parameter on the 5-point grid x = 4..64 (5 repetitions, ±noise,
//! seed 000's mixture of true models, as `fit_bench` draws them) are fitted by the default
//! modeler; each fit's coefficient covariance gives the uncertain model. For a component
//! alone and for `seq` (sum) and `pipe` (maximum) of two regions' components, the share of
//! regions whose 95% interval at x = 256 contains the true value, and the median
//! relative half-width of the intervals.

use perfcompose_core::fit::synth::{self, SynthConfig, TruthShape};
use perfcompose_core::fit::{modeler, FitOptions, DEFAULT_MODELER};
use perfcompose_core::model::Expr;
use perfcompose_core::uncertainty::{Draws, Uncertain};

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

fn main() {
    let regions = arg("--regions", 400.0) as usize;
    let seed = arg("--seed", 11.0) as u64;
    let noise = arg("--noise", 0.03);
    let x = 256.0;
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
    let fitted: Vec<(f64, Uncertain)> = synth::generate(&config)
        .into_iter()
        .filter_map(|r| {
            let fit = m
                .fit(&config.parameters, &r.points, &FitOptions::default())
                .ok()?;
            let truth = synth::eval(&r.truth, &config.parameters, &[x]);
            Some((truth, Uncertain::from_fit("c", &fit)?))
        })
        .collect();
    let mut rows = Vec::new();
    let mut single = (0usize, Vec::new());
    for (truth, u) in &fitted {
        let d = Draws::sample(std::slice::from_ref(u), 1000, seed);
        let i = d
            .interval(&u.template, &[("x", x)], 0.95)
            .expect("an interval");
        single.0 += usize::from(i.low <= *truth && *truth <= i.high);
        single.1.push((i.high - i.low) / 2.0 / truth.abs());
    }
    rows.push(("component", single.0, fitted.len(), median(single.1)));
    let mut seq = (0usize, Vec::new());
    let mut pipe = (0usize, Vec::new());
    let pairs: Vec<_> = fitted.chunks_exact(2).collect();
    for w in &pairs {
        let (ta, a) = &w[0];
        let (tb, b) = (&w[1].0, w[1].1.renamed("b"));
        let d = Draws::sample(&[a.clone(), b.clone()], 1000, seed);
        for (model, truth, acc) in [
            (
                Expr::add(a.template.clone(), b.template.clone()),
                ta + tb,
                &mut seq,
            ),
            (
                Expr::max(a.template.clone(), b.template.clone()),
                ta.max(*tb),
                &mut pipe,
            ),
        ] {
            let i = d.interval(&model, &[("x", x)], 0.95).expect("an interval");
            acc.0 += usize::from(i.low <= truth && truth <= i.high);
            acc.1.push((i.high - i.low) / 2.0 / truth.abs());
        }
    }
    rows.push(("seq of two", seq.0, pairs.len(), median(seq.1)));
    rows.push(("pipe of two", pipe.0, pairs.len(), median(pipe.1)));
    println!("regions {regions}, seed {seed}, noise ±{:.0}%, 95% intervals at x = {x} (4× the largest measured)", noise * 100.0);
    println!("| what | within | coverage | median half-width |");
    println!("|---|---|---|---|");
    for (what, hit, n, w) in rows {
        println!(
            "| {what} | {hit} of {n} | {:.1}% | {:.1}% |",
            100.0 * hit as f64 / n as f64,
            100.0 * w
        );
    }
}
