//! The divide-and-conquer paper: the timing model of hypercube divide and conquer (HDC) over `P` processes.
//!
//! The skeleton splits the problem `log2 P` times; at level `j` every process divides a
//! problem of size `S/2^j`, exchanges `K_j` words with its partner across dimension `j`
//! of the hypercube and combines; after the last division each process solves a problem
//! of size `S/P` sequentially. All processes work on equal shares, so the "maximum over
//! processors" of the seed is the value of one process:
//!
//! ```text
//! T(S) = Σ_{j=0}^{log2 P − 1} [ Div(S/2^j) + Comb(S/2^j) + Ex(K_j) ] + Seq(S/P),
//! Ex(K) = 2·(l + K·g)
//! ```
//!
//! Block models are ordinary [`Expr`]s in their own parameters — typically fitted from
//! block traces — and only the parameters named as *divided* shrink with the level (in
//! the paper's connected components, the edge count `M` halves while the node count `N`
//! does not: every level combines a root vector of all `N` nodes). The level index is the
//! free parameter `j` of the exchange model, so `K_j` may depend on it.

use crate::comm::exchange;
use crate::model::Expr;

/// The level index bound in the sum (the exchange model may mention it).
pub const LEVEL: &str = "j";

/// Why an HDC model cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DcError {
    #[error("the hypercube needs a power-of-two process count, got {0}")]
    NotPowerOfTwo(String),
    #[error("`{0}` is used as the level index `j` of the recursion; rename the parameter")]
    LevelCapture(String),
}

/// The blocks of a hypercube divide and conquer.
#[derive(Clone, Debug, PartialEq)]
pub struct Hypercube {
    /// `P`, a power of two (a constant, or a parameter assumed to be one).
    pub procs: Expr,
    /// Parameters that shrink with the level (`x → x/2^j`) and on the leaves (`x → x/P`).
    pub divided: Vec<String>,
    pub divide: Expr,
    pub combine: Expr,
    pub leaf: Expr,
    /// `Ex(K_j)`, may mention the level `j`.
    pub exchange: Expr,
}

impl Hypercube {
    /// The whole-program model.
    ///
    /// ```
    /// use perfcompose_core::model::{parse_model, Expr};
    /// use perfcompose_core::skeleton::Hypercube;
    /// let hdc = Hypercube {
    ///     procs: Expr::constant(4.0),
    ///     divided: vec!["x".into()],
    ///     divide: parse_model("x").unwrap(),
    ///     combine: parse_model("2 * x").unwrap(),
    ///     leaf: parse_model("x^2").unwrap(),
    ///     exchange: parse_model("10").unwrap(),
    /// };
    /// // Levels 0 and 1: 3x + 10 and 1.5x + 10; leaves (x/4)^2.
    /// assert_eq!(hdc.model().unwrap().to_string(), "20 + 4.5 * x + 0.0625 * x^2");
    /// ```
    pub fn model(&self) -> Result<Expr, DcError> {
        if let Some(p) = self.procs.as_constant() {
            let ok = p >= 1.0 && p.fract() == 0.0 && (p as u64).is_power_of_two();
            if !ok {
                return Err(DcError::NotPowerOfTwo(crate::model::format_number(p)));
            }
        }
        // Only the exchange may use the level index; anywhere else a parameter called
        // `j` would silently be captured by the sum.
        if self.divided.iter().any(|d| d == LEVEL) {
            return Err(DcError::LevelCapture(format!(
                "{LEVEL} (a divided parameter)"
            )));
        }
        for (what, e) in [
            ("divide", &self.divide),
            ("combine", &self.combine),
            ("leaf", &self.leaf),
        ] {
            if e.mentions(LEVEL) {
                return Err(DcError::LevelCapture(format!("{LEVEL} (in {what})")));
            }
        }
        let level = Expr::param(LEVEL);
        let two_j = Expr::pow_expr(Expr::constant(2.0), level);
        let shrink = |e: &Expr, by: &Expr| {
            self.divided.iter().fold(e.clone(), |acc, x| {
                acc.subst(x, &Expr::div(Expr::param(x), by.clone()))
            })
        };
        let body = Expr::sum_of(vec![
            shrink(&self.divide, &two_j),
            shrink(&self.combine, &two_j),
            self.exchange.clone(),
        ]);
        let levels = Expr::log2(self.procs.clone());
        let recursion = Expr::sum_over(LEVEL, Expr::zero(), Expr::sub(levels, Expr::one()), body);
        Ok(Expr::add(recursion, shrink(&self.leaf, &self.procs)))
    }
}

/// The divide-and-conquer paper's exchange with the default parameter names: `2·(l + K·g)`.
pub fn exchange_words(k: &Expr) -> Expr {
    exchange(k, &Expr::param("l"), &Expr::param("g"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;

    fn m(s: &str) -> Expr {
        parse_model(s).unwrap()
    }

    #[test]
    fn expands_levels_for_a_constant_process_count() {
        let hdc = Hypercube {
            procs: Expr::constant(8.0),
            divided: vec!["M".into()],
            divide: m("a + b * M"),
            combine: m("c + d * N"),
            leaf: m("e * N + f * M"),
            exchange: exchange_words(&m("N")),
        };
        let got = hdc.model().unwrap();
        // Three levels: Div(M) + Div(M/2) + Div(M/4), Comb(N) three times, Ex three
        // times, leaves on M/8.
        let want = m("3*a + 1.75*b*M + 3*c + 3*d*N + 6*l + 6*N*g + e*N + 0.125*f*M");
        assert_eq!(got, want);
    }

    #[test]
    fn symbolic_process_count_keeps_the_sum_and_agrees_numerically() {
        let mut hdc = Hypercube {
            procs: Expr::param("P"),
            divided: vec!["x".into()],
            divide: m("x"),
            combine: m("x * log2(x)"),
            leaf: m("x^2"),
            exchange: m("2 * (l + x / 2^j * g)"),
        };
        let symbolic = hdc.model().unwrap();
        assert!(
            symbolic.to_string().contains("sum(j, 0, -1 + log2(P)"),
            "{symbolic}"
        );
        for p in [1.0, 2.0, 4.0, 16.0, 64.0] {
            hdc.procs = Expr::constant(p);
            let numeric = hdc.model().unwrap();
            let env = [("P", p), ("x", 1e6), ("l", 1e-4), ("g", 1e-8)];
            let a = symbolic.eval_at(&env).unwrap();
            let b = numeric.eval_at(&env).unwrap();
            assert!((a - b).abs() <= 1e-12 * a.abs(), "P = {p}: {a} vs {b}");
        }
    }

    #[test]
    fn rejects_non_power_of_two_and_level_capture() {
        let mut hdc = Hypercube {
            procs: Expr::constant(6.0),
            divided: vec!["x".into()],
            divide: m("x"),
            combine: m("x"),
            leaf: m("x"),
            exchange: m("1"),
        };
        assert_eq!(hdc.model(), Err(DcError::NotPowerOfTwo("6".into())));
        hdc.procs = Expr::constant(4.0);
        hdc.divide = m("j * x");
        assert!(matches!(hdc.model(), Err(DcError::LevelCapture(_))));
    }
}
