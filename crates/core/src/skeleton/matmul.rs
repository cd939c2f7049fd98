//! The matrix-multiplication paper: parallel matrix multiplication (Fox's broadcast–multiply–roll algorithm) on a
//! `√N × √N` mesh of processes, for a dataflow runtime (Dryad) and for MPI.
//!
//! `M × M` matrices are split into `m × m` blocks, `m = M/√N`. Each of the `√N`
//! iterations broadcasts a block of A along each mesh row, multiplies (`2m³` flops) and
//! rolls B one step up its column. The paper's model (its eqs. 1–10):
//!
//! * broadcast, averaged over the iterations: because a process starts multiplying as
//!   soon as its block arrives, over the `√N` iterations it waits on average for half a
//!   broadcast (eq. 1: `(√N−1)/2 · (T_startup + m²·T_comm)` for Dryad's flat tree);
//! * roll: one message (eq. 2); compute: `2m³·T_flops` (eq. 3);
//! * Dryad also pays `(N+1)/2 · T_sched` per iteration to schedule its tasks.
//!
//! Two families of models live here:
//!
//! * **the paper's printed equations** — [`Matmul::dataflow`] (eq. 5) and
//!   [`Matmul::mpi_binomial`] (eq. 9), with parallel efficiency and overhead (eqs. 6, 7,
//!   10), and their pieces: [`Matmul::dataflow_broadcast_average`] (eq. 1),
//!   [`Matmul::roll`] (eq. 2), [`Matmul::block_multiply`] (eq. 3),
//!   [`Matmul::mpi_broadcast_average`] (eq. 8). These reproduce the paper's Table 3.
//! * **the same derivation for any broadcast algorithm** — [`Matmul::fox`], built from
//!   [`crate::comm`]'s cost formulas: `√N · [(N+1)/2·T_sched + ½·B(√N, m²) + R(m²) +
//!   2m³·T_flops]` with `B` the broadcast and `R = α + m²β` the roll. With the flat
//!   tree and no start-up cost it *is* eq. 5. With the binomial tree it gives an `M²`
//!   coefficient of `(⌈log2 √N⌉ + 2)/(2√N)` where the paper's eq. 9 prints
//!   `(1 + ⌈log2 √N⌉)/(2√N)`: eq. 9 does not follow from eqs. 2 and 8 as printed, and we
//!   keep both rather than pick silently (see `docs/communication.md`).
//!
//! Units follow the seed: `T_comm` is seconds per matrix *element* moved (for Dryad it is
//! `T_io + T_comm`, the file-pipe cost included), `T_flops` seconds per flop.

use crate::comm::{lg_ceil, Algorithm, PointToPoint};
use crate::model::{Expr, Q};

/// Default names of the machine parameters.
pub mod names {
    pub const PROCS: &str = "N";
    pub const ORDER: &str = "M";
    /// Scheduling one Dryad task (seconds).
    pub const T_SCHED: &str = "T_sched";
    /// Start-up of one message (seconds).
    pub const T_STARTUP: &str = "T_startup";
    /// Moving one matrix element (seconds), `T_io + T_comm` for Dryad.
    pub const T_COMM: &str = "T_comm";
    /// One floating-point operation (seconds).
    pub const T_FLOPS: &str = "T_flops";
}

/// The inputs of the matrix-multiplication models, each a model itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Matmul {
    /// Number of processes `N` (a perfect square).
    pub procs: Expr,
    /// Matrix order `M`.
    pub order: Expr,
    pub t_sched: Expr,
    pub t_startup: Expr,
    pub t_comm: Expr,
    pub t_flops: Expr,
}

impl Default for Matmul {
    fn default() -> Matmul {
        Matmul::symbolic()
    }
}

impl Matmul {
    /// Every input a free parameter (`N`, `M`, `T_sched`, `T_startup`, `T_comm`,
    /// `T_flops`).
    pub fn symbolic() -> Matmul {
        Matmul {
            procs: Expr::param(names::PROCS),
            order: Expr::param(names::ORDER),
            t_sched: Expr::param(names::T_SCHED),
            t_startup: Expr::param(names::T_STARTUP),
            t_comm: Expr::param(names::T_COMM),
            t_flops: Expr::param(names::T_FLOPS),
        }
    }

    /// `q = √N`, the mesh side.
    pub fn side(&self) -> Expr {
        Expr::pow(self.procs.clone(), Q::new(1, 2))
    }

    /// `m² = M²/N`, elements of one block.
    pub fn block_elements(&self) -> Expr {
        Expr::div(
            Expr::pow(self.order.clone(), Q::from_integer(2)),
            self.procs.clone(),
        )
    }

