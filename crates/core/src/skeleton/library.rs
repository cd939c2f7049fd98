//! The skeleton functions a model string may call, and [`StandardLibrary`]: every
//! function perfcompose adds to the model language (skeletons and communication).
//!
//! `perfcompose predict` evaluates a component whose model is `matmul_mpi_binomial(N, M)`
//! like any other model; machine parameters left out of a call are free parameters
//! (`T_sched`, `T_startup`, `T_comm`, `T_flops`) for `--at` or a machine table.

use num_traits::{One, Zero};

use super::dc::Hypercube;
use super::matmul::{names, Matmul};
use crate::comm::{Algorithm, CommLibrary, FunctionDoc};
use crate::model::{Expr, Functions};

/// Every function of the model language beyond the built-ins: the skeleton models below
/// and all of [`CommLibrary`]. This is the library components files are parsed with.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardLibrary;

/// The skeleton functions only.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkeletonLibrary;

impl StandardLibrary {
    /// Every function with its signature, skeletons first.
    pub fn docs() -> Vec<FunctionDoc> {
        let mut v = SkeletonLibrary::docs();
        v.extend(CommLibrary::docs());
        v
    }
}

impl Functions for StandardLibrary {
    fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>> {
        // Both libraries answer `None` for names they do not own, so the order only
        // matters for a name both define (none do).
        if SkeletonLibrary::owns(name) {
            return SkeletonLibrary.call(name, args);
        }
        CommLibrary.call(name, args)
    }

    fn names(&self) -> Vec<String> {
        let mut v = SkeletonLibrary.names();
        v.extend(CommLibrary.names());
        v
    }
}

/// The Fox-algorithm variants and the broadcast each uses.
const FOX: &[(&str, Algorithm, &str)] = &[
    (
        "matmul_fox_flat",
        Algorithm::BcastFlat,
        "a flat-tree broadcast",
    ),
    (
        "matmul_fox_binomial",
        Algorithm::BcastBinomial,
        "a binomial-tree broadcast",
    ),
    (
        "matmul_fox_pipeline",
        Algorithm::BcastPipeline,
        "a pipelined chain of k segments",
    ),
    (
        "matmul_fox_pipeline_opt",
        Algorithm::BcastPipelineOptimal,
        "a pipelined chain with the optimal segment count",
    ),
    (
        "matmul_fox_scatter_allgather",
        Algorithm::BcastScatterAllgather,
        "a scatter + allgather broadcast",
    ),
];

impl SkeletonLibrary {
    fn owns(name: &str) -> bool {
        SkeletonLibrary::docs().iter().any(|d| d.name == name)
    }

    /// Every skeleton function with its signature and formula.
    pub fn docs() -> Vec<FunctionDoc> {
        let doc = |name: &str, sig: &str, summary: &str, formula: &str| FunctionDoc {
            name: name.to_string(),
            signature: sig.to_string(),
            summary: summary.to_string(),
            formula: formula.to_string(),
        };
        let mut v = vec![
            doc(
                "matmul_dataflow",
                "matmul_dataflow(N, M[, T_sched, T_comm, T_flops])",
                "Fox's algorithm on Dryad, flat-tree broadcast through file pipes (the matrix-multiplication paper's eq. 5)",
                "√N(N+1)/2·T_sched + (√N+1)M²/(2√N)·T_comm + 2M³/N·T_flops",
            ),
            doc(
                "matmul_mpi_binomial",
                "matmul_mpi_binomial(N, M[, T_sched, T_comm, T_flops])",
                "Fox's algorithm on MPI with a binomial-tree broadcast (the matrix-multiplication paper's eq. 9)",
                "√N(N+1)/2·T_sched + M²(1 + ⌈log2 √N⌉)/(2√N)·T_comm + 2M³/N·T_flops",
            ),
            doc(
                "matmul_seq",
                "matmul_seq(M[, T_flops])",
                "sequential multiplication, T(1)",
                "2M³·T_flops",
            ),
            doc(
                "matmul_overhead_dataflow",
                "matmul_overhead_dataflow(N, M[, T_comm, T_flops])",
                "Dryad's parallel overhead for large matrices (the matrix-multiplication paper's eq. 7)",
                "√N(√N+1)/(4M) · T_comm/T_flops",
            ),
            doc(
                "matmul_overhead_mpi",
                "matmul_overhead_mpi(N, M[, T_comm, T_flops])",
                "MPI's parallel overhead for large matrices (the matrix-multiplication paper's eq. 10)",
                "√N(1 + ⌈log2 √N⌉)/(4M) · T_comm/T_flops",
            ),
            doc(
                "parallel_efficiency",
                "parallel_efficiency(T1, TN, N)",
                "parallel efficiency of a run on N processes (the matrix-multiplication paper's eq. 6)",
                "T1 / (N·TN)",
            ),
            doc(
                "parallel_overhead",
                "parallel_overhead(T1, TN, N)",
                "parallel overhead, 1/ε − 1",
                "N·TN/T1 − 1",
            ),
            doc(
                "dc_hypercube",
                "dc_hypercube(P, size, divide, combine, leaf, exchange)",
                "hypercube divide and conquer (the divide-and-conquer paper); `size` names the parameter that halves per level, `exchange` may use the level j",
                "Σ_{j<log2 P} [divide(size/2^j) + combine(size/2^j) + exchange] + leaf(size/P)",
            ),
        ];
        for (name, algo, label) in FOX {
            let sig = if *algo == Algorithm::BcastPipeline {
                format!("{name}(N, M, k[, T_sched, T_startup, T_comm, T_flops])")
            } else {
                format!("{name}(N, M[, T_sched, T_startup, T_comm, T_flops])")
            };
            v.push(doc(
                name,
                &sig,
                &format!(
                    "Fox's algorithm derived as in the matrix-multiplication paper, with {label}"
                ),
                "√N·[(N+1)/2·T_sched + ½·B(√N, M²/N) + T_startup + M²/N·T_comm + 2(M/√N)³·T_flops]",
            ));
        }
        v
    }
}

