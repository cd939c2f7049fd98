//! Point-to-point message costs: Hockney and LogGP.
//!
//! Every collective algorithm in [`super::collective`] is written against the three
//! questions asked here — how long one message takes end to end, how soon a process can
//! start its next send, and the equivalent start-up/per-byte split — so each algorithm
//! exists once and works with either model.

use crate::model::Expr;

/// Default names of the machine parameters, as free parameters of the models.
pub mod names {
    /// Hockney start-up time (seconds).
    pub const ALPHA: &str = "alpha";
    /// Hockney time per byte (seconds per byte).
    pub const BETA: &str = "beta";
    /// Reduction time per byte (seconds per byte), for reduce/allreduce/reduce-scatter.
    pub const GAMMA: &str = "gamma";
    /// LogGP latency.
    pub const L: &str = "L";
    /// LogGP per-message CPU overhead (paid by sender and receiver).
    pub const O: &str = "o";
    /// LogGP gap between consecutive message injections.
    pub const G_SHORT: &str = "g";
    /// LogGP gap per byte of a long message.
    pub const G_LONG: &str = "G";
}

/// A point-to-point cost model whose machine parameters are models themselves: free
/// parameters (`alpha`), constants from a calibration, or anything in between.
#[derive(Clone, Debug, PartialEq)]
pub enum PointToPoint {
    /// Hockney: a message of `n` bytes takes `α + β·n`; a sender is busy for all of it.
    Hockney { alpha: Expr, beta: Expr },
    /// LogGP (Alexandrov et al. 1995): a message of `n ≥ 1` bytes takes
    /// `o + (n−1)·G + L + o`; a sender may start its next message after
    /// `max(g, o + (n−1)·G)`.
    LogGP {
        latency: Expr,
        overhead: Expr,
        gap: Expr,
        gap_per_byte: Expr,
    },
}

impl PointToPoint {
    /// Hockney with the free parameters `alpha` and `beta`.
    pub fn hockney() -> PointToPoint {
        PointToPoint::Hockney {
            alpha: Expr::param(names::ALPHA),
            beta: Expr::param(names::BETA),
        }
    }

    /// Hockney with given start-up and per-byte costs.
    pub fn hockney_with(alpha: Expr, beta: Expr) -> PointToPoint {
        PointToPoint::Hockney { alpha, beta }
    }

    /// LogGP with the free parameters `L`, `o`, `g`, `G`.
    pub fn loggp() -> PointToPoint {
        PointToPoint::LogGP {
            latency: Expr::param(names::L),
            overhead: Expr::param(names::O),
            gap: Expr::param(names::G_SHORT),
            gap_per_byte: Expr::param(names::G_LONG),
        }
    }

    /// LogGP with given `L`, `o`, `g`, `G`.
    pub fn loggp_with(
        latency: Expr,
        overhead: Expr,
        gap: Expr,
        gap_per_byte: Expr,
    ) -> PointToPoint {
        PointToPoint::LogGP {
            latency,
            overhead,
            gap,
            gap_per_byte,
        }
    }

    /// `(n − 1)·G` for LogGP; a constant size of at most one byte (a barrier's empty
    /// message) has no per-byte part. Sizes are otherwise taken to be at least one byte.
    fn long_part(gap_per_byte: &Expr, bytes: &Expr) -> Expr {
        match bytes.as_constant() {
            Some(n) if n <= 1.0 => Expr::zero(),
            _ => Expr::mul(gap_per_byte.clone(), Expr::sub(bytes.clone(), Expr::one())),
        }
    }

    /// Time from the start of a send until a message of `bytes` has been received
    /// (one hop, no contention).
    ///
    /// ```
    /// use perfcompose_core::comm::PointToPoint;
    /// use perfcompose_core::model::Expr;
    /// let t = PointToPoint::hockney().message(&Expr::param("n"));
    /// assert_eq!(t.to_string(), "alpha + beta * n");
    /// ```
    pub fn message(&self, bytes: &Expr) -> Expr {
        match self {
            PointToPoint::Hockney { alpha, beta } => {
                Expr::add(alpha.clone(), Expr::mul(beta.clone(), bytes.clone()))
            }
            PointToPoint::LogGP {
                latency,
                overhead,
                gap_per_byte,
                ..
            } => Expr::sum_of(vec![
                latency.clone(),
                Expr::mul(Expr::constant(2.0), overhead.clone()),
                PointToPoint::long_part(gap_per_byte, bytes),
            ]),
        }
    }

    /// Minimum interval between the starts of two consecutive sends of `bytes` from one
    /// process (Hockney: the whole message; LogGP: `max(g, o + (n−1)·G)`).
    pub fn injection_interval(&self, bytes: &Expr) -> Expr {
        match self {
            PointToPoint::Hockney { .. } => self.message(bytes),
            PointToPoint::LogGP {
                overhead,
                gap,
                gap_per_byte,
                ..
            } => Expr::max(
                gap.clone(),
                Expr::add(
                    overhead.clone(),
                    PointToPoint::long_part(gap_per_byte, bytes),
                ),
            ),
        }
    }