    /// The parallel compute time `2·M³/N·T_flops`.
    fn compute(&self) -> Expr {
        Expr::product_of(vec![
            Expr::constant(2.0),
            Expr::div(
                Expr::pow(self.order.clone(), Q::from_integer(3)),
                self.procs.clone(),
            ),
            self.t_flops.clone(),
        ])
    }

    /// The scheduling term `√N·(N+1)/2·T_sched` (Dryad).
    fn scheduling(&self) -> Expr {
        Expr::product_of(vec![
            self.side(),
            Expr::div(
                Expr::add(self.procs.clone(), Expr::one()),
                Expr::constant(2.0),
            ),
            self.t_sched.clone(),
        ])
    }

    /// Sequential time `T(1) = 2·M³·T_flops`.
    pub fn sequential(&self) -> Expr {
        Expr::product_of(vec![
            Expr::constant(2.0),
            Expr::pow(self.order.clone(), Q::from_integer(3)),
            self.t_flops.clone(),
        ])
    }

    /// The matrix-multiplication paper's eq. 1: Dryad's flat-tree broadcast of one block along a mesh row,
    /// averaged over the iterations: `(√N−1)/2 · (T_startup + m²·T_comm)`.
    pub fn dataflow_broadcast_average(&self) -> Expr {
        let q = self.side();
        Expr::mul(
            Expr::div(Expr::sub(q, Expr::one()), Expr::constant(2.0)),
            Expr::add(
                self.t_startup.clone(),
                Expr::mul(self.block_elements(), self.t_comm.clone()),
            ),
        )
    }

    /// The matrix-multiplication paper's eq. 8: MPI's binomial broadcast averaged over the iterations:
    /// `(√N−1)/2 · T_startup + ⌈log2 √N⌉/2 · m²·T_comm`.
    pub fn mpi_broadcast_average(&self) -> Expr {
        let q = self.side();
        Expr::add(
            Expr::mul(
                Expr::div(Expr::sub(q.clone(), Expr::one()), Expr::constant(2.0)),
                self.t_startup.clone(),
            ),
            Expr::product_of(vec![
                Expr::div(lg_ceil(&q), Expr::constant(2.0)),
                self.block_elements(),
                self.t_comm.clone(),
            ]),
        )
    }

    /// The matrix-multiplication paper's eq. 2: rolling a block of B one step, `T_startup + m²·T_comm`.
    pub fn roll(&self) -> Expr {
        Expr::add(
            self.t_startup.clone(),
            Expr::mul(self.block_elements(), self.t_comm.clone()),
        )
    }

    /// The matrix-multiplication paper's eq. 3: one block product, `2m³·T_flops`.
    pub fn block_multiply(&self) -> Expr {
        Expr::product_of(vec![
            Expr::constant(2.0),
            Expr::pow(self.block_elements(), Q::new(3, 2)),
            self.t_flops.clone(),
        ])
    }

    /// The matrix-multiplication paper's eq. 5, Dryad (flat-tree broadcast through file pipes):
    /// `√N(N+1)/2·T_sched + (√N+1)M²/(2√N)·T_comm + 2M³/N·T_flops`.
    pub fn dataflow(&self) -> Expr {
        let q = self.side();
        let comm = Expr::product_of(vec![
            Expr::div(
                Expr::add(q.clone(), Expr::one()),
                Expr::mul(Expr::constant(2.0), q),
            ),
            Expr::pow(self.order.clone(), Q::from_integer(2)),
            self.t_comm.clone(),
        ]);
        Expr::sum_of(vec![self.scheduling(), comm, self.compute()])
    }

    /// The matrix-multiplication paper's eq. 9, MPI with a binomial-tree broadcast:
    /// `√N(N+1)/2·T_sched + M²(1 + ⌈log2 √N⌉)/(2√N)·T_comm + 2M³/N·T_flops`.
    ///
    /// The seed writes `log2 √N`; its Table 3 (25 processes, `√N = 5`) is computed with
    /// `⌈log2 5⌉ = 3` rounds, which is also what a binomial tree takes.
    pub fn mpi_binomial(&self) -> Expr {
        let q = self.side();
        let comm = Expr::product_of(vec![
            Expr::div(
                Expr::add(Expr::one(), lg_ceil(&q)),
                Expr::mul(Expr::constant(2.0), q),
            ),
            Expr::pow(self.order.clone(), Q::from_integer(2)),
            self.t_comm.clone(),
        ]);
        Expr::sum_of(vec![self.scheduling(), comm, self.compute()])
    }