fn arity(name: &str, sig: &str, got: usize) -> String {
    format!(
        "`{name}` takes {sig}, got {got} argument{}",
        if got == 1 { "" } else { "s" }
    )
}

/// The name of a bare parameter (`M`), if `e` is one.
fn param_name(e: &Expr) -> Option<String> {
    let (c, m) = e.as_pmnf()?.as_single_term()?;
    let mut factors = m.factors();
    let (name, pw) = factors.next()?;
    (c == 1.0 && factors.next().is_none() && pw.exp.is_one() && pw.log.is_zero())
        .then(|| name.to_string())
}

/// Fill a [`Matmul`] from `N, M` and the machine arguments named in `machine`; absent
/// machine arguments stay free parameters.
fn matmul_from(args: &[Expr], machine: &[&str]) -> Matmul {
    let mut mm = Matmul::symbolic();
    mm.procs = args[0].clone();
    mm.order = args[1].clone();
    if args.len() > 2 {
        for (slot, e) in machine.iter().zip(&args[2..]) {
            let target = match *slot {
                names::T_SCHED => &mut mm.t_sched,
                names::T_STARTUP => &mut mm.t_startup,
                names::T_COMM => &mut mm.t_comm,
                _ => &mut mm.t_flops,
            };
            *target = e.clone();
        }
    }
    mm
}

fn check_procs(name: &str, n: &Expr) -> Result<(), String> {
    if let Some(v) = n.as_constant() {
        let q = v.sqrt();
        if !(v >= 1.0 && q.fract() == 0.0) {
            return Err(format!(
                "`{name}`: the process count must be a perfect square (a √N × √N mesh), got {}",
                crate::model::format_number(v)
            ));
        }
    }
    Ok(())
}

impl Functions for SkeletonLibrary {
    fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>> {
        let docs = SkeletonLibrary::docs();
        let doc = docs.iter().find(|d| d.name == name)?;
        let sig = doc.signature.trim_start_matches(name).to_string();
        let n = args.len();
        let bad = || Some(Err(arity(name, &sig, n)));
        const SCHED_COMM_FLOPS: &[&str] = &[names::T_SCHED, names::T_COMM, names::T_FLOPS];
        const COMM_FLOPS: &[&str] = &[names::T_COMM, names::T_FLOPS];
        const ALL: &[&str] = &[
            names::T_SCHED,
            names::T_STARTUP,
            names::T_COMM,
            names::T_FLOPS,
        ];
        let result = match name {
            "matmul_dataflow" | "matmul_mpi_binomial" => {
                if n != 2 && n != 5 {
                    return bad();
                }
                check_procs(name, &args[0]).map(|()| {
                    let mm = matmul_from(&args, SCHED_COMM_FLOPS);
                    if name == "matmul_dataflow" {
                        mm.dataflow()
                    } else {
                        mm.mpi_binomial()
                    }
                })
            }
            "matmul_seq" => {
                if n != 1 && n != 2 {
                    return bad();
                }
                let mut mm = Matmul::symbolic();
                mm.order = args[0].clone();
                if n == 2 {
                    mm.t_flops = args[1].clone();
                }
                Ok(mm.sequential())
            }
            "matmul_overhead_dataflow" | "matmul_overhead_mpi" => {
                if n != 2 && n != 4 {
                    return bad();
                }
                check_procs(name, &args[0]).map(|()| {
                    let mm = matmul_from(&args, COMM_FLOPS);
                    if name == "matmul_overhead_dataflow" {
                        mm.dataflow_overhead_approx()
                    } else {
                        mm.mpi_overhead_approx()
                    }
                })
            }
            "parallel_efficiency" | "parallel_overhead" => {
                if n != 3 {
                    return bad();
                }
                let (t1, tn, p) = (&args[0], &args[1], &args[2]);
                let ratio = Expr::div(t1.clone(), Expr::mul(p.clone(), tn.clone()));
                Ok(if name == "parallel_efficiency" {
                    ratio
                } else {
                    Expr::sub(
                        Expr::div(Expr::mul(p.clone(), tn.clone()), t1.clone()),
                        Expr::one(),
                    )
                })
            }
            "dc_hypercube" => {
                if n != 6 {
                    return bad();
                }
                let Some(size) = param_name(&args[1]) else {
                    return Some(Err(format!(
                        "`dc_hypercube`: the second argument must name the parameter that is divided (e.g. `M`), got `{}`",
                        args[1]
                    )));
                };
                let hdc = Hypercube {
                    procs: args[0].clone(),
                    divided: vec![size],
                    divide: args[2].clone(),
                    combine: args[3].clone(),
                    leaf: args[4].clone(),
                    exchange: args[5].clone(),
                };
                hdc.model().map_err(|e| format!("`dc_hypercube`: {e}"))
            }
            fox => {
                let (_, algo, _) = FOX.iter().find(|(f, _, _)| *f == fox)?;
                let (segments, rest): (Option<Expr>, Vec<Expr>) =
                    if *algo == Algorithm::BcastPipeline {
                        if n != 3 && n != 7 {
                            return bad();
                        }
                        let mut v = args.clone();
                        let k = v.remove(2);
                        (Some(k), v)
                    } else {
                        if n != 2 && n != 6 {
                            return bad();
                        }
                        (None, args.clone())
                    };
                check_procs(name, &rest[0]).map(|()| {
                    matmul_from(&rest, ALL)
                        .fox(*algo, segments.as_ref())
                        .unwrap_or_else(Expr::zero)
                })
            }
        };
        Some(result)
    }

