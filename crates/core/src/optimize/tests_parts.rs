//! The allocation by parts against brute force, and the nested designs of issue 61.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::allocate::{enumerate, threads};
use super::parts::Solver;
use super::*;

/// Two times equal up to rounding (the solver combines the parts' times, the model
/// pushes the task pools' factors down to the components).
const ROUNDING: f64 = 1e-12;

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= ROUNDING * a.abs().max(b.abs())
}

fn blocks() -> Components {
    Components::from_models(
        "<test>",
        &[
            ("a", "1000 * x"),
            ("b", "3000 * x"),
            ("c", "5000 + 700 * x"),
            ("d", "20 * x * log2(x)"),
            ("e", "90000"),
        ],
    )
    .unwrap()
}

/// A random design over `a`..`e` with `seq`, `pipe`, task pools with `?` or a fixed
/// count, and now and then a MapReduce with `threads=?` (a part enumerated whole).
fn random_design(rng: &mut ChaCha8Rng, depth: u32) -> String {
    let leaf = |rng: &mut ChaCha8Rng| ["a", "b", "c", "d", "e"][rng.gen_range(0..5)].to_string();
    if depth == 0 || rng.gen_bool(0.25) {
        return leaf(rng);
    }
    let parts = |rng: &mut ChaCha8Rng| {
        (0..rng.gen_range(2..=3))
            .map(|_| random_design(rng, depth - 1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match rng.gen_range(0..10) {
        0 | 1 => format!("seq({})", parts(rng)),
        2 | 3 => format!("pipe({})", parts(rng)),
        4..=7 => format!("tpool(?, {})", random_design(rng, depth - 1)),
        8 => format!(
            "tpool({}, {})",
            rng.gen_range(1..=3),
            random_design(rng, depth - 1)
        ),
        _ => format!(
            "mapreduce({}, {}, nodes=1, threads=?, keys=4, per_key=x)",
            random_design(rng, depth - 1),
            leaf(rng)
        ),
    }
}

/// On 400 random designs (fixed seed) with up to 5 `?` and budgets of 1 to 12 cores:
/// for every budget `b` up to the cores, the best time by parts within `b` threads is
/// the best of every allocation within `b` (so it never rises with `b`), its counts give
/// that time on the threads it states, and the design's best uses as few threads as
/// brute force.
#[test]
fn by_parts_is_the_best_allocation_at_every_budget() {
    let comps = blocks();
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    let point = vec![("x".to_string(), 1000.0)];
    let mut checked = 0;
    let mut nested = 0;
    while checked < 400 {
        let text = random_design(&mut rng, 4);
        let (term, holes) = parse_design("<t>", &text).unwrap();
        let cores = rng.gen_range(1..=12u64);
        if holes.is_empty() || holes.len() > 5 {
            continue;
        }
        let Some(least) = threads(&term, cores, &holes, &vec![1; holes.len()]) else {
            continue;
        };
        if least > cores {
            continue;
        }
        let opts = ComposeOptions { cores: Some(cores) };
        let model = compose(&term, &comps, opts).unwrap().model;
        let eval = Evaluator::new(&model, &point, &holes, &term).unwrap();
        // Brute force: the best time on exactly `t` threads, then within `b`.
        let mut within = vec![f64::INFINITY; cores as usize + 1];
        enumerate(
            holes.len(),
            cores,
            &|c| threads(&term, cores, &holes, c),
            &|c| eval.value(c),
            None,
            &mut |_, t, v| within[t as usize] = within[t as usize].min(v),
        );
        for b in 1..within.len() {
            within[b] = within[b].min(within[b - 1]);
        }
        let solved = Solver::new(&term, &holes, &comps, &point, cores, &mut |_| {})
            .solve()
            .unwrap();
        assert!(solved.searched.is_empty(), "{text}");
        let points = &solved.frontier.points;
        for w in points.windows(2) {
            assert!(
                w[0].threads < w[1].threads && w[1].value < w[0].value,
                "{text}: {points:?}"
            );
        }
        for (i, p) in points.iter().enumerate() {
            let counts = solved.counts(i, holes.len());
            assert_eq!(
                threads(&term, cores, &holes, &counts),
                Some(p.threads),
                "{text} {counts:?}"
            );
            assert!(
                close(eval.value(&counts), p.value),
                "{text} {counts:?}: {} vs {}",
                eval.value(&counts),
                p.value
            );
        }
        for b in least..=cores {
            let by_parts = points
                .iter()
                .take_while(|p| p.threads <= b)
                .last()
                .map_or(f64::INFINITY, |p| p.value);
            assert!(
                close(by_parts, within[b as usize]),
                "{text}, {cores} cores, within {b}: by parts {by_parts}, brute force {}",
                within[b as usize]
            );
        }
        // The design's answer: the same time on as few threads as brute force.
        let req = Request {
            design: &text,
            components: &comps,
            cores,
            point: point.clone(),
            rewrites: false,
        };
        let fast = optimize_term(&req, &term, &holes, None).unwrap();
        let brute = optimize_term(&req, &term, &holes, Some(Method::Exhaustive)).unwrap();
        assert!(
            close(fast.value, brute.value) && fast.threads == brute.threads,
            "{text}, {cores} cores: {} ({} threads, {}) vs {} ({} threads, {})",
            fast.term,
            fast.threads,
            fast.value,
            brute.term,
            brute.threads,
            brute.value
        );
        if holes.len() >= 2 && text.matches("tpool(?").count() >= 2 {
            nested += 1;
        }
        checked += 1;
    }
    assert!(nested > 100, "{nested}");
}

/// Issue 61, item 2: the outer count times the inner allocation, over the divisors of
/// the budget; a local search stopped at 187,500.
#[test]
fn a_task_pool_of_a_pipeline_of_task_pools_is_solved_exactly() {
    let comps = blocks();
    let design = "tpool(?, pipe(tpool(?, a), tpool(?, b), tpool(?, a), tpool(?, b)))";
    let req = Request {
        design,
        components: &comps,
        cores: 64,
        point: vec![("x".to_string(), 1000.0)],
        rewrites: false,
    };
    let out = optimize(&req).unwrap();
    let best = &out.designs[0];
    assert_eq!(
        best.term,
        "tpool(8, pipe(tpool(1, a), tpool(3, b), tpool(1, a), tpool(3, b)))"
    );
    assert_eq!(best.value, 125_000.0);
    assert_eq!(best.threads, 64);
    assert_eq!(best.method, Method::ByParts);
    assert!(out.exact && best.searched_parts.is_empty());
}

/// Issue 61, item 3: 65 nested task pools under 64 cores (the exhaustive enumeration
/// did not end): every thread divides the one block, and the answer uses exactly the
/// budget with one worker in all but the outermost pools.
#[test]
fn deeply_nested_task_pools_are_solved() {
    let comps = blocks();
    for (levels, cores) in [(28, 32u64), (65, 64), (400, 4096)] {
        let design = format!("{}a{}", "tpool(?, ".repeat(levels), ")".repeat(levels));
        let req = Request {
            design: &design,
            components: &comps,
            cores,
            point: vec![("x".to_string(), 1000.0)],
            rewrites: false,
        };
        let out = optimize(&req).unwrap();
        let best = &out.designs[0];
        assert_eq!(best.threads, cores);
        assert!(close(best.value, 1e6 / cores as f64), "{}", best.value);
        let expected = format!(
            "tpool({cores}, {}a{}",
            "tpool(1, ".repeat(levels - 1),
            ")".repeat(levels)
        );
        assert_eq!(best.term, expected);
        assert_eq!(best.method, Method::ByParts);
    }
}

/// A part too big to enumerate (a MapReduce whose map holds four task pools with `?`
/// under 64 cores: millions of allocations) is searched locally within the limit, and
/// the outcome names it.
#[test]
fn a_part_too_big_to_enumerate_is_searched_and_named() {
    let comps = blocks();
    let part = "mapreduce(seq(tpool(?, a), tpool(?, b), tpool(?, c), tpool(?, d)), e, nodes=1, threads=?, keys=4, per_key=x)";
    let design = format!("pipe(tpool(?, a), {part})");
    let req = Request {
        design: &design,
        components: &comps,
        cores: 64,
        point: vec![("x".to_string(), 1000.0)],
        rewrites: false,
    };
    let mut calls = 0;
    let out = optimize_with_progress(&req, &mut |_| calls += 1).unwrap();
    let best = &out.designs[0];
    assert_eq!(best.method, Method::LocalSearch);
    assert_eq!(best.searched_parts, [part]);
    assert!(!out.exact);
    assert!(best.threads <= 64);
    // Progress is heard while the part's allocations are scored.
    assert!(calls > 2, "{calls}");
    let json = serde_json::to_string(&out).unwrap();
    assert!(json.contains("\"searched_parts\""), "{json}");
}
