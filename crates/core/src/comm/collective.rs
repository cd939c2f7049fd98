//! Collective algorithms and their cost formulas.
//!
//! The formulas follow Thakur, Rabenseifner and Gropp, "Optimization of Collective
//! Communication Operations in MPICH" (IJHPCA 2005), with the flat tree and the
//! pipelined chain of Pješivac-Grbović et al. (2007) and the broadcast analysis of seed
//! 002. Each is written against a [`PointToPoint`] model so it reads the same under
//! Hockney (`α + β·n`) and LogGP.
//!
//! Conventions (the same as Thakur et al.):
//! * `p` processes, `n` bytes. For broadcast, reduce and allreduce `n` is the size of
//!   the buffer; for scatter, gather and allgather it is the *total* size (each process
//!   owns `n/p`); for alltoall it is what one process sends in total (`n/p` to each).
//! * `γ` is the reduction time per byte (optional: without it a reduction costs its
//!   communication only).
//! * Process counts that are not powers of two are handled the way the algorithms handle
//!   them, not by the power-of-two formula: tree algorithms take `⌈log2 p⌉` rounds;
//!   recursive doubling and halving first fold the `r = p − 2^⌊log2 p⌋` extra processes
//!   into partners and unfold them at the end (two extra steps, as MPICH does); Bruck's
//!   alltoall counts exactly how many blocks move in each of its `⌈log2 p⌉` steps.
//!
//! Everything is an [`Expr`]: with a symbolic `p` the result keeps `ceil(log2(p))`,
//! `2^floor(log2(p))` and friends, and evaluates exactly at any integer `p`.

use super::p2p::PointToPoint;
use crate::model::{Expr, Q};

/// A collective operation implemented by a particular algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Broadcast, root sends to every other process in turn.
    BcastFlat,
    /// Broadcast along a binomial tree.
    BcastBinomial,
    /// Broadcast along a chain, the message cut into `k` segments.
    BcastPipeline,
    /// Pipelined chain with the optimal number of segments.
    BcastPipelineOptimal,
    /// Broadcast as binomial scatter followed by ring allgather (van de Geijn).
    BcastScatterAllgather,
    ScatterFlat,
    ScatterBinomial,
    GatherFlat,
    GatherBinomial,
    ReduceFlat,
    ReduceBinomial,
    /// Reduce-scatter by recursive halving, then binomial gather to the root.
    ReduceRabenseifner,
    AllreduceRecursiveDoubling,
    /// Ring reduce-scatter followed by ring allgather.
    AllreduceRing,
    /// Recursive-halving reduce-scatter followed by recursive-doubling allgather.
    AllreduceRabenseifner,
    AllgatherRing,
    AllgatherRecursiveDoubling,
    AllgatherBruck,
    AlltoallPairwise,
    AlltoallBruck,
    ReduceScatterRing,
    ReduceScatterHalving,
    /// Everybody reports to a root, the root releases everybody.
    BarrierFlat,
    /// Binomial fan-in then fan-out.
    BarrierTree,
    BarrierDissemination,
    BarrierRecursiveDoubling,
}

/// What a collective needs besides `p` and `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `(p, bytes)`.
    Plain,
    /// `(p, bytes[, gamma])`: a reduction.
    Reduction,
    /// `(p, bytes, segments)`.
    Segmented,
    /// `(p)`: no payload.
    Barrier,
}