    fn names(&self) -> Vec<String> {
        SkeletonLibrary::docs()
            .into_iter()
            .map(|d| d.name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model_with;

    fn parse(src: &str) -> Result<Expr, String> {
        parse_model_with("<test>", src, &StandardLibrary).map_err(|d| d.message)
    }

    #[test]
    fn matmul_functions_expand_to_the_struct_models() {
        let mm = Matmul::symbolic();
        assert_eq!(parse("matmul_dataflow(N, M)").unwrap(), mm.dataflow());
        assert_eq!(
            parse("matmul_mpi_binomial(N, M)").unwrap(),
            mm.mpi_binomial()
        );
        assert_eq!(
            parse("matmul_fox_binomial(N, M)").unwrap(),
            mm.fox(Algorithm::BcastBinomial, None).unwrap()
        );
        assert_eq!(parse("matmul_seq(M)").unwrap(), mm.sequential());
        // Explicit machine arguments replace the free parameters.
        let e = parse("matmul_dataflow(25, M, 0, 1/8.87e6, 1/8.64e9)").unwrap();
        let params: Vec<String> = e.params().into_iter().collect();
        assert_eq!(params, ["M"]);
        let e = parse("matmul_fox_pipeline(25, M, 8, 0, T_startup, T_comm, T_flops)").unwrap();
        assert!(e.mentions("T_startup") && !e.mentions("T_sched"));
    }

    #[test]
    fn efficiency_functions_compose_with_skeletons() {
        let e = parse("parallel_efficiency(matmul_seq(M), matmul_dataflow(N, M), N)").unwrap();
        let mm = Matmul::symbolic();
        let want = mm.efficiency(&mm.dataflow());
        let env = [
            ("N", 16.0),
            ("M", 8000.0),
            ("T_sched", 0.1),
            ("T_comm", 1e-7),
            ("T_flops", 1e-10),
        ];
        assert!((e.eval_at(&env).unwrap() - want.eval_at(&env).unwrap()).abs() < 1e-12);
        let f = parse("parallel_overhead(matmul_seq(M), matmul_dataflow(N, M), N)").unwrap();
        let eff = e.eval_at(&env).unwrap();
        assert!((f.eval_at(&env).unwrap() - (1.0 / eff - 1.0)).abs() < 1e-9);
    }

    #[test]
    fn dc_hypercube_function() {
        let e = parse("dc_hypercube(4, x, x, 2*x, x^2, exchange(K))").unwrap();
        assert_eq!(e, parse("4.5*x + 0.0625*x^2 + 4*l + 4*K*g").unwrap());
        let msg = parse("dc_hypercube(6, x, x, x, x, 1)").unwrap_err();
        assert!(msg.contains("power-of-two"), "{msg}");
        let msg = parse("dc_hypercube(4, 2*x, x, x, x, 1)").unwrap_err();
        assert!(msg.contains("must name the parameter"), "{msg}");
    }

    #[test]
    fn bad_skeleton_calls() {
        let msg = parse("matmul_dataflow(24, M)").unwrap_err();
        assert!(msg.contains("perfect square"), "{msg}");
        let msg = parse("matmul_dataflow(N)").unwrap_err();
        assert_eq!(
            msg,
            "`matmul_dataflow` takes (N, M[, T_sched, T_comm, T_flops]), got 1 argument"
        );
        // The standard library still knows the communication functions.
        assert!(parse("bcast_binomial(p, n)").is_ok());
    }

    #[test]
    fn every_skeleton_function_is_documented() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/communication.md");
        let text = std::fs::read_to_string(path).expect("docs/communication.md exists");
        for d in SkeletonLibrary::docs() {
            assert!(
                text.contains(&format!("`{}`", d.signature)),
                "docs/communication.md does not document `{}`",
                d.signature
            );
        }
    }
}
