//! The communication functions a model string may call.
//!
//! [`CommLibrary`] plugs into the model parser ([`crate::model::parse_model_with`]) so
//! that a components file can write `bcast_binomial(p, 8 * x)` or `hockney(bytes)`. A
//! call expands at parse time into an ordinary [`Expr`] whose machine parameters are free
//! parameters — `alpha`, `beta` (Hockney), `L`, `o`, `g`, `G` (LogGP), `l`, `g` (the divide-and-conquer paper's
//! exchange) — so `--at alpha=2e-6,beta=1e-9` or a machine table supplies them later,
//! and the model stays symbolic until then.
//!
//! Every collective exists twice: `NAME(...)` under Hockney and `NAME_loggp(...)` under
//! LogGP. Reductions take an optional last argument `gamma` (time per combined byte).
//! `docs/communication.md` lists every function with its formula; a test keeps the two
//! in step.

use super::collective::{optimal_segment_size, optimal_segments, Algorithm, Shape};
use super::p2p::{names, PointToPoint};
use crate::model::{Expr, Functions};

/// Suffix selecting the LogGP variant of a collective.
pub const LOGGP_SUFFIX: &str = "_loggp";

/// One documented library function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionDoc {
    pub name: String,
    /// `bcast_binomial(p, bytes)`.
    pub signature: String,
    pub summary: String,
    /// The Hockney form of the cost (or the model it expands to).
    pub formula: String,
}

/// The communication model functions (Hockney, LogGP, exchange, collectives).
#[derive(Clone, Copy, Debug, Default)]
pub struct CommLibrary;

impl CommLibrary {
    /// Every function with its signature and formula, in documentation order.
    pub fn docs() -> Vec<FunctionDoc> {
        let doc = |name: &str, sig: &str, summary: &str, formula: &str| FunctionDoc {
            name: name.to_string(),
            signature: sig.to_string(),
            summary: summary.to_string(),
            formula: formula.to_string(),
        };
        let mut out = vec![
            doc(
                "hockney",
                "hockney(bytes[, alpha, beta])",
                "one message under Hockney's model",
                "α + β·bytes",
            ),
            doc(
                "loggp",
                "loggp(bytes[, L, o, g, G])",
                "one message under LogGP (g does not enter a single message)",
                "L + 2o + (bytes − 1)G",
            ),
            doc(
                "loggp_send",
                "loggp_send(bytes[, L, o, g, G])",
                "alias of loggp",
                "L + 2o + (bytes − 1)G",
            ),
            doc(
                "exchange",
                "exchange(K[, l, g])",
                "the divide-and-conquer paper's pairwise exchange of K words (send and receive)",
                "2(l + K·g)",
            ),
            doc(
                "bcast_pipeline_segments",
                "bcast_pipeline_segments(p, bytes)",
                "the optimal segment count k* of the pipelined chain",
                "max(1, √((p−2)·bytes·β/α))",
            ),
            doc(
                "bcast_pipeline_segment_size",
                "bcast_pipeline_segment_size(p, bytes)",
                "the optimal segment size bytes/k*",
                "bytes / k*",
            ),
        ];
        for a in Algorithm::ALL.iter().copied() {
            out.push(doc(
                a.name(),
                &signature(a.name(), a.shape()),
                a.summary(),
                a.hockney_formula(),
            ));
        }
        out
    }
}

fn signature(name: &str, shape: Shape) -> String {
    match shape {
        Shape::Plain => format!("{name}(p, bytes)"),
        Shape::Reduction => format!("{name}(p, bytes[, gamma])"),
        Shape::Segmented => format!("{name}(p, bytes, k)"),
        Shape::Barrier => format!("{name}(p)"),
    }
}

/// Reject constant arguments that cannot be a process count, a size or a segment count.
fn check_count(what: &str, fname: &str, e: &Expr, min: f64) -> Result<(), String> {
    if let Some(v) = e.as_constant() {
        if !(v.is_finite() && v.fract() == 0.0 && v >= min) {
            return Err(format!(
                "`{fname}`: {what} must be a whole number ≥ {min}, got {}",
                crate::model::format_number(v)
            ));
        }
    }
    Ok(())
}

fn check_size(fname: &str, e: &Expr) -> Result<(), String> {
    if let Some(v) = e.as_constant() {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!(
                "`{fname}`: the message size must be ≥ 0 bytes, got {}",
                crate::model::format_number(v)
            ));
        }
    }
    Ok(())
}

fn arity(fname: &str, sig: &str, got: usize) -> String {
    format!(
        "`{fname}` takes {sig}, got {got} argument{}",
        if got == 1 { "" } else { "s" }
    )
}