impl Algorithm {
    /// Every algorithm, in documentation order.
    pub const ALL: &'static [Algorithm] = &[
        Algorithm::BcastFlat,
        Algorithm::BcastBinomial,
        Algorithm::BcastPipeline,
        Algorithm::BcastPipelineOptimal,
        Algorithm::BcastScatterAllgather,
        Algorithm::ScatterFlat,
        Algorithm::ScatterBinomial,
        Algorithm::GatherFlat,
        Algorithm::GatherBinomial,
        Algorithm::ReduceFlat,
        Algorithm::ReduceBinomial,
        Algorithm::ReduceRabenseifner,
        Algorithm::AllreduceRecursiveDoubling,
        Algorithm::AllreduceRing,
        Algorithm::AllreduceRabenseifner,
        Algorithm::AllgatherRing,
        Algorithm::AllgatherRecursiveDoubling,
        Algorithm::AllgatherBruck,
        Algorithm::AlltoallPairwise,
        Algorithm::AlltoallBruck,
        Algorithm::ReduceScatterRing,
        Algorithm::ReduceScatterHalving,
        Algorithm::BarrierFlat,
        Algorithm::BarrierTree,
        Algorithm::BarrierDissemination,
        Algorithm::BarrierRecursiveDoubling,
    ];

    /// The name of the model function (`bcast_binomial`); `_loggp` is appended for the
    /// LogGP variant.
    pub fn name(self) -> &'static str {
        use Algorithm::*;
        match self {
            BcastFlat => "bcast_flat",
            BcastBinomial => "bcast_binomial",
            BcastPipeline => "bcast_pipeline",
            BcastPipelineOptimal => "bcast_pipeline_opt",
            BcastScatterAllgather => "bcast_scatter_allgather",
            ScatterFlat => "scatter_flat",
            ScatterBinomial => "scatter_binomial",
            GatherFlat => "gather_flat",
            GatherBinomial => "gather_binomial",
            ReduceFlat => "reduce_flat",
            ReduceBinomial => "reduce_binomial",
            ReduceRabenseifner => "reduce_rabenseifner",
            AllreduceRecursiveDoubling => "allreduce_rdb",
            AllreduceRing => "allreduce_ring",
            AllreduceRabenseifner => "allreduce_rabenseifner",
            AllgatherRing => "allgather_ring",
            AllgatherRecursiveDoubling => "allgather_rdb",
            AllgatherBruck => "allgather_bruck",
            AlltoallPairwise => "alltoall_pairwise",
            AlltoallBruck => "alltoall_bruck",
            ReduceScatterRing => "reduce_scatter_ring",
            ReduceScatterHalving => "reduce_scatter_halving",
            BarrierFlat => "barrier_flat",
            BarrierTree => "barrier_tree",
            BarrierDissemination => "barrier_dissemination",
            BarrierRecursiveDoubling => "barrier_rdb",
        }
    }

    /// The algorithm whose function is called `name` (without a `_loggp` suffix).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.iter().copied().find(|a| a.name() == name)
    }

    /// The arguments the model function takes.
    pub fn shape(self) -> Shape {
        use Algorithm::*;
        match self {
            BcastPipeline => Shape::Segmented,
            ReduceFlat
            | ReduceBinomial
            | ReduceRabenseifner
            | AllreduceRecursiveDoubling
            | AllreduceRing
            | AllreduceRabenseifner
            | ReduceScatterRing
            | ReduceScatterHalving => Shape::Reduction,
            BarrierFlat | BarrierTree | BarrierDissemination | BarrierRecursiveDoubling => {
                Shape::Barrier
            }
            _ => Shape::Plain,
        }
    }

    /// The Hockney form of the cost, for documentation and error hints.
    pub fn hockney_formula(self) -> &'static str {
        use Algorithm::*;
        match self {
            BcastFlat => "(p-1)(α + nβ)",
            BcastBinomial => "⌈log2 p⌉(α + nβ)",
            BcastPipeline => "(p + k - 2)(α + (n/k)β)",
            BcastPipelineOptimal => "(p + k* - 2)(α + (n/k*)β), k* = max(1, √((p-2)nβ/α))",
            BcastScatterAllgather => "(⌈log2 p⌉ + p - 1)α + 2((p-1)/p)nβ",
            ScatterFlat | GatherFlat => "(p-1)(α + (n/p)β)",
            ScatterBinomial | GatherBinomial => "⌈log2 p⌉α + ((p-1)/p)nβ",
            ReduceFlat => "(p-1)(α + nβ + nγ)",
            ReduceBinomial => "⌈log2 p⌉(α + nβ + nγ)",
            ReduceRabenseifner => {
                "2⌊log2 p⌋α + 2((p'-1)/p')nβ + ((p'-1)/p')nγ + [p≠p'](α + nβ + nγ), p' = 2^⌊log2 p⌋"
            }
            AllreduceRecursiveDoubling => "⌊log2 p⌋(α + nβ + nγ) + [p≠p'](2α + 2nβ + nγ)",
            AllreduceRing => "2(p-1)α + 2((p-1)/p)nβ + ((p-1)/p)nγ",
            AllreduceRabenseifner => {
                "2⌊log2 p⌋α + 2((p'-1)/p')nβ + ((p'-1)/p')nγ + [p≠p'](2α + 2nβ + nγ)"
            }
            AllgatherRing => "(p-1)α + ((p-1)/p)nβ",
            AllgatherRecursiveDoubling => "⌊log2 p⌋α + ((p-1)/p)nβ + [p≠p'](2α + nβ)",
            AllgatherBruck => "⌈log2 p⌉α + ((p-1)/p)nβ",
            AlltoallPairwise => "(p-1)(α + (n/p)β)",
            AlltoallBruck => "Σ_{k<⌈log2 p⌉} (α + c_k (n/p)β), c_k = #{i < p : bit k of i set}",
            ReduceScatterRing => "(p-1)(α + (n/p)β + (n/p)γ)",
            ReduceScatterHalving => {
                "⌊log2 p⌋α + ((p'-1)/p')(nβ + nγ) + [p≠p'](2α + nβ + (n/p)β + nγ)"
            }
            BarrierFlat => "2(p-1)α",
            BarrierTree => "2⌈log2 p⌉α",
            BarrierDissemination => "⌈log2 p⌉α",
            BarrierRecursiveDoubling => "⌊log2 p⌋α + [p≠p']·2α",
        }
    }

    /// One line on what the algorithm does.
    pub fn summary(self) -> &'static str {
        use Algorithm::*;
        match self {
            BcastFlat => "broadcast: the root sends to each process in turn",
            BcastBinomial => "broadcast along a binomial tree",
            BcastPipeline => "broadcast along a chain, the message cut into k segments",
            BcastPipelineOptimal => "pipelined chain with the cost-minimising segment count",
            BcastScatterAllgather => {
                "broadcast as binomial scatter + ring allgather (long messages)"
            }
            ScatterFlat => "scatter: the root sends each process its block in turn",
            ScatterBinomial => "scatter along a binomial tree",
            GatherFlat => "gather: the root receives each block in turn",
            GatherBinomial => "gather along a binomial tree",
            ReduceFlat => "reduce: the root receives and combines each buffer in turn",
            ReduceBinomial => "reduce along a binomial tree",
            ReduceRabenseifner => "reduce as recursive-halving reduce-scatter + binomial gather",
            AllreduceRecursiveDoubling => "allreduce by recursive doubling",
            AllreduceRing => "allreduce as ring reduce-scatter + ring allgather",
            AllreduceRabenseifner => {
                "allreduce as recursive-halving reduce-scatter + recursive-doubling allgather"
            }
            AllgatherRing => "allgather around a ring",
            AllgatherRecursiveDoubling => "allgather by recursive doubling",
            AllgatherBruck => "allgather by Bruck's concatenation (any p)",
            AlltoallPairwise => "alltoall by p-1 pairwise exchanges",
            AlltoallBruck => "alltoall by Bruck's index algorithm (short messages)",
            ReduceScatterRing => "reduce-scatter around a ring",
            ReduceScatterHalving => "reduce-scatter by recursive halving",
            BarrierFlat => "barrier: fan-in to a root, then fan-out",
            BarrierTree => "barrier: binomial fan-in then fan-out",
            BarrierDissemination => "barrier by dissemination (MPICH)",
            BarrierRecursiveDoubling => "barrier by recursive doubling (Open MPI)",
        }
    }

    /// The cost of this collective on `p` processes with `n` bytes.
    ///
    /// `segments` is the segment count of [`Algorithm::BcastPipeline`] (ignored
    /// otherwise); `gamma` the reduction time per byte (zero when `None`).
    ///
    /// ```
    /// use perfcompose_core::comm::{Algorithm, PointToPoint};
    /// use perfcompose_core::model::Expr;
    /// let t = Algorithm::BcastBinomial.cost(
    ///     &PointToPoint::hockney(), &Expr::constant(6.0), &Expr::param("n"), None, None);
    /// // ⌈log2 6⌉ = 3 rounds.
    /// assert_eq!(t.to_string(), "3 * alpha + 3 * beta * n");
    /// ```
    pub fn cost(
        self,
        net: &PointToPoint,
        p: &Expr,
        n: &Expr,
        segments: Option<&Expr>,
        gamma: Option<&Expr>,
    ) -> Expr {
        use Algorithm::*;
        let c = Expr::constant;
        let gamma = gamma.cloned().unwrap_or_else(Expr::zero);
        let reduce = |bytes: Expr| Expr::mul(bytes, gamma.clone());
        let p1 = || Expr::sub(p.clone(), c(1.0));
        let block = || Expr::div(n.clone(), p.clone());
        // Steps and critical-path bytes of the power-of-two core of a
        // recursive-halving/doubling algorithm on p' = 2^⌊log2 p⌋ processes.
        let pp = || pow2_floor(p);
        let frac_pp = || frac(&pp());
        match self {
            BcastFlat => net.sequential_sends(&p1(), n),
            BcastBinomial => binomial_bcast(net, p, n),
            BcastPipeline => {
                let k = segments.cloned().unwrap_or_else(Expr::one);
                pipeline(net, p, n, &k)
            }
            BcastPipelineOptimal => pipeline(net, p, n, &optimal_segments(net, p, n)),
            BcastScatterAllgather => Expr::add(
                ScatterBinomial.cost(net, p, n, None, None),
                AllgatherRing.cost(net, p, n, None, None),
            ),
            ScatterFlat | GatherFlat => net.sequential_sends(&p1(), &block()),
            ScatterBinomial | GatherBinomial | AllgatherBruck => {
                net.linear(&lg_ceil(p), &Expr::mul(frac(p), n.clone()))
            }
            ReduceFlat => Expr::add(
                net.sequential_sends(&p1(), n),
                Expr::mul(p1(), reduce(n.clone())),
            ),
            ReduceBinomial => Expr::mul(lg_ceil(p), Expr::add(net.message(n), reduce(n.clone()))),
            ReduceRabenseifner => Expr::sum_of(vec![
                net.linear(
                    &Expr::mul(c(2.0), lg_floor(p)),
                    &Expr::mul(c(2.0), Expr::mul(frac_pp(), n.clone())),
                ),
                reduce(Expr::mul(frac_pp(), n.clone())),
                // Fold: the extra processes hand their whole buffer to a partner.
                Expr::mul(not_pow2(p), Expr::add(net.message(n), reduce(n.clone()))),
            ]),
            AllreduceRecursiveDoubling => Expr::add(
                Expr::mul(lg_floor(p), Expr::add(net.message(n), reduce(n.clone()))),
                Expr::mul(not_pow2(p), fold_unfold(net, n, n, &reduce(n.clone()))),
            ),
            AllreduceRing => Expr::add(
                net.linear(
                    &Expr::mul(c(2.0), p1()),
                    &Expr::mul(c(2.0), Expr::mul(frac(p), n.clone())),
                ),
                reduce(Expr::mul(frac(p), n.clone())),
            ),
            AllreduceRabenseifner => Expr::sum_of(vec![
                net.linear(
                    &Expr::mul(c(2.0), lg_floor(p)),
                    &Expr::mul(c(2.0), Expr::mul(frac_pp(), n.clone())),
                ),
                reduce(Expr::mul(frac_pp(), n.clone())),
                Expr::mul(not_pow2(p), fold_unfold(net, n, n, &reduce(n.clone()))),
            ]),
            AllgatherRing => net.linear(&p1(), &Expr::mul(frac(p), n.clone())),
            AllgatherRecursiveDoubling => Expr::add(
                net.linear(&lg_floor(p), &Expr::mul(frac(p), n.clone())),
                // Fold hands over one block; unfold returns everything else.
                Expr::mul(
                    not_pow2(p),
                    fold_unfold(net, &block(), &Expr::mul(frac(p), n.clone()), &Expr::zero()),
                ),
            ),
            AlltoallPairwise => Expr::mul(p1(), net.message(&block())),
            AlltoallBruck => bruck_alltoall(net, p, n),
            ReduceScatterRing => Expr::mul(p1(), Expr::add(net.message(&block()), reduce(block()))),
            ReduceScatterHalving => Expr::sum_of(vec![
                net.linear(&lg_floor(p), &Expr::mul(frac_pp(), n.clone())),
                reduce(Expr::mul(frac_pp(), n.clone())),
                Expr::mul(
                    not_pow2(p),
                    fold_unfold(net, n, &block(), &reduce(n.clone())),
                ),
            ]),
            BarrierFlat => Expr::mul(c(2.0), net.sequential_sends(&p1(), &Expr::zero())),
            BarrierTree => Expr::mul(Expr::mul(c(2.0), lg_ceil(p)), net.empty_message()),
            BarrierDissemination => Expr::mul(lg_ceil(p), net.empty_message()),
            BarrierRecursiveDoubling => Expr::mul(
                Expr::add(lg_floor(p), Expr::mul(c(2.0), not_pow2(p))),
                net.empty_message(),
            ),
        }
    }
}

