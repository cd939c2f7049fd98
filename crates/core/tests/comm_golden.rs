//! Golden output of the communication and skeleton function library: every function's
//! expansion with symbolic arguments and its value at a few machines and process counts
//! (powers of two and not). `testdata/comm/functions.out` is the reviewed copy; set
//! `PERFCOMPOSE_BLESS=1` to rewrite it after a deliberate change.

use std::fmt::Write;

use perfcompose_core::model::{format_significant, parse_model_with, Expr, Functions};
use perfcompose_core::skeleton::StandardLibrary;
use proptest::prelude::*;

fn golden_path() -> String {
    format!(
        "{}/../../testdata/comm/functions.out",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Symbolic arguments for a signature such as `bcast_pipeline(p, bytes, k)`.
fn call_for(signature: &str) -> String {
    let name = &signature[..signature.find('(').unwrap()];
    let inner = &signature[name.len() + 1..signature.len() - 1];
    let required: Vec<&str> = inner
        .split('[')
        .next()
        .unwrap()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let args: Vec<String> = required
        .iter()
        .map(|a| match *a {
            "bytes" => "n".to_string(),
            "divide" => "2 + x".to_string(),
            "combine" => "3 * x".to_string(),
            "leaf" => "x^2".to_string(),
            "exchange" => "exchange(1000)".to_string(),
            "size" => "x".to_string(),
            "T1" => "matmul_seq(M)".to_string(),
            "TN" => "matmul_dataflow(N, M)".to_string(),
            other => other.to_string(),
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

const MACHINE: &[(&str, f64)] = &[
    ("alpha", 1e-5),
    ("beta", 1e-9),
    ("gamma", 1e-10),
    ("L", 5e-6),
    ("o", 2e-6),
    ("g", 1e-6),
    ("G", 1e-9),
    ("l", 2.43e-4),
    ("n", 1e6),
    ("k", 8.0),
    ("K", 1000.0),
    ("x", 1e4),
    ("M", 4096.0),
    ("T_sched", 0.01),
    ("T_startup", 1e-4),
    ("T_comm", 1e-7),
    ("T_flops", 1e-10),
];

fn env(p: f64) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = MACHINE.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    v.push(("p".into(), p));
    // Skeletons want a square process count (N) or a power of two (P).
    v.push(("N".into(), (p.sqrt().round()).powi(2)));
    v.push(("P".into(), 2f64.powi(p.log2().round() as i32)));
    v
}

#[test]
fn every_function_expands_and_evaluates_as_reviewed() {
    let mut out = String::from(
        "# Every library function, expanded with symbolic arguments, and its value at\n\
         # p = 6, 8, 100 (N = nearest square, P = nearest power of two) with\n\
         # alpha=1e-5 beta=1e-9 gamma=1e-10 L=5e-6 o=2e-6 g=1e-6 G=1e-9 l=2.43e-4 n=1e6 k=8\n\
         # K=1000 x=1e4 M=4096 T_sched=0.01 T_startup=1e-4 T_comm=1e-7 T_flops=1e-10\n",
    );
    let mut docs = StandardLibrary::docs();
    // Each collective's LogGP twin too.
    let twins: Vec<_> = docs
        .iter()
        .filter(|d| {
            StandardLibrary
                .names()
                .contains(&format!("{}_loggp", d.name))
        })
        .map(|d| {
            let mut t = d.clone();
            t.signature = t
                .signature
                .replacen(&d.name, &format!("{}_loggp", d.name), 1);
            t
        })
        .collect();
    docs.extend(twins);
    for d in docs {
        let call = call_for(&d.signature);
        let e = parse_model_with("<golden>", &call, &StandardLibrary)
            .unwrap_or_else(|e| panic!("{call}: {}", e.render()));
        let values: Vec<String> = [6.0, 8.0, 100.0]
            .iter()
            .map(|&p| match e.eval(&env(p)) {
                Ok(v) => format_significant(v, 6),
                Err(err) => format!("error: {err}"),
            })
            .collect();
        writeln!(
            out,
            "{call}\n  = {}\n  at p=6,8,100: {}",
            e.rounded(6),
            values.join(", ")
        )
        .unwrap();
    }
    let path = golden_path();
    if std::env::var_os("PERFCOMPOSE_BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        out, want,
        "functions.out differs; rerun with PERFCOMPOSE_BLESS=1 if intended"
    );
}

fn arg() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (-5.0f64..200.0).prop_map(|v| Expr::constant((v * 4.0).round() / 4.0)),
        Just(Expr::param("p")),
        Just(Expr::param("n")),
        Just(Expr::param("x")),
        Just(Expr::constant(0.0)),
        Just(Expr::constant(1.0)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_algorithm: prop::test_runner::RngAlgorithm::ChaCha, ..ProptestConfig::default() })]

    /// Any call — right or wrong arity, odd constants — answers with a model or a
    /// message, and any model it returns evaluates or reports a domain error, never
    /// panics.
    #[test]
    fn calls_never_panic(idx in 0usize..200, args in prop::collection::vec(arg(), 0..8), p in 1.0f64..300.0) {
        let names = StandardLibrary.names();
        let name = &names[idx % names.len()];
        if let Some(Ok(e)) = StandardLibrary.call(name, args) {
            let mut env = env(p.round());
            env.push(("x".into(), 1e4));
            let _ = e.eval(&env);
            let _ = e.to_string();
        }
    }
}
