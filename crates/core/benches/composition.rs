//! Composition on a designer's interactive path: a term of 1,000 nested patterns,
//! composed and evaluated at 1,000 points.
//!
//! ```sh
//! cargo bench -p perfcompose-core --bench composition
//! ```
//!
//! The term nests seq, pipe, tpool, mapreduce and dc in a fixed cycle (see
//! [`nested_term`]); every level wraps the one below, so the term is about 860 levels
//! deep. `predict_with_intervals` adds 95% intervals from 1,000 draws with every
//! component uncertain. Results and the machine are in `docs/composition.md`.

use divan::{black_box, Bencher};
use perfcompose_core::components::seed_table1;
use perfcompose_core::compose::grid::{parse_at, Grid};
use perfcompose_core::compose::predict::predict;
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::term::{parse_term, Term};

/// Number of patterns in the benchmark term.
const PATTERNS: usize = 1000;
/// Number of evaluation points.
const POINTS: usize = 1000;

fn main() {
    divan::main();
}

/// A term with exactly `patterns` patterns, nested one inside the next.
fn nested_term(patterns: usize) -> String {
    let mut t = String::from("qsort");
    let mut count = 0;
    let mut i = 0;
    while count < patterns {
        let (next, added) = match i % 6 {
            0 => (format!("seq(inc, {t})"), 1),
            1 => (format!("pipe(nop, {t})"), 1),
            2 => (format!("tpool(2, {t})"), 1),
            3 => (format!("pipe({t}, seq(qsort, nop))"), 2),
            4 => (
                format!("mapreduce(map_grppi, {t}, nodes=1, threads=2, keys=1, per_key=x)"),
                1,
            ),
            _ => (
                format!("seq({t}, dc(inc, inc, qsort, procs=4, exchange=transfer))"),
                2,
            ),
        };
        if count + added > patterns {
            t = format!("tpool(3, {t})");
            count += 1;
        } else {
            t = next;
            count += added;
        }
        i += 1;
    }
    t
}

/// x = 2 .. 2^20, log-spaced.
fn points() -> Vec<Vec<(String, f64)>> {
    (0..POINTS)
        .map(|i| {
            vec![(
                "x".to_string(),
                2f64.powf(1.0 + 19.0 * i as f64 / (POINTS - 1) as f64),
            )]
        })
        .collect()
}

fn setup() -> Term {
    let t = parse_term("<bench>", &nested_term(PATTERNS)).expect("the benchmark term parses");
    assert_eq!(t.root.pattern_count(), PATTERNS);
    t
}

#[divan::bench(sample_count = 50)]
fn parse(bencher: Bencher) {
    let text = nested_term(PATTERNS);
    bencher.bench(|| parse_term("<bench>", black_box(&text)).unwrap());
}

#[divan::bench(sample_count = 50)]
fn compose_only(bencher: Bencher) {
    let t = setup();
    let c = seed_table1();
    bencher.bench(|| compose(black_box(&t), &c, ComposeOptions::default()).unwrap());
}

#[divan::bench(sample_count = 50)]
fn evaluate_1000_points(bencher: Bencher) {
    let t = setup();
    let c = seed_table1();
    let model = compose(&t, &c, ComposeOptions::default()).unwrap().model;
    let pts = points();
    bencher.bench(|| {
        pts.iter()
            .map(|p| model.eval(black_box(p)).unwrap())
            .sum::<f64>()
    });
}

/// The headline figure: compose the term and evaluate it at 1,000 points.
#[divan::bench(sample_count = 50)]
fn compose_and_evaluate(bencher: Bencher) {
    let t = setup();
    let c = seed_table1();
    let pts = points();
    bencher.bench(|| {
        let model = compose(black_box(&t), &c, ComposeOptions::default())
            .unwrap()
            .model;
        pts.iter().map(|p| model.eval(p).unwrap()).sum::<f64>()
    });
}

/// Everything `perfcompose predict --at x=...` does: compose, evaluate, and analyse the
/// 32 outermost pipelines (bottlenecks, crossovers over x >= 1, suggestions).
#[divan::bench(sample_count = 10)]
fn predict_with_analysis(bencher: Bencher) {
    let t = setup();
    let c = seed_table1();
    let values: Vec<String> = points().iter().map(|p| p[0].1.to_string()).collect();
    let grid = Grid::new(vec![parse_at(&format!("x={}", values.join(","))).unwrap()]).unwrap();
    bencher.bench(|| predict(black_box(&t), &c, ComposeOptions::default(), &grid).unwrap());
}

/// Table 1 with every component known to ±5% (one standard error), as a components
/// file states it with `relative_error = 0.05`.
fn uncertain_table1() -> perfcompose_core::components::Components {
    let c = seed_table1();
    c.iter()
        .map(|k| perfcompose_core::components::Component {
            uncertainty: Some(perfcompose_core::uncertainty::Uncertainty::relative(
                &k.name, &k.model, 0.05,
            )),
            ..k.clone()
        })
        .collect::<Vec<_>>()
        .into_iter()
        .fold(c, perfcompose_core::components::Components::with)
}

/// The target of intervals: the same term and points, each value with its 95% interval
/// from 1,000 draws of every component's uncertainty (everything `perfcompose predict`
/// does, analyses included).
#[divan::bench(sample_count = 10)]
fn predict_with_intervals(bencher: Bencher) {
    let t = setup();
    let c = uncertain_table1();
    let values: Vec<String> = points().iter().map(|p| p[0].1.to_string()).collect();
    let grid = Grid::new(vec![parse_at(&format!("x={}", values.join(","))).unwrap()]).unwrap();
    bencher.bench(|| {
        let p = perfcompose_core::compose::predict::predict_with(
            black_box(&t),
            &c,
            ComposeOptions::default(),
            &grid,
            None,
            Default::default(),
        )
        .unwrap();
        assert!(p.values.iter().all(|v| v.interval.is_some()));
        p
    });
}