    /// The paper's derivation with any broadcast algorithm `bcast` (a `Bcast*` variant)
    /// under Hockney with `α = T_startup`, `β = T_comm` per element:
    /// `√N · [(N+1)/2·T_sched + ½·B(√N, m²) + (α + m²β) + 2m³·T_flops]`.
    /// `segments` is used by [`Algorithm::BcastPipeline`] only.
    ///
    /// Returns `None` when `bcast` is not a broadcast.
    pub fn fox(&self, bcast: Algorithm, segments: Option<&Expr>) -> Option<Expr> {
        use Algorithm::*;
        if !matches!(
            bcast,
            BcastFlat
                | BcastBinomial
                | BcastPipeline
                | BcastPipelineOptimal
                | BcastScatterAllgather
        ) {
            return None;
        }
        let net = PointToPoint::hockney_with(self.t_startup.clone(), self.t_comm.clone());
        let q = self.side();
        let m2 = self.block_elements();
        let half_bcast = Expr::div(
            bcast.cost(&net, &q, &m2, segments, None),
            Expr::constant(2.0),
        );
        let roll = net.message(&m2);
        let per_iteration = Expr::sum_of(vec![half_bcast, roll]);
        Some(Expr::sum_of(vec![
            self.scheduling(),
            Expr::mul(q, per_iteration),
            self.compute(),
        ]))
    }

    /// Parallel efficiency `ε = T(1) / (N·T(N))` of a model `t` of this multiplication
    /// (eq. 6, exact rather than its large-matrix approximation).
    pub fn efficiency(&self, t: &Expr) -> Expr {
        Expr::div(self.sequential(), Expr::mul(self.procs.clone(), t.clone()))
    }

    /// Parallel overhead `f = 1/ε − 1 = N·T(N)/T(1) − 1`.
    pub fn overhead(&self, t: &Expr) -> Expr {
        Expr::sub(
            Expr::div(Expr::mul(self.procs.clone(), t.clone()), self.sequential()),
            Expr::one(),
        )
    }

    /// Seed eq. 7, Dryad's overhead for large matrices:
    /// `f ≈ √N(√N+1)/(4M) · T_comm/T_flops`.
    pub fn dataflow_overhead_approx(&self) -> Expr {
        let q = self.side();
        self.overhead_rate(Expr::add(q, Expr::one()))
    }

    /// Seed eq. 10, MPI's overhead for large matrices:
    /// `f ≈ √N(1 + ⌈log2 √N⌉)/(4M) · T_comm/T_flops`.
    pub fn mpi_overhead_approx(&self) -> Expr {
        self.overhead_rate(Expr::add(Expr::one(), lg_ceil(&self.side())))
    }

