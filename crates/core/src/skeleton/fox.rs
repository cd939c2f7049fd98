//! The matrix-multiplication paper's Fox algorithm composed from block models: what the `matmul(...)` term
//! composes to. [`super::Matmul::fox`] writes the same derivation with the machine
//! parameters `T_startup`, `T_comm`, `T_flops`; here the block product and the message
//! are models of their own (fitted from unit tests, or a calibrated network), so that
//! `matmul(mult, procs=P, message=msg, bcast=B)` is
//!
//! ```text
//! q = √P, m = x/q, b = bytes(m)
//! T(x) = q · [ ½·B(q, b) + [q > 1]·msg(b) + mult(m) ]
//! B_flat(q, b)     = (q − 1)·msg(b)
//! B_binomial(q, b) = ⌈log2 q⌉·msg(b)
//! B_pipeline(q, b) = [q > 1]·(q + k − 2)·msg(b/k)
//! ```
//!
//! With `msg(n) = α + β·n` these are the Hockney costs of [`crate::comm::Algorithm`],
//! and with `mult(m) = 2m³·T_flops`, `bytes(m) = m²` the whole is `Matmul::fox` (a
//! 1 × 1 mesh sends nothing, where the paper's formula keeps one roll).

use crate::comm::{lg_ceil, Algorithm};
use crate::model::{Expr, Q};

/// The blocks of Fox's algorithm, each a model in its own `x`.
#[derive(Clone, Debug, PartialEq)]
pub struct FoxBlocks {
    /// `P`, a perfect square.
    pub procs: Expr,
    /// One block product `C += A·B`; `x` is the block order.
    pub multiply: Expr,
    /// One point-to-point message; `x` is the bytes sent.
    pub message: Expr,
    /// The bytes of a block; `x` is the block order.
    pub bytes: Expr,
    /// [`Algorithm::BcastFlat`], [`Algorithm::BcastBinomial`] or
    /// [`Algorithm::BcastPipeline`].
    pub bcast: Algorithm,
    /// Segments of a pipelined broadcast.
    pub segments: Option<Expr>,
}

/// The default size of a block of order `x`: `8·x²` bytes (doubles).
pub fn double_block_bytes() -> Expr {
    Expr::mul(
        Expr::constant(8.0),
        Expr::pow(Expr::param("x"), Q::from_integer(2)),
    )
}

impl FoxBlocks {
    /// The time of one multiplication of matrices of order `x`, or `None` when `bcast`
    /// is not one of the three broadcasts.
    pub fn model(&self) -> Option<Expr> {
        let x = Expr::param("x");
        let q = Expr::pow(self.procs.clone(), Q::new(1, 2));
        let m = Expr::div(x, q.clone());
        let b = self.bytes.subst("x", &m);
        let msg = |n: &Expr| self.message.subst("x", n);
        // 1 when the mesh has more than one process per row, else 0.
        let sends = Expr::min(Expr::one(), Expr::sub(q.clone(), Expr::one()));
        let bcast = match self.bcast {
            Algorithm::BcastFlat => Expr::mul(Expr::sub(q.clone(), Expr::one()), msg(&b)),
            Algorithm::BcastBinomial => Expr::mul(lg_ceil(&q), msg(&b)),
            Algorithm::BcastPipeline => {
                let k = self.segments.clone().unwrap_or_else(Expr::one);
                Expr::product_of(vec![
                    sends.clone(),
                    Expr::sub(Expr::add(q.clone(), k.clone()), Expr::constant(2.0)),
                    msg(&Expr::div(b.clone(), k)),
                ])
            }
            _ => return None,
        };
        let per_iteration = Expr::sum_of(vec![
            Expr::div(bcast, Expr::constant(2.0)),
            Expr::mul(sends, msg(&b)),
            self.multiply.subst("x", &m),
        ]);
        Some(Expr::mul(q, per_iteration))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;
    use crate::skeleton::Matmul;

    fn env(n: f64, m: f64) -> Vec<(String, f64)> {
        [
            ("N", n),
            ("M", m),
            ("x", m),
            ("T_sched", 0.0),
            ("T_startup", 2e-5),
            ("T_comm", 1.0 / 8.87e6),
            ("T_flops", 1.0 / 8.64e9),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
    }

    fn blocks(n: f64, bcast: Algorithm, segments: Option<Expr>) -> FoxBlocks {
        FoxBlocks {
            procs: Expr::constant(n),
            multiply: parse_model("2 * x^3 * T_flops").unwrap(),
            message: parse_model("T_startup + T_comm * x").unwrap(),
            bytes: parse_model("x^2").unwrap(),
            bcast,
            segments,
        }
    }

    #[test]
    fn with_the_seeds_blocks_it_is_the_seeds_fox_model() {
        let k = Expr::constant(4.0);
        for (n, m) in [(4.0, 1024.0), (25.0, 30_000.0), (36.0, 6000.0)] {
            for (bcast, seg) in [
                (Algorithm::BcastFlat, None),
                (Algorithm::BcastBinomial, None),
                (Algorithm::BcastPipeline, Some(k.clone())),
            ] {
                let got = blocks(n, bcast, seg.clone())
                    .model()
                    .unwrap()
                    .eval(&env(n, m))
                    .unwrap();
                let want = Matmul::symbolic()
                    .fox(bcast, seg.as_ref())
                    .unwrap()
                    .eval(&env(n, m))
                    .unwrap();
                assert!(
                    (got - want).abs() <= 1e-12 * want,
                    "{bcast:?} at N = {n}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn a_single_process_only_multiplies() {
        let t = blocks(1.0, Algorithm::BcastBinomial, None).model().unwrap();
        let e = env(1.0, 512.0);
        let want = 2.0 * 512f64.powi(3) / 8.64e9;
        assert!((t.eval(&e).unwrap() - want).abs() < 1e-12 * want);
    }

    #[test]
    fn only_broadcasts_are_accepted() {
        assert!(blocks(4.0, Algorithm::AllreduceRing, None)
            .model()
            .is_none());
    }
}
