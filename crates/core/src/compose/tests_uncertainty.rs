//! Intervals, extrapolation warnings, confidence of comparisons and advice.

use std::path::Path;

use super::grid::{parse_at, Grid};
use super::interval::IntervalOptions;
use super::laws::attach_confidence;
use super::laws::compare_terms;
use super::predict::{predict_with, PredictOptions};
use super::ComposeOptions;
use crate::components::{Components, LoadOptions, DEFAULT_FITTER};
use crate::term::parse_term;

fn grid(at: &str) -> Grid {
    Grid::new(vec![parse_at(at).unwrap()]).unwrap()
}

/// Seeded measurements of two blocks (±3%, five repetitions) over x = 1000..16000, in a
/// folder of their own.
fn fitted_components() -> Components {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let mut text =
        String::from("PARAMETER x\nPOINTS ( 1000 ) ( 2000 ) ( 4000 ) ( 8000 ) ( 16000 )\n");
    for (region, f) in [
        (
            "sort",
            &(|x: f64| 12.0 * x * x.log2() + 500.0) as &dyn Fn(f64) -> f64,
        ),
        ("scan", &|x: f64| 3.1 * x + 200.0),
    ] {
        text.push_str(&format!("REGION {region}\nMETRIC time\nDATA"));
        for x in [1000.0, 2000.0, 4000.0, 8000.0, 16000.0] {
            if x > 1000.0 {
                text.push_str("\nDATA");
            }
            for _ in 0..5 {
                let noise: f64 = rng.gen_range(-0.03..0.03);
                text.push_str(&format!(" {:.3}", f(x) * (1.0 + noise)));
            }
        }
        text.push('\n');
    }
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "perfcompose-intervals-{}-{call}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("blocks.txt"), text).unwrap();
    let toml = "[components.sort]\nmeasurements = \"blocks.txt\"\ncallpath = \"sort\"\n\n\
                [components.scan]\nmeasurements = \"blocks.txt\"\ncallpath = \"scan\"\n\n\
                [components.sync]\nmodel = \"5000 + 2 * x\"\nrelative_error = 0.1\n\n\
                [components.exact]\nmodel = \"7 * x\"\n";
    Components::parse(
        "blocks.toml",
        toml,
        &dir,
        LoadOptions {
            fitter: Some(&DEFAULT_FITTER),
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

fn predict(
    term: &str,
    components: &Components,
    at: &str,
    advise: bool,
) -> super::predict::Prediction {
    let t = parse_term("<term>", term).unwrap();
    let how = PredictOptions {
        advise,
        ..PredictOptions::default()
    };
    predict_with(
        &t,
        components,
        ComposeOptions::default(),
        &grid(at),
        None,
        how,
    )
    .unwrap()
}

#[test]
fn fitted_components_carry_their_range_and_bootstrap() {
    let c = fitted_components();
    let sort = c.get("sort").unwrap();
    assert_eq!(sort.measured["x"], [1000.0, 16000.0]);
    let u = sort.uncertainty.as_ref().unwrap();
    assert_eq!(u.source, crate::uncertainty::Source::Bootstrap);
    assert!(u.replicates() >= 90, "{}", u.replicates());
    assert!(c.get("exact").unwrap().uncertainty.is_none());
    let _ = Path::new(".");
}

#[test]
fn intervals_surround_the_prediction_and_are_reproducible() {
    let c = fitted_components();
    let term = "pipe(tpool(4, sort), seq(scan, sync))";
    let p = predict(term, &c, "x=1000,4000,100000", false);
    let again = predict(term, &c, "x=1000,4000,100000", false);
    for (v, w) in p.values.iter().zip(&again.values) {
        let i = v.interval.expect("the components are uncertain");
        assert_eq!(i.level, 0.95);
        assert!(
            i.low < v.value && v.value < i.high,
            "{} not in {i:?}",
            v.value
        );
        // A few percent wide, not a point and not a wild range.
        let width = (i.high - i.low) / v.value;
        assert!(width > 0.001 && width < 0.5, "{width}");
        assert_eq!(v.interval, w.interval);
    }
    let names: Vec<&str> = p.uncertain.iter().map(|u| u.component.as_str()).collect();
    assert_eq!(names, ["scan", "sort", "sync"]);
    // Components without uncertainty give a point as before.
    let exact = predict("seq(exact, exact)", &c, "x=10", false);
    assert!(exact.values[0].interval.is_none() && exact.uncertain.is_empty());
    // A wider level gives a wider interval.
    let t = parse_term("<term>", term).unwrap();
    let how = PredictOptions {
        intervals: IntervalOptions {
            level: 0.5,
            ..IntervalOptions::default()
        },
        advise: false,
    };
    let narrow = predict_with(
        &t,
        &c,
        ComposeOptions::default(),
        &grid("x=4000"),
        None,
        how,
    )
    .unwrap();
    let (n, w) = (
        narrow.values[0].interval.unwrap(),
        p.values[1].interval.unwrap(),
    );
    assert!(n.high - n.low < w.high - w.low);
}

#[test]
fn extrapolation_follows_the_patterns_substitutions() {
    let c = fitted_components();
    let p = predict("pipe(sort, scan)", &c, "x=1000,16000,64000", false);
    assert!(p.values[0].extrapolation.is_empty() && p.values[1].extrapolation.is_empty());
    let e = &p.values[2].extrapolation;
    assert_eq!(e.len(), 2);
    assert_eq!(
        (e[0].component.as_str(), e[0].parameter.as_str(), e[0].value),
        ("scan", "x", 64000.0)
    );
    assert_eq!(e[0].measured, [1000.0, 16000.0]);
    // A divide-and-conquer leaf works on x/P, its divide on x/2^j: at x = 64000 on 4
    // processes the leaf's sort sees 16000 (measured), the divide's scan 64000 and 32000.
    let p = predict(
        "dc(scan, exact, sort, procs=4, exchange=exact)",
        &c,
        "x=64000",
        false,
    );
    let e = &p.values[0].extrapolation;
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!((e[0].component.as_str(), e[0].value), ("scan", 64000.0));
    // A MapReduce's map block sees one element.
    let p = predict(
        "mapreduce(sort, exact, nodes=1, threads=2, keys=1, per_key=x)",
        &c,
        "x=4000",
        false,
    );
    let e = &p.values[0].extrapolation;
    assert_eq!((e[0].component.as_str(), e[0].value), ("sort", 1.0));
}

#[test]
fn check_says_how_sure_it_is() {
    let c = fitted_components();
    let compare = |a: &str, b: &str| {
        let (ta, tb) = (parse_term("<a>", a).unwrap(), parse_term("<b>", b).unwrap());
        let g = grid("x=1000,4000,16000");
        let mut cmp = compare_terms(&ta, &tb, &c, ComposeOptions::default(), &g).unwrap();
        attach_confidence(
            &mut cmp,
            &ta,
            &tb,
            &c,
            ComposeOptions::default(),
            IntervalOptions::default(),
        )
        .unwrap();
        cmp
    };
    // Clearly different: the first wins everywhere.
    let clear = compare("tpool(4, sort)", "tpool(2, sort)");
    assert!(clear
        .points
        .iter()
        .all(|p| p.probability_first_smaller == Some(1.0)));
    let conf = clear.confidence.unwrap();
    assert_eq!(conf.ranges.len(), 1);
    assert_eq!(
        (
            conf.ranges[0].winner.as_str(),
            conf.ranges[0].from_x,
            conf.ranges[0].to_x
        ),
        ("first", 1000.0, 16000.0)
    );
    // Draws are shared: a component on both sides is the same model, so a design that
    // only divides it by more threads wins in every draw, however small the gain.
    let shared = compare(
        "tpool(1001, seq(sync, sync))",
        "tpool(1000, seq(sync, sync))",
    );
    assert!(shared
        .points
        .iter()
        .all(|p| p.probability_first_smaller == Some(1.0)));
    // Two different blocks cross near x = 4364: scan wins below, sync above, and at
    // x = 4000 they differ by 3% against sync's ±10%: too close to call.
    let cross = compare("sync", "scan");
    let winners: Vec<&str> = cross
        .confidence
        .as_ref()
        .unwrap()
        .ranges
        .iter()
        .map(|r| r.winner.as_str())
        .collect();
    assert_eq!(winners, ["second", "too close to call", "first"]);
    let p = cross.points[1].probability_first_smaller.unwrap();
    assert!(p > 0.05 && p < 0.95, "{p}");
    // Without uncertain components nothing is added.
    let plain = Components::from_models("t", &[("a", "x"), ("b", "2 * x")]).unwrap();
    let (ta, tb) = (
        parse_term("<a>", "a").unwrap(),
        parse_term("<b>", "b").unwrap(),
    );
    let mut cmp = compare_terms(&ta, &tb, &plain, ComposeOptions::default(), &grid("x=1")).unwrap();
    attach_confidence(
        &mut cmp,
        &ta,
        &tb,
        &plain,
        ComposeOptions::default(),
        IntervalOptions::default(),
    )
    .unwrap();
    assert!(cmp.confidence.is_none() && cmp.points[0].probability_first_smaller.is_none());
}

#[test]
fn advice_names_the_widest_source_and_where_to_measure() {
    let c = fitted_components();
    let p = predict(
        "pipe(tpool(4, sort), seq(scan, sync))",
        &c,
        "x=1000,64000,1000000",
        true,
    );
    let total: f64 = p.advice.iter().map(|a| a.share).sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");
    assert!(p.advice.windows(2).all(|w| w[0].share >= w[1].share));
    for a in &p.advice {
        match a.component.as_str() {
            // Fitted: a point to measure, with the share of variance it removes.
            "sort" | "scan" => {
                assert!(!a.measure_at.is_empty(), "{a:?}");
                assert_eq!(a.measure_at.len(), a.reduction.len());
                assert!(a.reduction.iter().all(|r| *r > 0.0 && *r <= 1.0));
            }
            // Stated: a share, but no measurements to plan.
            _ => assert!(a.measure_at.is_empty()),
        }
    }
    // Without --advise: no advice.
    assert!(predict("sort", &c, "x=1000", false).advice.is_empty());
}

#[test]
fn fox_blocks_and_messages_are_checked_at_their_own_sizes() {
    let toml = "[components.mult]\nmodel = \"2 * x^3\"\nmeasured = { x = [1, 100] }\n\n\
                [components.msg]\nmodel = \"1000 + 0.1 * x\"\nmeasured = { x = [8, 80000] }\n";
    let c = Components::parse("m.toml", toml, Path::new("."), LoadOptions::default()).unwrap();
    let p = predict(
        "matmul(mult, procs=4, message=msg, bcast=binomial)",
        &c,
        "x=100,400",
        false,
    );
    // x = 100 on a 2×2 mesh: blocks of order 50, messages of 8·50² = 20,000 bytes.
    assert!(
        p.values[0].extrapolation.is_empty(),
        "{:?}",
        p.values[0].extrapolation
    );
    let e = &p.values[1].extrapolation;
    let got: Vec<(&str, f64)> = e.iter().map(|e| (e.component.as_str(), e.value)).collect();
    assert_eq!(got, [("msg", 8.0 * 200.0 * 200.0), ("mult", 200.0)]);
    // Stated models without an uncertainty: no intervals.
    assert!(p.values[1].interval.is_none());
}

/// A block of 152 ns per element measured on a shared machine, some repetitions stalled
/// by about 200 µs (the golden case `predict-interval-nonnegative`), beside a stated
/// model drawn far from its center: draws of their models reach below zero, a
/// program's total does not — in `predict`, `check` and `optimize` alike.
#[test]
fn intervals_of_a_total_do_not_reach_below_zero() {
    use crate::model::Pairs;
    use crate::uncertainty::{Draws, DEFAULT_SEED};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/cli/predict-interval-nonnegative");
    // On the mean, which the stalls pull about (the minimum fits 149.5·x).
    let toml = "[components.a]\nmeasurements = \"noisy.txt\"\nmeasure = \"mean\"\n\n\
                [components.wild]\nmodel = \"1000\"\nrelative_error = 0.8\n\n\
                [components.b]\nmodel = \"150 * x\"\nrelative_error = 0.1\n";
    let c = Components::parse(
        "design.toml",
        toml,
        &dir,
        LoadOptions {
            fitter: Some(&DEFAULT_FITTER),
            ..LoadOptions::default()
        },
    )
    .unwrap();
    // The premise: the components' own draws go below zero at x = 64.
    for name in ["a", "wild"] {
        let u = c.get(name).unwrap().uncertainty.as_ref().unwrap();
        let raw = Draws::sample(&[u], 1000, DEFAULT_SEED)
            .values(&u.template, &Pairs(&[("x", 64.0)]))
            .unwrap();
        let below = raw.iter().filter(|v| **v < 0.0).count();
        assert!(below > 25, "{name}: {below} of 1000 draws below zero");
    }
    for term in ["a", "wild", "seq(a, wild)", "pipe(a, b)"] {
        let p = predict(term, &c, "x=64,1000", false);
        for v in &p.values {
            let i = v.interval.unwrap();
            assert!(
                i.low >= 0.0 && i.low <= v.value && v.value <= i.high,
                "{term}: {v:?}"
            );
        }
        // Truncated, not shifted: the mass below zero sits at 0.
        if ["a", "wild"].contains(&term) {
            assert_eq!(p.values[0].interval.unwrap().low, 0.0, "{term}");
        }
    }
    let (ta, tb) = (
        parse_term("<a>", "a").unwrap(),
        parse_term("<b>", "b").unwrap(),
    );
    let g = grid("x=64,1000");
    let mut cmp = compare_terms(&ta, &tb, &c, ComposeOptions::default(), &g).unwrap();
    attach_confidence(
        &mut cmp,
        &ta,
        &tb,
        &c,
        ComposeOptions::default(),
        IntervalOptions::default(),
    )
    .unwrap();
    for p in &cmp.points {
        for i in [p.first_interval, p.second_interval] {
            assert!(i.unwrap().low >= 0.0, "{p:?}");
        }
    }
    let best = crate::optimize::optimize(&crate::optimize::Request {
        design: "pipe(tpool(?, a), tpool(?, wild))",
        components: &c,
        cores: 4,
        point: vec![("x".to_string(), 64.0)],
        rewrites: true,
    })
    .unwrap();
    for d in &best.designs {
        assert!(d.interval.unwrap().low >= 0.0, "{d:?}");
    }
}