/// Largest process count for which the LogGP binomial tree is played rank by rank.
const MAX_PLAYED_TREE: f64 = 1_048_576.0;

/// Binomial broadcast. Under Hockney a sender is busy for a whole message, and the root's
/// last child, `⌈log2 p⌉` messages after the start, is the last rank served.
///
/// Under LogGP a sender may start its next message after the injection interval
/// `I = max(g, o + (n−1)G) ≤` the message time `T`, so rank `r` is reached at
/// `hops(r)·T + waits(r)·I`, where `waits` counts the earlier children its ancestors served
/// first (MPICH order: largest subtree first; children past `p − 1` do not exist and cost
/// nothing). For a constant `p` the model is the maximum of those arrival times over the
/// ranks — only the undominated `(hops, waits)` pairs are kept — and is exact; for a
/// symbolic `p` it is `⌈log2 p⌉·T`, exact when `I = T` and an upper bound otherwise.
fn binomial_bcast(net: &PointToPoint, p: &Expr, n: &Expr) -> Expr {
    let rounds = Expr::mul(lg_ceil(p), net.message(n));
    let PointToPoint::LogGP { .. } = net else {
        return rounds;
    };
    let Some(pv) = p.as_constant() else {
        return rounds;
    };
    if !(pv.fract() == 0.0 && (1.0..=MAX_PLAYED_TREE).contains(&pv)) {
        return rounds;
    }
    let p = pv as u64;
    let top = p.next_power_of_two().trailing_zeros();
    // (hops, waits) of every rank, walking the tree from the root.
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    let mut stack = vec![(0u64, top, 0u64, 0u64)]; // (rank, child bits, hops, waits)
    while let Some((r, bits, hops, waits)) = stack.pop() {
        if r > 0 {
            pairs.push((hops, waits));
        }
        let mut served = 0;
        for k in (0..bits).rev() {
            let child = r + (1u64 << k);
            if child < p {
                stack.push((child, k, hops + 1, waits + served));
                served += 1;
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    // With T ≥ 0 and I ≥ 0, a pair with no more hops and no more waits than another never
    // arrives later.
    let undominated: Vec<(u64, u64)> = pairs
        .iter()
        .copied()
        .filter(|&(h, w)| {
            !pairs
                .iter()
                .any(|&(h2, w2)| (h2, w2) != (h, w) && h2 >= h && w2 >= w)
        })
        .collect();
    let t = net.message(n);
    let i = net.injection_interval(n);
    Expr::max_of(
        undominated
            .into_iter()
            .map(|(h, w)| {
                Expr::add(
                    Expr::mul(Expr::constant(h as f64), t.clone()),
                    Expr::mul(Expr::constant(w as f64), i.clone()),
                )
            })
            .collect(),
    )
}

/// `⌈log2 p⌉`: rounds of a binomial tree, of dissemination, of Bruck.
pub fn lg_ceil(p: &Expr) -> Expr {
    Expr::ceil(Expr::log2(p.clone()))
}

/// `⌊log2 p⌋`: rounds of recursive doubling on the largest power of two `≤ p`.
pub fn lg_floor(p: &Expr) -> Expr {
    Expr::floor(Expr::log2(p.clone()))
}

/// `p' = 2^⌊log2 p⌋`, the largest power of two not above `p`.
pub fn pow2_floor(p: &Expr) -> Expr {
    Expr::pow_expr(Expr::constant(2.0), lg_floor(p))
}

/// `1` when `p` is not a power of two, else `0` (for integer `p ≥ 1`): `min(1, p − p')`.
pub fn not_pow2(p: &Expr) -> Expr {
    Expr::min(Expr::one(), Expr::sub(p.clone(), pow2_floor(p)))
}

/// `(p − 1)/p`.
fn frac(p: &Expr) -> Expr {
    Expr::div(Expr::sub(p.clone(), Expr::one()), p.clone())
}

/// The two extra steps of a recursive algorithm on a non-power-of-two count: a fold
/// message of `in_bytes` (plus its reduction) and an unfold message of `out_bytes`.
fn fold_unfold(net: &PointToPoint, in_bytes: &Expr, out_bytes: &Expr, reduction: &Expr) -> Expr {
    Expr::sum_of(vec![
        net.message(in_bytes),
        reduction.clone(),
        net.message(out_bytes),
    ])
}

/// Pipelined chain: the first of `k` segments needs `p − 1` hops to reach the end, the
/// other `k − 1` follow one stage apart.
/// A single process has nothing to send: the cost is multiplied by `min(1, p − 1)`.
fn pipeline(net: &PointToPoint, p: &Expr, n: &Expr, k: &Expr) -> Expr {
    let stages = Expr::sub(Expr::add(p.clone(), k.clone()), Expr::constant(2.0));
    let active = Expr::min(Expr::one(), Expr::sub(p.clone(), Expr::one()));
    Expr::product_of(vec![
        active,
        stages,
        net.message(&Expr::div(n.clone(), k.clone())),
    ])
}

/// The segment count minimising the pipelined chain's cost:
/// `k* = max(1, √((p − 2)·n·β / α))` with the model's start-up `α` and per-byte `β`
/// (continuous optimum; real implementations round it to a segment size).
pub fn optimal_segments(net: &PointToPoint, p: &Expr, n: &Expr) -> Expr {
    let hops = Expr::max(Expr::zero(), Expr::sub(p.clone(), Expr::constant(2.0)));
    let ratio = Expr::div(
        Expr::product_of(vec![hops, n.clone(), net.per_byte()]),
        net.startup(),
    );
    Expr::max(Expr::one(), Expr::pow(ratio, Q::new(1, 2)))
}

/// The segment size of the optimal pipelined chain, `n / k*`.
pub fn optimal_segment_size(net: &PointToPoint, p: &Expr, n: &Expr) -> Expr {
    Expr::div(n.clone(), optimal_segments(net, p, n))
}

/// A variable name for a sum that none of `exprs` mentions (no capture).
fn fresh_var(base: &str, exprs: &[&Expr]) -> String {
    std::iter::once(base.to_string())
        .chain((1..).map(|i| format!("{base}_{i}")))
        .find(|v| exprs.iter().all(|e| !e.mentions(v)))
        .unwrap_or_else(|| base.to_string())
}

/// Bruck's alltoall: in step `k` each process sends the blocks whose (relative) index has
/// bit `k` set, `c_k` of them; `c_k = ⌊p/2^(k+1)⌋·2^k + max(0, p mod 2^(k+1) − 2^k)`.
fn bruck_alltoall(net: &PointToPoint, p: &Expr, n: &Expr) -> Expr {
    let k = fresh_var("k", &[p, n]);
    let two = || Expr::constant(2.0);
    let pow2 = |e: Expr| Expr::pow_expr(two(), e);
    let kk = Expr::param(&k);
    let period = pow2(Expr::add(kk.clone(), Expr::one())); // 2^(k+1)
    let half = pow2(kk); // 2^k
    let full = Expr::floor(Expr::div(p.clone(), period.clone()));
    let rem = Expr::sub(p.clone(), Expr::mul(full.clone(), period));
    let count = Expr::add(
        Expr::mul(full, half.clone()),
        Expr::max(Expr::zero(), Expr::sub(rem, half)),
    );
    let bytes = Expr::mul(count, Expr::div(n.clone(), p.clone()));
    let body = net.linear(&Expr::one(), &bytes);
    Expr::sum_over(&k, Expr::zero(), Expr::sub(lg_ceil(p), Expr::one()), body)
}

#[cfg(test)]
mod tests;