fn collective(
    algo: Algorithm,
    fname: &str,
    net: &PointToPoint,
    mut args: Vec<Expr>,
) -> Result<Expr, String> {
    let shape = algo.shape();
    let full = signature(fname, shape);
    let sig = full.trim_start_matches(fname);
    let (lo, hi) = match shape {
        Shape::Plain => (2, 2),
        Shape::Reduction => (2, 3),
        Shape::Segmented => (3, 3),
        Shape::Barrier => (1, 1),
    };
    if args.len() < lo || args.len() > hi {
        return Err(arity(fname, sig, args.len()));
    }
    check_count("the process count", fname, &args[0], 1.0)?;
    let n = if shape == Shape::Barrier {
        Expr::zero()
    } else {
        check_size(fname, &args[1])?;
        args[1].clone()
    };
    let segments = if shape == Shape::Segmented {
        check_count("the segment count", fname, &args[2], 1.0)?;
        Some(args[2].clone())
    } else {
        None
    };
    let gamma = if shape == Shape::Reduction && args.len() == 3 {
        args.pop()
    } else {
        None
    };
    Ok(algo.cost(net, &args[0], &n, segments.as_ref(), gamma.as_ref()))
}

impl Functions for CommLibrary {
    fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>> {
        let (base, net) = match name.strip_suffix(LOGGP_SUFFIX) {
            Some(base) if !base.is_empty() => (base, PointToPoint::loggp()),
            _ => (name, PointToPoint::hockney()),
        };
        let result = match base {
            "hockney" if name == base => hockney_call(args),
            "loggp" | "loggp_send" if name == base => loggp_call(name, args),
            "exchange" if name == base => exchange_call(args),
            "bcast_pipeline_segments" | "bcast_pipeline_segment_size" => {
                if args.len() != 2 {
                    return Some(Err(arity(name, "(p, bytes)", args.len())));
                }
                let checked = check_count("the process count", name, &args[0], 1.0)
                    .and_then(|()| check_size(name, &args[1]));
                checked.map(|()| {
                    if base == "bcast_pipeline_segments" {
                        optimal_segments(&net, &args[0], &args[1])
                    } else {
                        optimal_segment_size(&net, &args[0], &args[1])
                    }
                })
            }
            other => {
                let algo = Algorithm::from_name(other)?;
                collective(algo, name, &net, args)
            }
        };
        Some(result)
    }

    fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in CommLibrary::docs() {
            out.push(d.name.clone());
        }
        for a in Algorithm::ALL {
            out.push(format!("{}{LOGGP_SUFFIX}", a.name()));
        }
        out.push(format!("bcast_pipeline_segments{LOGGP_SUFFIX}"));
        out.push(format!("bcast_pipeline_segment_size{LOGGP_SUFFIX}"));
        out
    }
}

fn hockney_call(args: Vec<Expr>) -> Result<Expr, String> {
    let sig = "(bytes[, alpha, beta])";
    let net = match args.len() {
        1 => PointToPoint::hockney(),
        3 => PointToPoint::hockney_with(args[1].clone(), args[2].clone()),
        n => return Err(arity("hockney", sig, n)),
    };
    check_size("hockney", &args[0])?;
    Ok(net.message(&args[0]))
}

fn loggp_call(name: &str, args: Vec<Expr>) -> Result<Expr, String> {
    let sig = "(bytes[, L, o, g, G])";
    let net = match args.len() {
        1 => PointToPoint::loggp(),
        5 => PointToPoint::loggp_with(
            args[1].clone(),
            args[2].clone(),
            args[3].clone(),
            args[4].clone(),
        ),
        n => return Err(arity(name, sig, n)),
    };
    check_size(name, &args[0])?;
    Ok(net.message(&args[0]))
}

/// The divide-and-conquer paper: `Ex(K) = t_send + t_recv = 2·(l + K·g)`.
fn exchange_call(args: Vec<Expr>) -> Result<Expr, String> {
    let (l, g) = match args.len() {
        1 => (Expr::param("l"), Expr::param(names::G_SHORT)),
        3 => (args[1].clone(), args[2].clone()),
        n => return Err(arity("exchange", "(K[, l, g])", n)),
    };
    check_size("exchange", &args[0])?;
    Ok(exchange(&args[0], &l, &g))
}

