use super::*;
use crate::fit::synth::{self, SynthConfig, TruthShape};
use crate::fit::{modeler, FitOptions, DEFAULT_MODELER};
use crate::model::parse_model;

/// Seeded synthetic regions of one parameter on the 5-point grid x = 4..64 (±`noise`,
/// 5 repetitions), each fitted by the default modeler; per region the truth, the fit's
/// uncertain model, or `None` when the fit has no covariance.
fn fitted_regions(regions: usize, noise: f64, seed: u64) -> Vec<(Pmnf, Option<Uncertain>)> {
    let config = SynthConfig {
        shape: TruthShape::Mixed,
        parameters: vec!["x".into()],
        values: vec![(0..5).map(|k| 4.0 * 2f64.powi(k)).collect()],
        regions,
        noise,
        repetitions: 5,
        seed,
    };
    let m = modeler(DEFAULT_MODELER).unwrap();
    synth::generate(&config)
        .into_iter()
        .map(|r| {
            let fit = m
                .fit(&config.parameters, &r.points, &FitOptions::default())
                .unwrap();
            (r.truth.clone(), Uncertain::from_fit("c", &fit))
        })
        .collect()
}

#[test]
fn a_fits_template_at_its_mean_is_the_fitted_model() {
    for (_, u) in fitted_regions(20, 0.03, 7) {
        let u = u.expect("five points of five repetitions leave degrees of freedom");
        let env: Vec<(&str, f64)> = u
            .coefficients
            .iter()
            .map(String::as_str)
            .zip(u.mean.iter().copied())
            .chain([("x", 100.0)])
            .collect();
        let from_template = u.template.eval_at(&env).unwrap();
        let mut point = u.template.clone();
        for (n, v) in u.coefficients.iter().zip(&u.mean) {
            point = point.subst(n, &Expr::constant(*v));
        }
        assert!(
            (point.eval_at(&[("x", 100.0)]).unwrap() - from_template).abs()
                <= 1e-9 * from_template.abs()
        );
    }
}

#[test]
fn draws_are_reproducible_and_follow_the_covariance() {
    let u = Uncertain {
        name: "a".into(),
        template: parse_model("p + q * x").unwrap(),
        coefficients: vec!["p".into(), "q".into()],
        mean: vec![10.0, 2.0],
        covariance: vec![vec![4.0, 1.0], vec![1.0, 1.0]],
    };
    let d = Draws::sample(std::slice::from_ref(&u), 20000, 3);
    let again = Draws::sample(std::slice::from_ref(&u), 20000, 3);
    assert_eq!(d.values, again.values);
    let n = d.values.len() as f64;
    let mean_p = d.values.iter().map(|r| r[0]).sum::<f64>() / n;
    let mean_q = d.values.iter().map(|r| r[1]).sum::<f64>() / n;
    let cov_pq = d
        .values
        .iter()
        .map(|r| (r[0] - mean_p) * (r[1] - mean_q))
        .sum::<f64>()
        / n;
    let var_p = d
        .values
        .iter()
        .map(|r| (r[0] - mean_p).powi(2))
        .sum::<f64>()
        / n;
    assert!((mean_p - 10.0).abs() < 0.05 && (mean_q - 2.0).abs() < 0.03);
    assert!(
        (var_p - 4.0).abs() < 0.15 && (cov_pq - 1.0).abs() < 0.06,
        "{var_p} {cov_pq}"
    );
    // p + q·x at x = 3: mean 16, variance 4 + 2·3·1 + 9·1 = 19.
    let i = d.interval(&u.template, &[("x", 3.0)], 0.95).unwrap();
    let half = 1.96 * 19f64.sqrt();
    assert!(
        (i.low - (16.0 - half)).abs() < 0.2 && (i.high - (16.0 + half)).abs() < 0.2,
        "{i:?}"
    );
}

#[test]
fn the_probability_that_one_model_is_smaller_is_a_share_of_draws() {
    let a = Uncertain::relative("a", &parse_model("100 * x").unwrap(), 0.05).unwrap();
    let b = Uncertain::relative("b", &parse_model("104 * x").unwrap(), 0.05).unwrap();
    let d = Draws::sample(&[a.clone(), b.clone()], 4000, 1);
    let p = d
        .probability_smaller(&a.template, &b.template, &[("x", 10.0)])
        .unwrap();
    // Difference 4 with sd ≈ √(25 + 27) ≈ 7.2: P ≈ Φ(0.55) ≈ 0.71.
    assert!((p - 0.71).abs() < 0.04, "{p}");
    let p = d
        .probability_smaller(&a.template, &a.template, &[("x", 10.0)])
        .unwrap();
    assert_eq!(p, 0.0);
}

#[test]
fn a_bootstrap_ensemble_is_reproducible_and_brackets_the_fit() {
    let config = SynthConfig {
        shape: TruthShape::Mixed,
        parameters: vec!["x".into()],
        values: vec![(0..5).map(|k| 4.0 * 2f64.powi(k)).collect()],
        regions: 5,
        noise: 0.03,
        repetitions: 5,
        seed: 21,
    };
    let m = modeler(DEFAULT_MODELER).unwrap();
    let opts = FitOptions::default();
    for r in synth::generate(&config) {
        let e = Ensemble::bootstrap("c", m, &config.parameters, &r.points, &opts, 30, 4).unwrap();
        let again =
            Ensemble::bootstrap("c", m, &config.parameters, &r.points, &opts, 30, 4).unwrap();
        assert_eq!(e.replicates, again.replicates);
        assert!(e.replicates.len() >= 25);
        // Inside the measured range the ensemble's 99% interval holds the fit's value.
        let fit = m.fit(&config.parameters, &r.points, &opts).unwrap();
        let v = fit.model.eval_at(&[("x", 16.0)]).unwrap();
        let i = interval_of(e.values(&[("x", 16.0)], 10, 1), 0.99).unwrap();
        assert!(i.low <= v && v <= i.high, "{v} not in {i:?}");
    }
}
