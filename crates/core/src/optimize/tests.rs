use super::*;
use crate::components::seed_table1;

fn request<'a>(design: &'a str, comps: &'a Components, cores: u64, x: f64) -> Request<'a> {
    Request {
        design,
        components: comps,
        cores,
        point: vec![("x".to_string(), x)],
        rewrites: false,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Every pipeline of 1 to 4 task pools over three blocks (and with a fixed stage), under
/// every budget up to 16: the pipeline allocation is the best allocation by brute force,
/// with as few threads.
#[test]
fn the_pipeline_allocation_agrees_with_brute_force() {
    let comps = seed_table1();
    let blocks = ["qsort", "inc", "nop"];
    let mut designs = Vec::new();
    for stages in 1..=4u32 {
        for code in 0..3usize.pow(stages) {
            let mut c = code;
            let parts: Vec<String> = (0..stages)
                .map(|_| {
                    let b = blocks[c % 3];
                    c /= 3;
                    format!("tpool(?, {b})")
                })
                .collect();
            designs.push(if stages == 1 {
                parts[0].clone()
            } else {
                format!("pipe({})", parts.join(", "))
            });
        }
    }
    designs.push("pipe(tpool(?, qsort), inc, tpool(?, seq(inc, nop)))".into());
    designs.push("pipe(tpool(?, inc), tpool(2, qsort))".into());
    let mut checked = 0;
    for design in &designs {
        let (term, holes) = parse_design("<term>", design).unwrap();
        for x in [64.0, 4096.0, 1048576.0] {
            for cores in 1..=16 {
                let req = request(design, &comps, cores, x);
                let exact = optimize_term(&req, &term, &holes, Some(Method::Pipeline));
                let brute = optimize_term(&req, &term, &holes, Some(Method::Exhaustive));
                match (exact, brute) {
                    (Ok(e), Ok(b)) => {
                        assert!(
                            close(e.value, b.value) && e.threads == b.threads,
                            "{design} at x = {x}, {cores} cores: pipeline {} ({} threads, {}) vs brute force {} ({} threads, {})",
                            e.term, e.threads, e.value, b.term, b.threads, b.value
                        );
                        assert!(e.threads <= cores);
                        checked += 1;
                    }
                    (Err(e), Err(b)) => {
                        assert_eq!(e.message, b.message);
                        assert!(e.message.contains("more than the"), "{}", e.message);
                    }
                    (e, b) => panic!("{design}, {cores} cores: {e:?} vs {b:?}"),
                }
            }
        }
    }
    assert!(checked > 4000, "{checked}");
}

#[test]
fn a_pipeline_is_balanced_by_its_stages_times() {
    let comps = seed_table1();
    let out = optimize(&request(
        "pipe(tpool(?, qsort), tpool(?, inc))",
        &comps,
        16,
        4096.0,
    ))
    .unwrap();
    let best = &out.designs[0];
    assert_eq!(best.method, Method::Pipeline);
    assert!(out.exact);
    // qsort is ~20x inc at 4096: nearly all threads go to it.
    let (term, _) = parse_design("<t>", &best.term).unwrap();
    let NodeKind::Pipe(stages) = &term.root.kind else {
        panic!("{}", best.term)
    };
    let count = |n: &crate::term::Node| match &n.kind {
        NodeKind::Tpool { threads, .. } => threads.as_int().unwrap(),
        _ => panic!(),
    };
    assert!(
        count(&stages[0]) >= 14 && count(&stages[1]) >= 1,
        "{}",
        best.term
    );
    assert_eq!(best.threads, count(&stages[0]) + count(&stages[1]));
    assert!(best.threads <= 16);
    assert!(best.bottleneck.contains("qsort"), "{}", best.bottleneck);
}

/// The pattern-composition paper's Table 2 designs of qsort and inc, each evaluated as written: the rewrites of
/// any one of them find a design at least as fast as the fastest within the budget.
#[test]
fn rewrites_find_the_best_of_the_table_2_designs() {
    let comps = seed_table1();
    let table2 = [
        "seq(qsort, inc)",
        "seq(inc, qsort)",
        "pipe(qsort, inc)",
        "pipe(inc, qsort)",
        "tpool(2, seq(qsort, inc))",
        "tpool(2, seq(inc, qsort))",
        "tpool(4, seq(qsort, inc))",
        "pipe(tpool(2, qsort), inc)",
        "pipe(tpool(3, qsort), inc)",
    ];
    for cores in [2u64, 4] {
        for x in [16.0, 4096.0, 1048576.0] {
            let mut best_written = f64::INFINITY;
            for d in table2 {
                let term = parse_term("<t>", d).unwrap();
                let c = compose(&term, &comps, ComposeOptions { cores: Some(cores) }).unwrap();
                if c.threads.unwrap() <= cores {
                    best_written = best_written.min(c.model.eval_at(&[("x", x)]).unwrap());
                }
            }
            let mut req = request("pipe(qsort, inc)", &comps, cores, x);
            req.rewrites = true;
            let out = optimize(&req).unwrap();
            let best = &out.designs[0];
            assert!(
                best.value <= best_written * (1.0 + 1e-12),
                "{cores} cores, x = {x}: {} ({}) vs {best_written}",
                best.term,
                best.value
            );
            assert!(best.threads <= cores);
            // Law (iv): the task pool of the seq is among the candidates.
            assert!(out
                .designs
                .iter()
                .any(|d| d.design == "tpool(?, seq(qsort, inc))"));
        }
    }
}

#[test]
fn rewrites_cut_the_blocks_into_consecutive_groups() {
    let (t, _) = parse_design("<t>", "pipe(tpool(?, seq(a, b)), c)").unwrap();
    assert_eq!(blocks_of(&t).unwrap(), ["a", "b", "c"]);
    let r = rewrite_designs(&t);
    assert_eq!(
        r,
        [
            "tpool(?, seq(a, b, c))",
            "pipe(tpool(?, a), tpool(?, seq(b, c)))",
            "pipe(tpool(?, seq(a, b)), tpool(?, c))",
            "pipe(tpool(?, a), tpool(?, b), tpool(?, c))",
        ]
    );
    let (t, _) = parse_design(
        "<t>",
        "pipe(mapreduce(m, r, nodes=1, threads=?, keys=1, per_key=x), c)",
    )
    .unwrap();
    assert!(blocks_of(&t).is_none());
}

#[test]
fn nested_designs_are_solved_by_parts() {
    let comps = seed_table1();
    // A task pool of a pipeline of task pools: not the pipeline shape.
    let design = "tpool(?, pipe(tpool(?, qsort), inc))";
    let (term, holes) = parse_design("<t>", design).unwrap();
    let req = request(design, &comps, 8, 4096.0);
    let r = optimize_term(&req, &term, &holes, None).unwrap();
    assert_eq!(r.method, Method::ByParts);
    assert!(r.threads <= 8);
    let brute = optimize_term(&req, &term, &holes, Some(Method::Exhaustive)).unwrap();
    assert!(close(r.value, brute.value) && r.threads == brute.threads);
    let local = optimize_term(&req, &term, &holes, Some(Method::LocalSearch)).unwrap();
    assert!(local.value >= r.value * (1.0 - 1e-12));
    assert!(local.threads <= 8);
}

#[test]
fn mistakes_are_located_errors() {
    let comps = seed_table1();
    let e = optimize(&request(
        "pipe(tpool(?, qsort), tpool(?, inc), nop)",
        &comps,
        2,
        64.0,
    ))
    .unwrap_err();
    assert!(e.message.contains("at least 3 threads"), "{}", e.message);
    let e = optimize(&request("tpool(?, qsrt)", &comps, 4, 64.0)).unwrap_err();
    assert!(
        e.message.contains("unknown component `qsrt`"),
        "{}",
        e.message
    );
    let e = optimize(&request(
        "mapreduce(map, reduce, nodes=?, threads=2, keys=1, per_key=x)",
        &comps,
        4,
        64.0,
    ))
    .unwrap_err();
    assert!(
        e.message.contains("cannot stand for the nodes"),
        "{}",
        e.message
    );
    assert_eq!(&e.source[e.span.start..e.span.end], "?");
    let e = parse_term("<t>", "tpool(?, a)").unwrap_err();
    assert!(
        e.message.contains("leaves the thread count"),
        "{}",
        e.message
    );
    let e = optimize(&request("tpool(?, qsort)", &comps, MAX_CORES + 1, 64.0)).unwrap_err();
    assert!(e.message.contains("this search supports"), "{}", e.message);
    let mut req = request("tpool(?, qsort)", &comps, 4, 64.0);
    req.point.clear();
    let e = optimize(&req).unwrap_err();
    assert!(e.message.contains("needs a value for `x`"), "{}", e.message);
}

/// A matrix product of an order that does not split into the mesh's blocks is refused,
/// as `predict` and `check` refuse it, whatever the allocation around it.
#[test]
fn a_matmul_order_that_does_not_split_is_refused() {
    let comps =
        Components::from_models("<test>", &[("mult", "2 * x^3"), ("msg", "1000 + 0.1 * x")])
            .unwrap();
    let design = "tpool(?, matmul(mult, procs=4, message=msg, bcast=binomial))";
    let err = optimize(&request(design, &comps, 16, 127.0)).unwrap_err();
    assert!(
        err.message.contains("do not split into 2 × 2 blocks"),
        "{}",
        err.message
    );
    assert!(optimize(&request(design, &comps, 16, 128.0)).is_ok());
}
