use proptest::prelude::*;

use super::*;
use crate::diag::Diagnostic;

fn ok(src: &str) -> Term {
    parse_term("<term>", src).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn err(src: &str) -> Diagnostic {
    match parse_term("<term>", src) {
        Ok(t) => panic!("`{src}` parsed as {t}"),
        Err(d) => d,
    }
}

/// The source text under the caret.
fn under(d: &Diagnostic) -> &str {
    &d.source[d.span.start..d.span.end]
}

#[test]
fn components_and_patterns_parse_with_spans() {
    let t = ok("pipe(tpool(4, qsort), seq(inc, nop))");
    let NodeKind::Pipe(stages) = &t.root.kind else {
        panic!("{:?}", t.root)
    };
    assert_eq!(stages.len(), 2);
    assert_eq!(t.text(stages[0].span), "tpool(4, qsort)");
    assert_eq!(t.text(stages[1].span), "seq(inc, nop)");
    let NodeKind::Tpool { threads, body } = &stages[0].kind else {
        panic!()
    };
    assert_eq!(threads.as_int(), Some(4));
    assert_eq!(t.text(threads.span), "4");
    assert_eq!(t.text(body.span), "qsort");
    assert_eq!(t.root.span, Span::new(0, t.source.len()));
}

#[test]
fn whitespace_and_trailing_commas_are_accepted() {
    let t = ok("  pipe (\n  qsort ,\n  inc,\n)  ");
    assert_eq!(t.to_string(), "pipe(qsort, inc)");
}

#[test]
fn counts_may_be_parameters() {
    let t = ok("tpool(n, qsort)");
    let NodeKind::Tpool { threads, .. } = &t.root.kind else {
        panic!()
    };
    assert_eq!(threads.value, CountValue::Param("n".into()));
    assert_eq!(threads.to_expr().to_string(), "n");
}

#[test]
fn mapreduce_names_its_reduction_variant() {
    for r in Reduction::ALL {
        let src = format!(
            "mapreduce(map, reduce_per_key, reduction={}, nodes=2, threads=1, keys=768, per_key=x)",
            r.name()
        );
        let t = ok(&src);
        let NodeKind::MapReduce(mr) = &t.root.kind else {
            panic!()
        };
        assert_eq!(mr.reduction.as_ref().map(|a| a.value), Some(r));
        assert_eq!(
            t.to_string(),
            format!(
                "mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x, reduction={})",
                r.name()
            )
        );
    }
    let t = ok("mapreduce(a, b, nodes=1, threads=1, keys=1, per_key=1)");
    let NodeKind::MapReduce(mr) = &t.root.kind else {
        panic!()
    };
    assert!(mr.reduction.is_none());
    // An unknown variant is an error at the variant, naming the three.
    let src = "mapreduce(a, b, nodes=2, threads=1, keys=768, per_key=x, reduction=tree)";
    let d = parse_term("<term>", src).unwrap_err();
    assert!(
        d.message.contains("unknown reduction variant `tree`"),
        "{}",
        d.message
    );
    assert_eq!(&src[d.span.start..d.span.end], "tree");
    assert!(d.hint.unwrap().contains("pairwise, local and global"));
    let d = parse_term(
        "<term>",
        "mapreduce(a, b, nodes=2, threads=1, keys=768, per_key=x, reduction=3)",
    )
    .unwrap_err();
    assert!(
        d.message.contains("expected a reduction variant"),
        "{}",
        d.message
    );
}

#[test]
fn mapreduce_takes_keywords_in_any_order() {
    let t = ok(
        "mapreduce(map_hadoop, reduce_hadoop, per_key=x, keys=768, threads=n, nodes=m, shuffle=sh)",
    );
    assert_eq!(
        t.to_string(),
        "mapreduce(map_hadoop, reduce_hadoop, nodes=m, threads=n, keys=768, per_key=x, shuffle=sh)"
    );
    let NodeKind::MapReduce(mr) = &t.root.kind else {
        panic!()
    };
    assert_eq!(t.text(mr.keys.span), "768");
    assert_eq!(mr.shuffle.as_ref().unwrap().name, "sh");
    let t = ok("mapreduce(a, b, nodes=1, threads=4, keys=x, per_key=max(768, x / 2))");
    assert_eq!(
        t.to_string(),
        "mapreduce(a, b, nodes=1, threads=4, keys=x, per_key=max(0.5 * x, 768))"
    );
}

#[test]
fn dc_parses_with_optional_size() {
    let t = ok("dc(div, comb, dfs, procs=8, exchange=ex, size=N)");
    assert_eq!(
        t.to_string(),
        "dc(div, comb, dfs, procs=8, exchange=ex, size=N)"
    );
    let t = ok("dc(div, comb, dfs, exchange=ex, procs=P)");
    assert_eq!(t.to_string(), "dc(div, comb, dfs, procs=P, exchange=ex)");
    assert_eq!(t.root.pattern_count(), 1);
    let refs: Vec<String> = t
        .root
        .component_refs()
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(refs, ["div", "comb", "dfs", "ex"]);
}

#[test]
fn matmul_parses_its_broadcasts() {
    let t = ok("matmul(mult, bcast=binomial, procs=16, message=msg)");
    assert_eq!(
        t.to_string(),
        "matmul(mult, procs=16, message=msg, bcast=binomial)"
    );
    let refs: Vec<String> = t
        .root
        .component_refs()
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(refs, ["mult", "msg"]);
    let t = ok(
        "matmul(tpool(2, mult), procs=P, message=msg, bcast=pipeline, segments=k, bytes=4 * x^2)",
    );
    assert_eq!(
        t.to_string(),
        "matmul(tpool(2, mult), procs=P, message=msg, bcast=pipeline, segments=k, bytes=4 * x^2)"
    );
    assert_eq!(t.root.pattern_count(), 2);
    let NodeKind::Matmul(mm) = &t.root.kind else {
        panic!("a matmul")
    };
    assert_eq!(mm.bcast.value, Broadcast::Pipeline);
    assert_eq!(t.text(mm.bcast.span), "pipeline");
}

#[test]
fn matmul_mistakes_are_located() {
    let d = err("matmul(m, procs=8, message=e, bcast=flat)");
    assert!(d.message.contains("perfect square"), "{}", d.message);
    assert_eq!(d.hint.as_deref(), Some("use procs=4 or procs=9"));
    assert_eq!(under(&d), "8");
    let d = err("matmul(m, procs=4, message=e, bcast=ring)");
    assert_eq!(d.message, "unknown broadcast `ring`");
    assert_eq!(under(&d), "ring");
    let d = err("matmul(m, procs=4, message=e, bcast=pipeline)");
    assert_eq!(d.message, "a pipelined broadcast needs `segments=`");
    let d = err("matmul(m, procs=4, message=e, bcast=flat, segments=2)");
    assert_eq!(d.message, "`segments=` is used by bcast=pipeline only");
    assert_eq!(under(&d), "2");
    let d = err("matmul(m, procs=4, bcast=flat)");
    assert_eq!(d.message, "`matmul` needs `message=`");
    let d = err("matmul(m, n, procs=4, message=e, bcast=flat)");
    assert!(
        d.message.contains("takes 1 terms (multiply)"),
        "{}",
        d.message
    );
    let d = err("matmull(m)");
    assert_eq!(
        d.hint
            .as_deref()
            .map(|h| h.starts_with("did you mean `matmul`")),
        Some(true)
    );
}

#[test]
fn an_empty_term_is_an_error() {
    let d = err("   ");
    assert_eq!(d.message, "the term is empty");
}

#[test]
fn tpool_zero_is_rejected_at_the_count() {
    let d = err("pipe(tpool(0, qsort), inc)");
    assert_eq!(d.message, "a task pool needs at least one thread");
    assert_eq!(under(&d), "0");
    assert!(d.hint.unwrap().contains("n >= 1"));
}

#[test]
fn missing_arguments_are_named() {
    let d = err("tpool(4)");
    assert_eq!(d.message, "`tpool` needs a term after the thread count");
    assert_eq!(under(&d), ")");
    assert_eq!(d.hint.as_deref(), Some("write tpool(4, qsort)"));

    let d = err("tpool()");
    assert!(
        d.message.contains("thread count and a term"),
        "{}",
        d.message
    );

    let d = err("pipe()");
    assert_eq!(d.message, "`pipe` needs at least one stage");

    let d = err("mapreduce(a, b, nodes=1, threads=4, keys=768)");
    assert_eq!(d.message, "`mapreduce` needs `per_key=`");
    assert_eq!(under(&d), ")");
    assert!(d.hint.unwrap().contains("d(x)"));

    let d = err("dc(a, b, procs=2, exchange=e)");
    assert!(
        d.message
            .contains("needs 3 terms (divide, combine, leaf), got 2"),
        "{}",
        d.message
    );

    let d = err("mapreduce(a, b, nodes=1, threads=4, keys=, per_key=x)");
    assert_eq!(d.message, "`keys=` needs a value");
    assert_eq!(under(&d), ",");
}

#[test]
fn trailing_input_is_rejected() {
    let d = err("pipe(a, b))");
    assert_eq!(d.message, "unexpected `)` after the end of the term");
    assert_eq!(d.span.start, 10);
    assert_eq!(d.hint.as_deref(), Some("there is one `)` too many"));
    let d = err("pipe(a, b) seq(c)");
    assert!(d.message.contains("after the end of the term"));
    assert_eq!(under(&d), "seq");
}

#[test]
fn unclosed_parentheses_point_at_the_opening() {
    let d = err("pipe(tpool(4, qsort), inc");
    assert_eq!(d.message, "expected `,` or `)`, found the end of the term");
    assert!(d.hint.unwrap().contains("`pipe(` at column 5"));
}

#[test]
fn unknown_patterns_and_keywords_get_suggestions() {
    let d = err("pip(a, b)");
    assert_eq!(d.message, "unknown pattern `pip`");
    assert!(d.hint.unwrap().starts_with("did you mean `pipe`?"));

    let d = err("mapReduce(a, b, nodes=1, threads=1, keys=1, per_key=1)");
    assert!(d.hint.unwrap().contains("`mapreduce`"));

    let d = err("qsort(x)");
    assert!(d.hint.unwrap().contains("without parentheses"));

    let d = err("mapreduce(a, b, node=1, threads=1, keys=1, per_key=1)");
    assert_eq!(d.message, "unknown argument `node` of `mapreduce`");
    assert_eq!(under(&d), "node");
    assert!(d.hint.unwrap().starts_with("did you mean `nodes`?"));

    let d = err("pipe(a, stages=2)");
    assert_eq!(d.message, "`pipe` takes no keyword arguments");

    let d = err("mapreduce(a, b, nodes=1, nodes=2, threads=1, keys=1, per_key=1)");
    assert_eq!(d.message, "`nodes=` is given twice");
}

#[test]
fn counts_are_checked() {
    let d = err("tpool(2.5, a)");
    assert_eq!(d.message, "`2.5` is not a valid thread count");
    let d = err("tpool(99999999999999999999999, a)");
    assert!(d.message.contains("not a valid"));
    let d = err("dc(a, b, c, procs=6, exchange=e)");
    assert!(d.message.contains("power of two"), "{}", d.message);
    assert_eq!(d.hint.as_deref(), Some("use procs=4 or procs=8"));
    let d = err("mapreduce(a, b, nodes=0, threads=1, keys=1, per_key=1)");
    assert_eq!(d.message, "`nodes` must be at least 1");
    let d = err("tpool(qsort(1), a)");
    assert!(d.message.contains("thread count"), "{}", d.message);
}

#[test]
fn pattern_names_alone_need_arguments() {
    let d = err("pipe");
    assert_eq!(d.message, "`pipe` is a pattern and needs arguments");
    let d = err("seq(pipe, a)");
    assert_eq!(under(&d), "pipe");
}

#[test]
fn model_errors_in_arguments_are_located_in_the_term() {
    let src = "mapreduce(a, b, nodes=1, threads=4, keys=768, per_key=log3(x))";
    let d = err(src);
    assert_eq!(d.origin, "<term>");
    assert_eq!(d.source, src);
    assert!(
        d.message.contains("unknown function `log3`"),
        "{}",
        d.message
    );
    assert_eq!(under(&d), "log3");
}

#[test]
fn positional_after_keyword_and_too_many_terms() {
    let d = err("mapreduce(a, b, nodes=1, c, threads=1, keys=1, per_key=1)");
    assert_eq!(d.message, "a term cannot follow keyword arguments");
    let d = err("mapreduce(a, b, c, nodes=1, threads=1, keys=1, per_key=1)");
    assert!(d.message.contains("takes 2 terms"), "{}", d.message);
    let d = err("tpool(2, a, b)");
    assert_eq!(d.message, "`tpool` takes exactly two arguments");
}

#[test]
fn odd_characters_are_reported() {
    let d = err("pipe(a; b)");
    assert!(d.message.contains("`;`"), "{}", d.message);
    let d = err("pipe(a, b) é");
    assert_eq!(under(&d), "é");
}

#[test]
fn nesting_is_capped_without_overflowing_the_stack() {
    let deep = |n: usize| format!("{}a{}", "seq(".repeat(n), ")".repeat(n));
    // Runs on the test harness's 2 MiB thread stack.
    assert_eq!(
        ok(&deep(MAX_TERM_DEPTH)).root.pattern_count(),
        MAX_TERM_DEPTH
    );
    let d = err(&deep(MAX_TERM_DEPTH + 1));
    assert!(d.message.contains("nested more than"), "{}", d.message);
}

// ----- property tests ----------------------------------------------------------------

const NAMES: &[&str] = &["qsort", "inc", "nop", "map", "red", "sh", "a_1"];

fn arb_count() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u64..64).prop_map(|n| n.to_string()),
        prop::sample::select(vec!["n", "m", "P"]).prop_map(String::from),
    ]
}