    /// Time for one process to send `count` messages of `bytes` back to back until the
    /// last one has arrived: `(count − 1)·interval + message` (Hockney:
    /// `count·(α + β·n)`).
    pub fn sequential_sends(&self, count: &Expr, bytes: &Expr) -> Expr {
        match self {
            PointToPoint::Hockney { .. } => Expr::mul(count.clone(), self.message(bytes)),
            // No sends cost nothing: the LogGP form is multiplied by `min(1, count)`.
            PointToPoint::LogGP { .. } => Expr::mul(
                Expr::min(Expr::one(), count.clone()),
                Expr::add(
                    Expr::mul(
                        Expr::sub(count.clone(), Expr::one()),
                        self.injection_interval(bytes),
                    ),
                    self.message(bytes),
                ),
            ),
        }
    }

    /// The start-up part of a message, so that `message(n) = startup + n·per_byte` for
    /// sizes of at least one byte (LogGP: `L + 2·o − G`).
    pub fn startup(&self) -> Expr {
        match self {
            PointToPoint::Hockney { alpha, .. } => alpha.clone(),
            PointToPoint::LogGP {
                latency,
                overhead,
                gap_per_byte,
                ..
            } => Expr::sum_of(vec![
                latency.clone(),
                Expr::mul(Expr::constant(2.0), overhead.clone()),
                Expr::neg(gap_per_byte.clone()),
            ]),
        }
    }

    /// The per-byte part of a message (Hockney `β`, LogGP `G`).
    pub fn per_byte(&self) -> Expr {
        match self {
            PointToPoint::Hockney { beta, .. } => beta.clone(),
            PointToPoint::LogGP { gap_per_byte, .. } => gap_per_byte.clone(),
        }
    }

    /// `steps` start-ups plus `bytes` on the critical path: the cost of an algorithm
    /// made of `steps` rounds that move `bytes` in total along its critical path.
    pub fn linear(&self, steps: &Expr, bytes: &Expr) -> Expr {
        Expr::add(
            Expr::mul(steps.clone(), self.startup()),
            Expr::mul(bytes.clone(), self.per_byte()),
        )
    }

    /// The cost of a message carrying no data (synchronisation only).
    pub fn empty_message(&self) -> Expr {
        self.message(&Expr::zero())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formulas are compared after evaluation; operation order may differ in the last bits.
    const TOL: f64 = 1e-12;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= TOL * a.abs().max(b.abs()).max(1e-300)
    }

    #[test]
    fn hockney_is_alpha_plus_beta_n() {
        let h = PointToPoint::hockney();
        let t = h.message(&Expr::constant(1000.0));
        let v = t.eval_at(&[("alpha", 2e-6), ("beta", 1e-9)]).unwrap();
        assert!(close(v, 2e-6 + 1e-6), "{v}");
        assert_eq!(t.to_string(), "alpha + 1000 * beta");
        assert_eq!(h.empty_message().to_string(), "alpha");
        assert_eq!(
            h.sequential_sends(&Expr::constant(3.0), &Expr::param("n"))
                .to_string(),
            "3 * alpha + 3 * beta * n"
        );
    }

    #[test]
    fn loggp_message_interval_and_split() {
        let l = PointToPoint::loggp();
        let env = [("L", 5e-6), ("o", 1e-6), ("g", 4e-6), ("G", 1e-9)];
        // 1001 bytes: o + 1000 G + L + o.
        let m = l.message(&Expr::constant(1001.0)).eval_at(&env).unwrap();
        assert!(close(m, 5e-6 + 2e-6 + 1e-6));
        // Short messages are limited by g, long ones by o + (n-1) G.
        let short = l
            .injection_interval(&Expr::constant(1.0))
            .eval_at(&env)
            .unwrap();
        assert!(close(short, 4e-6));
        let long = l
            .injection_interval(&Expr::constant(10_001.0))
            .eval_at(&env)
            .unwrap();
        assert!(close(long, 1e-6 + 1e-5));
        // Three back-to-back sends of 10001 bytes: two intervals, then one message.
        let s = l
            .sequential_sends(&Expr::constant(3.0), &Expr::constant(10_001.0))
            .eval_at(&env)
            .unwrap();
        assert!(close(s, 2.0 * 1.1e-5 + (7e-6 + 1e-5)));
        // startup + n·per_byte reproduces the message time.
        let n = 4096.0;
        let split = l
            .linear(&Expr::one(), &Expr::constant(n))
            .eval_at(&env)
            .unwrap();
        let direct = l.message(&Expr::constant(n)).eval_at(&env).unwrap();
        assert!(close(split, direct));
        // An empty message is L + 2o.
        let e = l.empty_message().eval_at(&env).unwrap();
        assert!(close(e, 7e-6));
    }

    #[test]
    fn parameters_stay_symbolic() {
        let t = PointToPoint::loggp().message(&Expr::param("n"));
        let params: Vec<String> = t.params().into_iter().collect();
        assert_eq!(params, ["G", "L", "n", "o"]);
        // Printed models read back to the same model.
        let back = crate::model::parse_model(&t.to_string()).unwrap();
        assert_eq!(back, t);
    }
}