/// The divide-and-conquer paper's exchange of `k` words between hypercube partners: `2·(l + k·g)`.
pub fn exchange(k: &Expr, l: &Expr, g: &Expr) -> Expr {
    Expr::mul(
        Expr::constant(2.0),
        Expr::add(l.clone(), Expr::mul(k.clone(), g.clone())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model_with;

    fn parse(src: &str) -> Result<Expr, String> {
        parse_model_with("<test>", src, &CommLibrary).map_err(|d| d.message)
    }

    #[test]
    fn components_can_call_collectives_with_symbolic_machines() {
        let e = parse("bcast_binomial(p, 8 * x)").unwrap();
        assert_eq!(e.to_string(), "(alpha + 8 * beta * x) * ceil(log2(p))");
        let v = e
            .eval_at(&[("p", 6.0), ("x", 1000.0), ("alpha", 1e-6), ("beta", 1e-9)])
            .unwrap();
        assert!((v - 3.0 * (1e-6 + 8e-6)).abs() < 1e-18);
        // Composes with the rest of a model.
        let e = parse("1034.17 * x * log2(x) / p + allreduce_ring(p, 8)").unwrap();
        assert!(e.mentions("alpha") && e.mentions("beta") && e.mentions("x"));
    }

    #[test]
    fn hockney_and_loggp_point_to_point() {
        assert_eq!(
            parse("hockney(bytes)").unwrap().to_string(),
            "alpha + beta * bytes"
        );
        assert_eq!(
            parse("hockney(1024, 2e-6, 1e-9)").unwrap().as_constant(),
            Some(2e-6 + 1024.0 * 1e-9)
        );
        assert_eq!(
            parse("loggp(n)").unwrap().to_string(),
            parse("L + 2*o + (n - 1)*G").unwrap().to_string()
        );
        assert_eq!(parse("loggp_send(n)").unwrap(), parse("loggp(n)").unwrap());
        assert_eq!(
            parse("exchange(K)").unwrap().to_string(),
            "2 * l + 2 * K * g"
        );
    }

    #[test]
    fn loggp_variants_use_loggp_parameters() {
        let e = parse("bcast_flat_loggp(4, 1000)").unwrap();
        let params: Vec<String> = e.params().into_iter().collect();
        assert_eq!(params, ["G", "L", "g", "o"]);
        let b = parse("barrier_dissemination_loggp(5)").unwrap();
        assert_eq!(b, parse("3 * (L + 2*o)").unwrap());
    }

    #[test]
    fn reductions_take_an_optional_gamma() {
        let without = parse("reduce_binomial(4, n)").unwrap();
        let with = parse("reduce_binomial(4, n, gamma)").unwrap();
        assert!(!without.mentions("gamma"));
        assert_eq!(with.to_string(), "2 * alpha + 2 * beta * n + 2 * gamma * n");
    }

    #[test]
    fn pipeline_helpers() {
        let k = parse("bcast_pipeline_segments(6, 1e6)").unwrap();
        let v = k.eval_at(&[("alpha", 1e-5), ("beta", 1e-9)]).unwrap();
        assert!((v - 20.0).abs() < 1e-9);
        let s = parse("bcast_pipeline_segment_size(6, 1e6)").unwrap();
        let v = s.eval_at(&[("alpha", 1e-5), ("beta", 1e-9)]).unwrap();
        assert!((v - 5e4).abs() < 1e-6);
        let t = parse("bcast_pipeline(6, 1e6, 4)").unwrap();
        let v = t.eval_at(&[("alpha", 1e-5), ("beta", 1e-9)]).unwrap();
        assert!((v - 2.08e-3).abs() < 1e-15);
    }

    #[test]
    fn bad_calls_get_clear_errors() {
        let msg = parse("bcast_binomial(p)").unwrap_err();
        assert_eq!(msg, "`bcast_binomial` takes (p, bytes), got 1 argument");
        let msg = parse("bcast_binomial(2.5, 10)").unwrap_err();
        assert!(
            msg.contains("process count must be a whole number"),
            "{msg}"
        );
        let msg = parse("hockney(-1)").unwrap_err();
        assert!(msg.contains("message size must be ≥ 0"), "{msg}");
        let msg = parse("bcast_pipeline(4, 10, 0)").unwrap_err();
        assert!(msg.contains("segment count"), "{msg}");
        let msg = parse("hockney_loggp(4)").unwrap_err();
        assert!(msg.contains("unknown function"), "{msg}");
        // Unknown names fall through to the parser's hint, which lists ours.
        let d = parse_model_with("<test>", "bcast_binomal(p, 1)", &CommLibrary).unwrap_err();
        assert!(d.hint.unwrap().contains("bcast_binomial"));
    }

    #[test]
    fn every_function_is_documented_in_docs_communication_md() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/communication.md");
        let text = std::fs::read_to_string(path).expect("docs/communication.md exists");
        for d in CommLibrary::docs() {
            assert!(
                text.contains(&format!("`{}`", d.signature)),
                "docs/communication.md does not document `{}`",
                d.signature
            );
        }
    }

    #[test]
    fn every_name_expands() {
        for name in CommLibrary.names() {
            let r = CommLibrary.call(
                &name,
                vec![Expr::param("p"), Expr::param("n"), Expr::constant(2.0)],
            );
            // Wrong arity is an error, never a missing function.
            assert!(r.is_some(), "{name}");
        }
    }
}
