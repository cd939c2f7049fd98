//! Tests shared by the modelers: exact recovery, bad input, statistics.

use super::space::extrap_blocks;
use super::synth::{eval, same_exponents};
use super::*;
use crate::model::{Monomial, Pmnf, Q};

/// Coefficients recovered from noise-free data agree to this relative error.
const COEF_TOL: f64 = 1e-6;

fn names(n: &[&str]) -> Vec<String> {
    n.iter().map(|s| s.to_string()).collect()
}

fn points_of(truth: &Pmnf, params: &[String], coords: &[Vec<f64>]) -> Vec<Point> {
    coords
        .iter()
        .map(|c| Point::new(c.clone(), vec![eval(truth, params, c)]))
        .collect()
}

fn line(xs: &[f64]) -> Vec<Vec<f64>> {
    xs.iter().map(|&x| vec![x]).collect()
}

fn assert_recovers(m: &dyn Modeler, truth: &Pmnf, params: &[String], coords: &[Vec<f64>]) {
    let fit = m
        .fit(
            params,
            &points_of(truth, params, coords),
            &FitOptions::default(),
        )
        .unwrap();
    let got = fit.pmnf().unwrap();
    assert!(
        same_exponents(got, truth),
        "{}: fitted {} for truth {}",
        m.name(),
        got.extrap(),
        truth.extrap()
    );
    assert!(
        got.max_relative_coefficient_difference(truth) < COEF_TOL,
        "{}: fitted {} for truth {}",
        m.name(),
        got.extrap(),
        truth.extrap()
    );
}

#[test]
fn every_single_term_hypothesis_is_recovered_exactly() {
    let p = names(&["x"]);
    let coords = line(&[4.0, 8.0, 16.0, 32.0, 64.0, 128.0]);
    for m in modelers() {
        for b in extrap_blocks() {
            let truth = Pmnf::from_terms([
                (3.0, Monomial::one()),
                (0.5, Monomial::power("x", b.exp, b.log)),
            ]);
            assert_recovers(m, &truth, &p, &coords);
        }
    }
}

#[test]
fn two_term_models_are_recovered_by_ours() {
    let p = names(&["x"]);
    let coords = line(&[2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]);
    let blocks = extrap_blocks();
    let ours = modeler(DEFAULT_MODELER).unwrap();
    // Pairs of well-separated growth (a log and a power, two powers a unit apart).
    for (a, b) in [(0, 30), (18, 40), (8, 30), (19, 30), (1, 21)] {
        let (a, b) = (blocks[a], blocks[b]);
        let truth = Pmnf::from_terms([
            (10.0, Monomial::one()),
            (2.0, Monomial::power("x", a.exp, a.log)),
            (0.1, Monomial::power("x", b.exp, b.log)),
        ]);
        assert_recovers(ours, &truth, &p, &coords);
    }
}

#[test]
fn multi_parameter_forms_are_recovered() {
    let p = names(&["x", "y"]);
    let xs = [4.0, 8.0, 16.0, 32.0, 64.0];
    let ys = [2.0, 4.0, 8.0, 16.0, 32.0];
    let coords: Vec<Vec<f64>> = xs
        .iter()
        .flat_map(|&x| ys.iter().map(move |&y| vec![x, y]))
        .collect();
    let a = Monomial::power("x", Q::new(3, 2), Q::from_integer(0));
    let b = Monomial::power("y", Q::from_integer(1), Q::from_integer(1));
    let ab = a.mul(&b).unwrap();
    for truth in [
        Pmnf::from_terms([(1.0, Monomial::one()), (0.5, ab.clone())]),
        Pmnf::from_terms([(1.0, Monomial::one()), (0.5, a.clone()), (2.0, b.clone())]),
        Pmnf::from_terms([(1.0, Monomial::one()), (0.5, ab.clone()), (2.0, a.clone())]),
        Pmnf::from_terms([(1.0, Monomial::one()), (0.5, ab.clone()), (2.0, b.clone())]),
    ] {
        for m in modelers() {
            assert_recovers(m, &truth, &p, &coords);
        }
    }
    // Three parameters, product plus a single.
    let p3 = names(&["x", "y", "z"]);
    let zs = [10.0, 20.0, 30.0, 40.0, 50.0];
    let coords3: Vec<Vec<f64>> = coords
        .iter()
        .flat_map(|c| zs.iter().map(move |&z| vec![c[0], c[1], z]))
        .collect();
    let c = Monomial::power("z", Q::new(1, 2), Q::from_integer(0));
    let abc = ab.mul(&c).unwrap();
    let truth = Pmnf::from_terms([(4.0, Monomial::one()), (0.01, abc), (3.0, c)]);
    for m in modelers() {
        assert_recovers(m, &truth, &p3, &coords3);
    }
}