fn arb_expr() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "768",
        "x",
        "x / 2",
        "2 * x + 1",
        "max(1, x)",
        "x^(3/2)",
        "log2(x)",
    ])
    .prop_map(String::from)
}

/// Random terms, as text (not necessarily canonical).
fn arb_term() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(NAMES.to_vec()).prop_map(String::from);
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| format!("seq({})", v.join(", "))),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| format!("pipe({})", v.join(",  "))),
            (arb_count(), inner.clone()).prop_map(|(n, t)| format!("tpool( {n} ,{t})")),
            (inner.clone(), inner.clone(), arb_count(), arb_count(), arb_expr(), arb_expr(), any::<bool>())
                .prop_map(|(a, b, m, n, k, d, sh)| {
                    let shuffle = if sh { ", shuffle=sh" } else { "" };
                    format!("mapreduce({a}, {b}, per_key={d}, keys={k}, nodes={m}, threads={n}{shuffle})")
                }),
            (inner.clone(), inner.clone(), inner.clone(), prop::sample::select(vec!["1", "2", "8", "P"]), prop::option::of(arb_expr()))
                .prop_map(|(a, b, c, p, size)| {
                    let size = size.map(|s| format!(", size={s}")).unwrap_or_default();
                    format!("dc({a}, {b}, {c}, exchange=sh{size}, procs={p})")
                }),
            (inner, prop::sample::select(vec!["1", "4", "9", "P"]), prop::sample::select(vec!["flat", "binomial", "pipeline, segments=4"]), prop::option::of(arb_expr()))
                .prop_map(|(a, p, b, bytes)| {
                    let bytes = bytes.map(|s| format!(", bytes={s}")).unwrap_or_default();
                    format!("matmul({a}, bcast={b}, message=sh, procs={p}{bytes})")
                }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(2), ..ProptestConfig::default() })]

    #[test]
    fn print_parse_print_is_a_fixed_point(src in arb_term()) {
        let t = ok(&src);
        let printed = t.to_string();
        let again = ok(&printed);
        prop_assert_eq!(again.to_string(), printed);
    }

    #[test]
    fn random_text_never_panics(src in "[a-z(),= 0-9.^*+/_\\-]{0,60}") {
        let _ = parse_term("<term>", &src);
    }

    #[test]
    fn mutated_terms_never_panic(src in arb_term(), cut in 0usize..200, junk in "[(),=a-z0-9 ]{0,3}") {
        let mut s = src;
        let at = cut.min(s.len());
        s.insert_str(at, &junk);
        if let Err(d) = parse_term("<term>", &s) {
            // Errors always point into the source.
            prop_assert!(d.span.end <= s.len());
            let _ = d.render();
        }
    }
}

/// The inputs the `term_roundtrip` fuzz target found where printing was not a fixed point
/// (regression seeds in `fuzz/seeds/term_roundtrip/`): print → parse → print is one now.
#[test]
fn fuzz_regression_seeds_round_trip() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/term_roundtrip");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("regression seeds") {
        let path = entry.expect("dir entry").path();
        let Ok(src) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(t) = parse_term("<fuzz>", &src) else {
            continue;
        };
        let printed = t.to_string();
        let again = parse_term("<fuzz>", &printed)
            .unwrap_or_else(|d| panic!("{}: {}", path.display(), d.render()));
        assert_eq!(again.to_string(), printed, "{}", path.display());
        seen += 1;
    }
    assert!(seen >= 5, "only {seen} term seeds under {}", dir.display());
}