    fn overhead_rate(&self, factor: Expr) -> Expr {
        Expr::product_of(vec![
            self.side(),
            factor,
            Expr::div(
                self.t_comm.clone(),
                Expr::product_of(vec![
                    Expr::constant(4.0),
                    self.order.clone(),
                    self.t_flops.clone(),
                ]),
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: f64 = 1e-12;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= TOL * a.abs().max(b.abs())
    }

    fn env(n: f64, m: f64) -> Vec<(String, f64)> {
        [
            ("N", n),
            ("M", m),
            ("T_sched", 0.3),
            ("T_startup", 1e-4),
            ("T_comm", 1.0 / 8.87e6),
            ("T_flops", 1.0 / 8.64e9),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
    }

    #[test]
    fn eq5_matches_eq4_term_by_term() {
        // Eq. 4: √N·{(N+1)/2·T_sched + (√N+1)/2·m²·T_comm + 2m³·T_flops}.
        let mm = Matmul::symbolic();
        for (n, m) in [(25.0, 30_000.0), (100.0, 12_000.0), (16.0, 4096.0)] {
            let e = env(n, m);
            let q: f64 = f64::sqrt(n);
            let b = m / q;
            let get = |k: &str| e.iter().find(|(n, _)| n == k).unwrap().1;
            let eq4 = q
                * ((n + 1.0) / 2.0 * get("T_sched")
                    + (q + 1.0) / 2.0 * b * b * get("T_comm")
                    + 2.0 * b * b * b * get("T_flops"));
            let got = mm.dataflow().eval(&e).unwrap();
            assert!(close(got, eq4), "{got} vs {eq4}");
        }
    }

    #[test]
    fn eq4_is_sqrt_n_times_the_per_iteration_pieces() {
        // Eq. 4 = √N·{(N+1)/2·T_sched + eq. 1 + eq. 2 + eq. 3} with the start-ups
        // dropped, as the paper drops them.
        let mut mm = Matmul::symbolic();
        mm.t_startup = Expr::zero();
        let per_iteration = Expr::sum_of(vec![
            Expr::mul(
                Expr::div(
                    Expr::add(mm.procs.clone(), Expr::one()),
                    Expr::constant(2.0),
                ),
                mm.t_sched.clone(),
            ),
            mm.dataflow_broadcast_average(),
            mm.roll(),
            mm.block_multiply(),
        ]);
        let eq4 = Expr::mul(mm.side(), per_iteration);
        for (n, m) in [(25.0, 30_000.0), (100.0, 12_000.0)] {
            let e = env(n, m);
            assert!(close(
                eq4.eval(&e).unwrap(),
                mm.dataflow().eval(&e).unwrap()
            ));
        }
        // Eq. 8 at 25 processes: 2 start-ups and 3/2 blocks.
        let e = env(25.0, 30_000.0);
        let b = (30_000.0f64 / 5.0).powi(2) / 8.87e6;
        let want = 2.0 * 1e-4 + 1.5 * b;
        let got = Matmul::symbolic().mpi_broadcast_average().eval(&e).unwrap();
        assert!(close(got, want), "{got} vs {want}");
    }

    #[test]
    fn fox_flat_without_startup_is_eq5() {
        let mut mm = Matmul::symbolic();
        mm.t_startup = Expr::zero();
        let fox = mm.fox(Algorithm::BcastFlat, None).unwrap();
        for (n, m) in [(25.0, 30_000.0), (100.0, 12_000.0), (4.0, 1000.0)] {
            let e = env(n, m);
            assert!(close(
                fox.eval(&e).unwrap(),
                mm.dataflow().eval(&e).unwrap()
            ));
        }
        // With start-ups it adds exactly √N(√N+1)/2·T_startup, the term the paper drops.
        let with = Matmul::symbolic().fox(Algorithm::BcastFlat, None).unwrap();
        let e = env(25.0, 30_000.0);
        let extra = with.eval(&e).unwrap() - mm.dataflow().eval(&e).unwrap();
        assert!((extra - 5.0 * 6.0 / 2.0 * 1e-4).abs() < 1e-9);
    }

    #[test]
    fn fox_binomial_differs_from_eq9_by_one_half_block_per_iteration() {
        let mut mm = Matmul::symbolic();
        mm.t_startup = Expr::zero();
        let fox = mm.fox(Algorithm::BcastBinomial, None).unwrap();
        let e = env(25.0, 30_000.0);
        let diff = fox.eval(&e).unwrap() - mm.mpi_binomial().eval(&e).unwrap();
        // (⌈log2 5⌉ + 2)/10 − (1 + ⌈log2 5⌉)/10 = 1/10 of M²·T_comm.
        let want = 0.1 * 30_000f64.powi(2) / 8.87e6;
        assert!((diff - want).abs() < 1e-9 * want, "{diff} vs {want}");
    }

    #[test]
    fn overhead_is_consistent_with_efficiency_and_eq7() {
        let mut mm = Matmul::symbolic();
        mm.t_sched = Expr::zero();
        let t = mm.dataflow();
        let e = env(25.0, 30_000.0);
        let eff = mm.efficiency(&t).eval(&e).unwrap();
        let f = mm.overhead(&t).eval(&e).unwrap();
        assert!(close(f, 1.0 / eff - 1.0));
        // Without scheduling, eq. 7 is exact.
        let approx = mm.dataflow_overhead_approx().eval(&e).unwrap();
        assert!(close(f, approx), "{f} vs {approx}");
        let t = mm.mpi_binomial();
        let f = mm.overhead(&t).eval(&e).unwrap();
        assert!(close(f, mm.mpi_overhead_approx().eval(&e).unwrap()));
    }

    #[test]
    fn fox_rejects_non_broadcasts_and_covers_every_broadcast() {
        let mm = Matmul::symbolic();
        assert!(mm.fox(Algorithm::AllreduceRing, None).is_none());
        let k = Expr::constant(4.0);
        let e = env(36.0, 6000.0);
        let mut times = Vec::new();
        for a in [
            Algorithm::BcastFlat,
            Algorithm::BcastBinomial,
            Algorithm::BcastPipeline,
            Algorithm::BcastPipelineOptimal,
            Algorithm::BcastScatterAllgather,
        ] {
            let t = mm.fox(a, Some(&k)).unwrap().eval(&e).unwrap();
            assert!(t.is_finite() && t > 0.0);
            times.push(t);
        }
        // On 6 processes per row the flat tree is the slowest broadcast.
        assert!(times[1..].iter().all(|&t| t < times[0]));
    }
}