#[test]
fn constant_and_degenerate_data_fall_back_to_a_constant() {
    let p = names(&["x"]);
    for m in modelers() {
        // All equal.
        let pts: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&x| Point::new(vec![x], vec![7.0, 7.0]))
            .collect();
        let fit = m.fit(&p, &pts, &FitOptions::default()).unwrap();
        assert_eq!(fit.model.as_constant(), Some(7.0), "{}", m.name());
        assert_eq!(fit.stats.rss, 0.0);
        // All zeros.
        let zeros: Vec<Point> = pts
            .iter()
            .map(|q| Point::new(q.coordinate.clone(), vec![0.0]))
            .collect();
        let fit = m.fit(&p, &zeros, &FitOptions::default()).unwrap();
        assert_eq!(fit.model.as_constant(), Some(0.0), "{}", m.name());
        assert_eq!(fit.stats.smape, 0.0);
        // A single point.
        let fit = m.fit(&p, &pts[..1], &FitOptions::default()).unwrap();
        assert_eq!(fit.model.as_constant(), Some(7.0));
        // Two different points: too few for a term in ours (a warning), Extra-P's LOO
        // cannot fit on one point either.
        let two = vec![
            Point::new(vec![1.0], vec![1.0]),
            Point::new(vec![2.0], vec![3.0]),
        ];
        let fit = m.fit(&p, &two, &FitOptions::default()).unwrap();
        assert!(fit.model.as_constant().is_some(), "{}", m.name());
    }
    let two = vec![
        Point::new(vec![1.0], vec![1.0]),
        Point::new(vec![2.0], vec![3.0]),
    ];
    let fit = modeler("perfcompose")
        .unwrap()
        .fit(&p, &two, &FitOptions::default())
        .unwrap();
    assert!(fit.warnings[0].contains("only 2 distinct points"));
}

#[test]
fn zeros_among_values_do_not_break_fitting() {
    let p = names(&["x"]);
    let pts: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
        .iter()
        .map(|&x: &f64| Point::new(vec![x], vec![if x == 1.0 { 0.0 } else { x * x }]))
        .collect();
    for m in modelers() {
        let fit = m.fit(&p, &pts, &FitOptions::default()).unwrap();
        assert!(
            fit.stats.rss.is_finite() && fit.stats.smape.is_finite(),
            "{}",
            m.name()
        );
    }
}

#[test]
fn bad_values_are_errors_for_every_modeler() {
    let p = names(&["x"]);
    for m in modelers() {
        for bad in [f64::NAN, f64::INFINITY, -1.0] {
            let pts = vec![
                Point::new(vec![1.0], vec![1.0]),
                Point::new(vec![2.0], vec![bad]),
            ];
            let e = m.fit(&p, &pts, &FitOptions::default()).unwrap_err();
            assert!(e.to_string().contains("(2)"), "{e}");
        }
        assert_eq!(
            m.fit(&p, &[], &FitOptions::default()).unwrap_err(),
            FitError::NoPoints
        );
    }
}

#[test]
fn statistics_are_consistent() {
    let p = names(&["x"]);
    let pts: Vec<Point> = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        .iter()
        .enumerate()
        .map(|(i, &x): (usize, &f64)| {
            let f = 10.0 + 2.0 * x;
            let e = if i % 2 == 0 { 1.01 } else { 0.99 };
            Point::new(vec![x], vec![f * e, f / e, f])
        })
        .collect();
    for m in modelers() {
        let fit = m.fit(&p, &pts, &FitOptions::default()).unwrap();
        let s = &fit.stats;
        assert_eq!(s.points, 6);
        let rss: f64 = fit
            .points
            .iter()
            .map(|q| (q.value - q.predicted).powi(2))
            .sum();
        assert!((rss - s.rss).abs() <= 1e-9 * rss.max(1.0));
        assert!(s.ar2 <= s.r2 && s.r2 <= 1.0);
        assert_eq!(s.coefficients[0].term, "1");
        assert!(s
            .coefficients
            .iter()
            .all(|c| c.std_error.is_some_and(|e| e > 0.0)));
        assert!(fit
            .points
            .iter()
            .all(|q| q.cv.is_some_and(|cv| cv > 0.0 && cv < 0.02)));
    }
}

#[test]
fn measures_select_the_right_value() {
    let v = [3.0, 1.0, 2.0, 10.0];
    assert_eq!(Measure::Mean.of(&v), 4.0);
    assert_eq!(Measure::Median.of(&v), 2.5);
    assert_eq!(Measure::Minimum.of(&v), 1.0);
    assert_eq!(Measure::Maximum.of(&v), 10.0);
    assert_eq!("median".parse::<Measure>().unwrap(), Measure::Median);
    assert!("avg".parse::<Measure>().is_err());
}

#[test]
fn registry_lists_both_modelers_default_first() {
    let names: Vec<&str> = modelers().iter().map(|m| m.name()).collect();
    assert_eq!(names, vec![DEFAULT_MODELER, "extrap"]);
    assert!(modeler("nope").is_none());
}
